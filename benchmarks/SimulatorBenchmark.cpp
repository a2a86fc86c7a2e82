// soap-sim-bench: full vs delta simulations per second (paper §5, issue 4).
//
//   soap-sim-bench [GRAPH.json ...] [google-benchmark flags]
//   SOAP_SIM_GRAPHS=a.json:b.json soap-sim-bench
//
// Each graph (op graph JSON, e.g. from `soap-opt --soap-import
// --soap-dump-graph=json`) is simulated on 16 devices (p100-4x4) and 64 devices
// (k80-16x4). Without graphs, synthetic ones are used (inception-like,
// RNN-like, MLP). "full" rebuilds the task graph and simulates from scratch;
// "delta" changes one random node's config (as the MCMC search does) and
// re-simulates; "full_dp" re-simulates the data-parallel strategy from scratch.
// Each simulation is counted in the items/s column; at the end the program
// prints the delta/full ratio per graph and machine. "reject_redo" and
// "reject_undo" are a rejected proposal from data parallelism: a random
// node's config changes and is taken back, by a second delta simulation
// of the old config (how the search did it before Simulator::undoDelta)
// or by undoDelta; items are proposals.
#include "soap/Simulator/GraphBuilder.h"
#include "soap/Simulator/OpGraphJSON.h"
#include "soap/Simulator/Simulator.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <random>

using namespace soap;

namespace {

struct Case {
  std::string name;
  OpGraph graph;
};

std::vector<std::unique_ptr<Case>> cases;
std::map<std::string, double> rates; // "graph/machine/full|delta" -> sims/s

/// Pre-drawn random config changes, so the timed loop only simulates.
struct Changes {
  std::vector<int32_t> nodes;
  std::vector<ParallelConfig> configs;
};

Changes drawChanges(const OpGraph &g, int32_t devices, size_t count) {
  Changes c;
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < count; ++i) {
    int32_t n = static_cast<int32_t>(rng() % g.nodes.size());
    c.nodes.push_back(n);
    c.configs.push_back(randomConfig(g.nodes[n], devices, rng));
  }
  return c;
}

enum class Mode { Full, Delta, FullDataParallel, RejectRedo, RejectUndo };

