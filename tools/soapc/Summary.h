//===- Summary.h - soapc's human summary and JSON report --------*- C++ -*-===//

#ifndef SOAP_TOOLS_SOAPC_SUMMARY_H
#define SOAP_TOOLS_SOAPC_SUMMARY_H

#include "soap/Simulator/Machine.h"
#include "soap/Simulator/OpGraph.h"
#include "soap/Simulator/Search.h"
#include "soap/Simulator/Simulator.h"
#include "soap/Simulator/Strategy.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace soapc {

struct SummaryInputs {
  std::string model;
  const soap::OpGraph &graph;
  const soap::Machine &machine;
  std::string strategyKind;
  const soap::Strategy &strategy;
  double predictedSeconds;
  double dataParallelSeconds;
  double searchSeconds;
  int64_t simulations;
  /// The best the search's chains found, before the polish (0: no search).
  double chainsSeconds;
  soap::SimulationReport report;
  /// The polish's seconds (in searchSeconds), and whether it stopped at the
  /// budget before it was done.
  double polishSeconds = 0;
  bool polishCut = false;
};

/// How a config partitions its node, e.g. "data parallel", "model parallel
/// (P)", "split reduction (R)", "S+P", "single device".
std::string describeConfig(const soap::Node &node,
                           const soap::ParallelConfig &config);

/// Predicted time, speedup over data parallelism, memory, and the strategy
/// as a short table of layer groups.
void printSummary(llvm::raw_ostream &os, const SummaryInputs &in);

/// The report JSON (DESIGN.md's contract).
llvm::json::Object buildReport(const SummaryInputs &in,
                               const soap::Simulator &sim);

/// One progress line on stderr (overwritten in place), and its end.
void printProgress(const soap::SearchProgress &progress);
void endProgress();

} // namespace soapc

#endif // SOAP_TOOLS_SOAPC_SUMMARY_H
