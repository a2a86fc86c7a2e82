//===- Simulate.cpp - Predict the iteration time of a strategy ------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Simulator/CostModel.h"
#include "soap/Simulator/Simulator.h"
#include "soap/Transforms/StrategyAttributes.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SIMULATE
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {
struct SimulatePass : public mlir::soap::impl::SimulateBase<SimulatePass> {
  using SimulateBase::SimulateBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ::soap::Machine target;
    if (!machine.empty()) {
      llvm::Expected<::soap::Machine> loaded = ::soap::loadMachine(machine);
      if (!loaded) {
        module.emitError() << llvm::toString(loaded.takeError());
        return signalPassFailure();
      }
      target = *loaded;
    } else if (auto attr = module->getAttrOfType<MachineAttr>(
                   SOAPDialect::kMachineAttrName)) {
      if (attr.getNodes() * attr.getDevicesPerNode() >
          ::soap::Machine::kMaxDevices) {
        module.emitError() << "the 'soap.machine' attribute has "
                           << attr.getNodes() * attr.getDevicesPerNode()
                           << " devices; at most "
                           << ::soap::Machine::kMaxDevices << " are supported";
        return signalPassFailure();
      }
      target = machineFromAttr(attr);
      target.name = "soap.machine";
      if (std::string invalid = target.validate(); !invalid.empty()) {
        module.emitError() << "the 'soap.machine' attribute: " << invalid;
        return signalPassFailure();
      }
    } else {
      module.emitError() << "soap-simulate needs a machine: give "
                            "machine=PRESET|FILE.json or a 'soap.machine' "
                            "attribute on the module";
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = findEntryFunction(module, entry);
    if (failed(func))
      return signalPassFailure();
    OpGraphExtractionOptions options;
    options.remarkReplicated = false;
    FailureOr<ExtractedOpGraph> graph = extractOpGraph(*func, options);
    if (failed(graph))
      return signalPassFailure();

    ::soap::Strategy chosen;
    if (strategy == "annotated") {
      FailureOr<::soap::Strategy> read = readStrategyFromIR(*graph);
      if (failed(read))
        return signalPassFailure();
      chosen = std::move(*read);
    } else if (strategy == "data-parallel") {
      chosen = ::soap::dataParallelStrategy(graph->graph, target.numDevices());
    } else if (strategy == "single") {
      chosen = ::soap::singleDeviceStrategy(graph->graph);
    } else {
      module.emitError() << "unknown strategy '" << strategy
                         << "' (expected annotated, data-parallel or single)";
      return signalPassFailure();
    }
    std::string invalid = ::soap::validateStrategy(graph->graph, chosen,
                                                   target.numDevices());
    if (!invalid.empty()) {
      module.emitError() << "invalid strategy: " << invalid;
      return signalPassFailure();
    }
    ::soap::CostModel costs(target);
    ::soap::Simulator sim(graph->graph, target, costs);
    double seconds = sim.simulateFull(chosen);
    ::soap::SimulationReport report = sim.report();
    llvm::raw_ostream &os = llvm::outs();
    os << "soap-simulate: @" << graph->graph.name << ", "
       << graph->graph.nodes.size() << " layers, machine " << target.name
       << " (" << target.numDevices() << " devices), strategy " << strategy
       << "\n";
    os << llvm::formatv("predicted iteration time: {0:f6} ms\n", seconds * 1e3);
    os << "communication bytes: " << report.communicationBytes << "\n";
    os << "peak memory bytes per device: " << report.peakMemoryBytes
       << (report.overCapacity ? " (over capacity)" : "") << "\n";
    os << "busy ms per device:";
    for (double busy : report.deviceBusySeconds)
      os << llvm::formatv(" {0:f3}", busy * 1e3);
    os << "\n";
    os.flush();
    markAllAnalysesPreserved();
  }
};
} // namespace
