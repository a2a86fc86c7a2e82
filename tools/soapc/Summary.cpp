//===- Summary.cpp - soapc's human summary and JSON report ----------------===//

#include "Summary.h"

#include "soap/Simulator/Trace.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <map>
#include <set>

using namespace soapc;

std::string soapc::describeConfig(const soap::Node &node,
                                  const soap::ParallelConfig &config) {
  std::string split;
  std::set<char> kinds;
  for (size_t l = 0; l < config.degrees.size(); ++l)
    if (config.degrees[l] > 1)
      kinds.insert(soap::loopKindLetter(node.loopKinds[l]));
  if (kinds.empty())
    return "single device";
  if (kinds == std::set<char>{'S'})
    return "data parallel (S)";
  if (kinds == std::set<char>{'P'})
    return "model parallel (P)";
  if (kinds == std::set<char>{'R'})
    return "split reduction (R)";
  if (kinds == std::set<char>{'A'})
    return "attribute split (A)";
  for (char k : std::string("SAPR"))
    if (kinds.count(k))
      split += split.empty() ? std::string(1, k) : std::string("+") + k;
  return "hybrid (" + split + ")";
}

static std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return llvm::formatv("{0:f1} {1}", bytes, units[u]).str();
}

/// "devices 0-15", "devices 4-7", "devices 0,2,4,6", "device 3".
static std::string formatDevices(const std::vector<int32_t> &devices) {
  if (devices.size() == 1)
    return "device " + std::to_string(devices[0]);
  std::vector<int32_t> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  bool contiguous = true;
  for (size_t i = 1; i < sorted.size(); ++i)
    contiguous &= sorted[i] == sorted[i - 1] + 1;
  if (contiguous)
    return "devices " + std::to_string(sorted.front()) + "-" +
           std::to_string(sorted.back());
  std::string text = "devices ";
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i == 6) {
      text += ",...";
      break;
    }
    text += (i ? "," : "") + std::to_string(sorted[i]);
  }
  return text;
}

/// Data-parallel over predicted time; 1 for a program with no ops (both 0).
static double speedupOverDataParallel(const SummaryInputs &in) {
  return in.predictedSeconds > 0 ? in.dataParallelSeconds / in.predictedSeconds
                                 : 1.0;
}

/// A parameter count as "159.2M", "1.3k" or "40".
static std::string countText(int64_t n) {
  if (n >= 1000000)
    return llvm::formatv("{0:f1}M", n / 1e6).str();
  if (n >= 1000)
    return llvm::formatv("{0:f1}k", n / 1e3).str();
  return std::to_string(n);
}