void run(benchmark::State &state, const Case *c, std::string machineName,
         Mode mode) {
  Machine machine = *getMachinePreset(machineName);
  CostModel costs(machine);
  Simulator sim(c->graph, machine, costs);
  int32_t D = machine.numDevices();
  Strategy s = dataParallelStrategy(c->graph, D);
  sim.simulateFull(s);
  Changes changes = drawChanges(c->graph, D, 4096);
  size_t i = 0;
  for (auto _ : state) {
    size_t k = i++ % changes.nodes.size();
    int32_t n = changes.nodes[k];
    switch (mode) {
    case Mode::FullDataParallel:
      benchmark::DoNotOptimize(sim.simulateFull(s));
      break;
    case Mode::Delta:
      benchmark::DoNotOptimize(sim.simulateDelta(n, changes.configs[k]));
      break;
    case Mode::Full:
      s.configs[n] = changes.configs[k];
      benchmark::DoNotOptimize(sim.simulateFull(s));
      break;
    case Mode::RejectRedo:
      benchmark::DoNotOptimize(sim.simulateDelta(n, changes.configs[k]));
      benchmark::DoNotOptimize(sim.simulateDelta(n, s.configs[n]));
      break;
    case Mode::RejectUndo:
      benchmark::DoNotOptimize(sim.simulateDelta(n, changes.configs[k]));
      benchmark::DoNotOptimize(sim.undoDelta());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["tasks"] = double(sim.report().numTasks);
  if (mode == Mode::Delta)
    state.counters["processed_per_delta"] =
        double(sim.deltaTasksProcessed()) / double(state.iterations());
  state.counters["sims_per_s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

class RateReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run &r : runs) {
      auto it = r.counters.find("sims_per_s");
      if (it != r.counters.end())
        rates[r.benchmark_name()] = it->second.value;
    }
  }
};

std::vector<std::string> graphPaths(int &argc, char **argv) {
  std::vector<std::string> paths;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a.ends_with(".json"))
      paths.push_back(a.str());
    else
      argv[out++] = argv[i];
  }
  argc = out;
  if (const char *env = std::getenv("SOAP_SIM_GRAPHS")) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(env).split(parts, ':', -1, false);
    for (llvm::StringRef p : parts)
      paths.push_back(p.str());
  }
  return paths;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> paths = graphPaths(argc, argv);
  for (const std::string &path : paths) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      llvm::errs() << "soap-sim-bench: cannot read " << path << "\n";
      return 1;
    }
    auto g = readOpGraphJSON((*buffer)->getBuffer());
    if (!g) {
      llvm::errs() << "soap-sim-bench: " << path << ": "
                   << llvm::toString(g.takeError()) << "\n";
      return 1;
    }
    std::string invalid = validateForTiling(*g);
    if (!invalid.empty()) {
      llvm::errs() << "soap-sim-bench: " << path << ": " << invalid << "\n";
      return 1;
    }
    cases.push_back(std::make_unique<Case>(Case{g->name, std::move(*g)}));
  }
  if (cases.empty()) {
    // ~100 nodes, like inception_v3 after grouping; an 80-node RNN; an MLP.
    cases.push_back(std::make_unique<Case>(
        Case{"inception_like", makeInceptionLikeGraph(64, 64, 16, 14)}));
    cases.push_back(std::make_unique<Case>(
        Case{"rnn_like", makeRNNLikeGraph(64, 512, 26)}));
    cases.push_back(std::make_unique<Case>(
        Case{"mlp", makeMLPGraph(64, {1024, 4096, 4096, 4096, 1024, 10})}));
  }
  for (const auto &c : cases)
    for (const char *machine : {"p100-4x4", "k80-16x4"})
      for (int mode = 0; mode < 5; ++mode) {
        const char *suffix[] = {"full", "delta", "full_dp", "reject_redo",
                                "reject_undo"};
        std::string name = c->name + "/" + machine + "/" + suffix[mode];
        benchmark::RegisterBenchmark(name.c_str(), run, c.get(),
                                     std::string(machine), Mode(mode))
            ->Unit(benchmark::kMicrosecond);
      }
  benchmark::Initialize(&argc, argv);
  RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  llvm::outs() << "\nnodes  graph / machine: full sims/s, delta sims/s, "
                  "delta/full, data-parallel full sims/s, rejected proposals/s "
                  "with a second delta / with undoDelta\n";
  for (const auto &c : cases)
    for (const char *machine : {"p100-4x4", "k80-16x4"}) {
      std::string base = c->name + "/" + machine + "/";
      auto f = rates.find(base + "full"), d = rates.find(base + "delta");
      auto dp = rates.find(base + "full_dp");
      if (f == rates.end() || d == rates.end())
        continue;
      llvm::outs() << c->graph.nodes.size() << "  " << c->name << " / "
                   << machine << ": " << llvm::format("%.0f", f->second)
                   << ", " << llvm::format("%.0f", d->second) << ", "
                   << llvm::format("%.1fx", d->second / f->second) << ", "
                   << llvm::format("%.0f",
                                   dp == rates.end() ? 0.0 : dp->second);
      auto redo = rates.find(base + "reject_redo"),
           undo = rates.find(base + "reject_undo");
      if (redo != rates.end() && undo != rates.end())
        llvm::outs() << ", " << llvm::format("%.0f", redo->second) << " / "
                     << llvm::format("%.0f", undo->second) << " ("
                     << llvm::format("%.2fx", undo->second / redo->second)
                     << ")";
      llvm::outs() << "\n";
    }
  benchmark::Shutdown();
  return 0;
}
