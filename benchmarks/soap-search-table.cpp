// soap-search-table: the paper's evaluation (§8), in simulation (issue 5).
//
//   soap-search-table [--graphs=DIR] [--budget=SECONDS] [--quick]
//                     [--proposals=N]
//                     [--models=a,b,...] [--machines=p100-4x4,k80-16x4]
//                     [--seed=N] [--beta-scale=K] [--tied-moves=P]
//                     [--unit-moves=P] [--no-polish]
//                     [--threads=N] [--progress]
//
// For each model (DIR/MODEL.json, an op graph from `soap-opt
// --soap-dump-graph=json`) and machine, runs the MCMC search with a fixed
// budget (30 s by default; --quick: 3 s) and prints one row of a Markdown
// table: data-parallel, expert and found iteration time, speedup over data
// parallelism, search seconds and simulations per second. --proposals=N
// bounds the search by proposals instead (by time too only when --budget is
// also given): the same result on any machine, for comparing changes to the
// search. --tied-moves=P sets SearchOptions::tiedMoveProbability (0: the
// paper's one-node proposals only), --unit-moves=P
// SearchOptions::unitMoveProbability (0: no layer moves), --no-polish turns
// SearchOptions::polish off ("chains ms" is the best before the polish,
// "found ms" after it; "(recomputes N)": the found strategy recomputes N
// layers' activations, see SearchOptions::recompute). A model whose JSON
// is missing is reported and skipped. benchmarks/search-table.sh generates
// the graphs and runs this.
#include "soap/Simulator/OpGraphJSON.h"
#include "soap/Simulator/Search.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace soap;
using llvm::StringRef;

static std::vector<std::string> splitList(StringRef s) {
  llvm::SmallVector<StringRef, 8> parts;
  s.split(parts, ',', -1, false);
  std::vector<std::string> out;
  for (StringRef p : parts)
    out.push_back(p.trim().str());
  return out;
}

static int usage(const char *msg) {
  llvm::errs()
      << "soap-search-table: " << msg << "\n"
      << "usage: soap-search-table [--graphs=DIR] [--budget=SECONDS] "
         "[--quick] [--proposals=N] [--models=a,b] [--machines=a,b] "
         "[--seed=N] [--beta-scale=K] [--tied-moves=P] [--unit-moves=P] "
         "[--no-polish] "
         "[--threads=N] "
         "[--progress]\n";
  return 2;
}

static std::string ms(double seconds, bool fits) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.2f", seconds * 1e3);
  if (!fits)
    os << " (OOM)";
  return s;
}