void soapc::printSummary(llvm::raw_ostream &os, const SummaryInputs &in) {
  const soap::Machine &m = in.machine;
  auto plural = [](int64_t n, llvm::StringRef what) {
    return std::to_string(n) + " " + what.str() + (n == 1 ? "" : "s");
  };
  os << "SOAP: " << in.model << " ("
     << plural(int64_t(in.graph.nodes.size()), "layer") << ", "
     << countText(in.graph.numParameters()) << " parameters) on " << m.name
     << " (" << m.numNodes << " x " << m.devicesPerNode << " " << m.device.name
     << ", " << plural(m.numDevices(), "device") << ")\n";
  os << "strategy: " << in.strategyKind;
  if (in.strategyKind == "search")
    os << llvm::formatv(" ({0:f1} s, {1} simulations)", in.searchSeconds,
                        in.simulations);
  if (in.strategyKind == "search" && in.chainsSeconds > in.predictedSeconds)
    os << llvm::formatv(", polished from {0:f3} ms", in.chainsSeconds * 1e3);
  if (in.strategyKind == "search" && in.polishCut)
    os << " (the polish stopped at the budget)";
  os << "\n";
  double speedup = speedupOverDataParallel(in);
  os << llvm::formatv("predicted iteration time: {0:f3} ms   data parallel: "
                      "{1:f3} ms   speedup: {2:f2}x\n",
                      in.predictedSeconds * 1e3, in.dataParallelSeconds * 1e3,
                      speedup);
  os << "peak memory per device: " << formatBytes(in.report.peakMemoryBytes)
     << " of " << formatBytes(static_cast<double>(m.device.memoryBytes))
     << (in.report.overCapacity ? " (OVER CAPACITY)" : "")
     << "   communication: "
     << formatBytes(static_cast<double>(in.report.communicationBytes))
     << " per iteration\n";
  if (in.report.peakMemoryNode >= 0)
    os << "memory peaks on device " << in.report.peakMemoryDevice
       << " during the "
       << (in.report.peakMemoryInBackward ? "backward" : "forward")
       << " task of layer '" << in.graph.nodes[in.report.peakMemoryNode].name
       << "'\n";
  {
    // Activation recomputation (ParallelConfig::recompute).
    int recomputed = 0;
    int64_t bytes = 0;
    for (size_t n = 0; n < in.graph.nodes.size(); ++n) {
      if (!in.strategy.configs[n].recompute)
        continue;
      ++recomputed;
      for (const soap::Operand &out : in.graph.nodes[n].outputs)
        bytes += in.graph.tensors[out.tensor].bytes();
    }
    if (recomputed > 0)
      os << "recomputed in the backward pass: " << recomputed << " layer"
         << (recomputed == 1 ? "" : "s") << " ("
         << formatBytes(static_cast<double>(bytes))
         << " of outputs not kept, all devices together)\n";
  }

  // Layers grouped by how they are partitioned and where they run.
  struct Group {
    int count = 0;
    double flops = 0;
    std::string example;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  double totalFlops = 0;
  for (size_t n = 0; n < in.graph.nodes.size(); ++n) {
    const soap::Node &node = in.graph.nodes[n];
    const soap::ParallelConfig &config = in.strategy.configs[n];
    std::string how = describeConfig(node, config);
    std::string where = formatDevices(config.devices);
    Group &g = groups[{how, where}];
    if (g.count == 0) {
      std::string degrees;
      for (size_t l = 0; l < config.degrees.size(); ++l)
        if (config.degrees[l] > 1)
          degrees += (degrees.empty() ? "" : ",") +
                     std::string(1, soap::loopKindLetter(node.loopKinds[l])) +
                     "=" + std::to_string(config.degrees[l]);
      g.example = node.name + (degrees.empty() ? "" : " [" + degrees + "]");
    }
    ++g.count;
    g.flops += node.flops;
    totalFlops += node.flops;
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Group>> sorted(
      groups.begin(), groups.end());
  std::sort(sorted.begin(), sorted.end(), [](auto &a, auto &b) {
    if (a.second.flops != b.second.flops)
      return a.second.flops > b.second.flops;
    return a.first < b.first;
  });
  os << "\n"
     << llvm::formatv("  {0,-26} {1,-16} {2,6} {3,7}  {4}\n", "partitioning",
                      "placement", "layers", "FLOPs", "example");
  size_t shown = 0;
  for (auto &[key, g] : sorted) {
    if (shown++ == 12) {
      os << "  ... " << (sorted.size() - 12) << " more groups\n";
      break;
    }
    os << llvm::formatv(
        "  {0,-26} {1,-16} {2,6} {3,6:f1}%  {4}\n", key.first, key.second,
        g.count, totalFlops > 0 ? 100.0 * g.flops / totalFlops : 0.0,
        g.example);
  }
}

llvm::json::Object soapc::buildReport(const SummaryInputs &in,
                                      const soap::Simulator &sim) {
  llvm::json::Object report = soap::reportToJSON(sim);
  report["model"] = in.model;
  report["machine"] = in.machine.name;
  report["devices"] = in.machine.numDevices();
  report["strategy_kind"] = in.strategyKind;
  report["predicted_iteration_ms"] = in.predictedSeconds * 1e3;
  report["data_parallel_iteration_ms"] = in.dataParallelSeconds * 1e3;
  report["speedup_vs_data_parallel"] = speedupOverDataParallel(in);
  report["search_seconds"] = in.searchSeconds;
  report["simulations"] = in.simulations;
  if (in.strategyKind == "search") {
    report["search_chains_iteration_ms"] = in.chainsSeconds * 1e3;
    report["search_polish_seconds"] = in.polishSeconds;
    report["search_polish_cut"] = in.polishCut;
  }
  report["recomputed_layers"] = in.strategy.numRecomputed();
  report["parameters"] = in.graph.numParameters();
  llvm::json::Array ops;
  for (size_t n = 0; n < in.graph.nodes.size(); ++n) {
    const soap::Node &node = in.graph.nodes[n];
    const soap::ParallelConfig &config = in.strategy.configs[n];
    std::string loops;
    for (soap::LoopKind kind : node.loopKinds)
      loops.push_back(soap::loopKindLetter(kind));
    llvm::json::Array extents, degrees, devices;
    for (int64_t e : node.extents)
      extents.push_back(e);
    for (int32_t d : config.degrees)
      degrees.push_back(d);
    for (int32_t d : config.devices)
      devices.push_back(d);
    ops.push_back(llvm::json::Object{
        {"name", node.name},
        {"kind", node.kind},
        {"loops", loops},
        {"extents", std::move(extents)},
        {"degrees", std::move(degrees)},
        {"devices", std::move(devices)},
        {"partitioning", describeConfig(node, config)},
        {"recompute", config.recompute},
    });
  }
  report["ops"] = std::move(ops);
  return report;
}

static bool progressShown = false;
static double lastLoggedSeconds = 0;

void soapc::printProgress(const soap::SearchProgress &p) {
  // On a terminal one line, rewritten in place; in a log (a pipe, a file)
  // a line every 5 s. Only for searches longer than a second.
  if (p.elapsedSeconds < 1.0 && !progressShown)
    return;
  bool terminal = llvm::errs().is_displayed();
  if (!terminal && progressShown && p.elapsedSeconds < lastLoggedSeconds + 5)
    return;
  progressShown = true;
  lastLoggedSeconds = p.elapsedSeconds;
  llvm::errs() << llvm::formatv(
      "{5}search: {0,5:f1} s  {1,9} proposals  {2,7:f0} proposals/s  best "
      "{3:f3} ms  speedup {4:f2}x{6}",
      p.elapsedSeconds, p.proposals, p.proposalsPerSecond, p.bestSeconds * 1e3,
      p.speedup, terminal ? "\r" : "", terminal ? "   " : "\n");
}

void soapc::endProgress() {
  if (progressShown && llvm::errs().is_displayed())
    llvm::errs() << "\n";
  progressShown = false;
  lastLoggedSeconds = 0;
}