int main(int argc, char **argv) {
  std::string dir = "/tmp/g";
  double budget = 30;
  bool quick = false, progress = false, budgetSet = false;
  uint64_t seed = 0;
  int64_t maxProposals = 0;
  double betaScale = SearchOptions().betaScale;
  double tiedMoves = SearchOptions().tiedMoveProbability;
  double unitMoves = SearchOptions().unitMoveProbability;
  bool polish = SearchOptions().polish;
  int32_t threads = 1;
  std::vector<std::string> models = {
      "alexnet", "inception_v3", "resnet101",  "mobilenet_v2",
      "rnntc",   "rnnlm",        "nmt",        "transformer"};
  std::vector<std::string> machines = {"p100-4x4", "k80-16x4"};
  for (int i = 1; i < argc; ++i) {
    StringRef a = argv[i];
    if (a.consume_front("--graphs=")) {
      dir = a.str();
    } else if (a.consume_front("--budget=")) {
      if (a.getAsDouble(budget) || budget <= 0)
        return usage("--budget needs a positive number of seconds");
      budgetSet = true;
    } else if (a.consume_front("--proposals=")) {
      if (a.getAsInteger(10, maxProposals) || maxProposals <= 0)
        return usage("--proposals needs a positive integer");
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--progress") {
      progress = true;
    } else if (a.consume_front("--models=")) {
      models = splitList(a);
    } else if (a.consume_front("--machines=")) {
      machines = splitList(a);
    } else if (a.consume_front("--seed=")) {
      if (a.getAsInteger(10, seed))
        return usage("--seed needs an integer");
    } else if (a.consume_front("--beta-scale=")) {
      if (a.getAsDouble(betaScale) || betaScale <= 0)
        return usage("--beta-scale needs a positive number");
    } else if (a.consume_front("--tied-moves=")) {
      if (a.getAsDouble(tiedMoves) || tiedMoves < 0 || tiedMoves > 1)
        return usage("--tied-moves needs a probability in [0, 1]");
    } else if (a.consume_front("--unit-moves=")) {
      if (a.getAsDouble(unitMoves) || unitMoves < 0 || unitMoves > 1)
        return usage("--unit-moves needs a probability in [0, 1]");
    } else if (a == "--no-polish") {
      polish = false;
    } else if (a.consume_front("--threads=")) {
      if (a.getAsInteger(10, threads) || threads < 1)
        return usage("--threads needs a positive integer");
    } else {
      return usage(("unknown argument '" + a + "'").str().c_str());
    }
  }
  if (quick && !budgetSet)
    budget = 3;
  if (maxProposals > 0 && !budgetSet && !quick)
    budget = 0; // proposals only

  llvm::outs() << "Search budget ";
  if (budget > 0)
    llvm::outs() << llvm::format("%g", budget) << " s";
  if (budget > 0 && maxProposals > 0)
    llvm::outs() << " or ";
  if (maxProposals > 0)
    llvm::outs() << maxProposals << " proposals";
  llvm::outs() << " per model and machine, seed " << seed << ", beta scale "
               << llvm::format("%g", betaScale) << ", tied moves "
               << llvm::format("%g", tiedMoves) << ", unit moves "
               << llvm::format("%g", unitMoves) << ", polish "
               << (polish ? "on" : "off") << ", " << threads
               << " thread(s).\n\n"
               << "| model | machine | devices | data parallel ms | expert ms "
                  "| chains ms | found ms | speedup vs DP | search s "
                  "| simulations/s |\n"
               << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  llvm::outs().flush();
  int failures = 0;
  for (const std::string &name : models) {
    std::string path = dir + "/" + name + ".json";
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf) {
      llvm::errs() << "soap-search-table: cannot read " << path << ": "
                   << buf.getError().message() << " (skipped)\n";
      ++failures;
      continue;
    }
    auto graph = readOpGraphJSON((*buf)->getBuffer());
    if (!graph) {
      llvm::errs() << "soap-search-table: " << path << ": "
                   << llvm::toString(graph.takeError()) << " (skipped)\n";
      ++failures;
      continue;
    }
    for (const std::string &mname : machines) {
      auto machine = getMachinePreset(mname);
      if (!machine) {
        llvm::errs() << "soap-search-table: "
                     << llvm::toString(machine.takeError()) << "\n";
        return 2;
      }
      CostModel costs(*machine);
      SearchOptions o;
      o.budgetSeconds = budget;
      o.maxProposals = maxProposals;
      o.seed = seed;
      o.betaScale = betaScale;
      o.tiedMoveProbability = tiedMoves;
      o.unitMoveProbability = unitMoves;
      o.polish = polish;
      o.threads = threads;
      o.quiet = !progress;
      o.progress = [&](const SearchProgress &p) {
        llvm::errs() << llvm::format(
            "  %s/%s: %.1f s, %lld proposals (%.0f/s), best %.3f ms, %.2fx\n",
            name.c_str(), mname.c_str(), p.elapsedSeconds,
            (long long)p.proposals, p.proposalsPerSecond, p.bestSeconds * 1e3,
            p.speedup);
      };
      SearchResult r = searchStrategy(*graph, *machine, costs, o);
      double speedup = r.bestSeconds > 0 ? r.dataParallelSeconds / r.bestSeconds
                                         : 0;
      double rate =
          r.searchSeconds > 0 ? double(r.simulations) / r.searchSeconds : 0;
      llvm::outs() << "| " << name << " | " << mname << " | "
                   << machine->numDevices() << " | "
                   << ms(r.dataParallelSeconds, r.dataParallelFits) << " | "
                   << ms(r.expertSeconds, r.expertFits) << " | "
                   << (r.fits ? ms(r.mcmcSeconds, true) : std::string("-"))
                   << " | " << ms(r.bestSeconds, r.fits)
                   << (r.recomputedNodes > 0
                           ? " (recomputes " +
                                 std::to_string(r.recomputedNodes) + ")"
                           : std::string())
                   << " | " << llvm::format("%.2fx", speedup) << " | "
                   << llvm::format("%.1f", r.searchSeconds) << " | "
                   << llvm::format("%.0f", rate) << " |\n";
      llvm::outs().flush();
    }
  }
  return failures ? 1 : 0;
}
