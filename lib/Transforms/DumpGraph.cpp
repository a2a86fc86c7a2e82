//===- DumpGraph.cpp - Print the op graph ---------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Simulator/OpGraphJSON.h"
#include "soap/Simulator/OpGraphPrinter.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_DUMPGRAPH
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {
struct DumpGraphPass : public mlir::soap::impl::DumpGraphBase<DumpGraphPass> {
  using DumpGraphBase::DumpGraphBase;

  void runOnOperation() override {
    if (json && dot) {
      getOperation().emitError("soap-dump-graph: choose one of json and dot");
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = findEntryFunction(getOperation(), entry);
    if (failed(func))
      return signalPassFailure();
    OpGraphExtractionOptions options;
    options.groupOps = group;
    FailureOr<ExtractedOpGraph> graph = extractOpGraph(*func, options);
    if (failed(graph))
      return signalPassFailure();
    if (json)
      llvm::outs() << ::soap::writeOpGraphJSON(graph->graph);
    else if (dot)
      llvm::outs() << ::soap::printOpGraphDot(graph->graph);
    else
      llvm::outs() << ::soap::printOpGraphText(graph->graph);
    llvm::outs().flush();
    markAllAnalysesPreserved();
  }
};
} // namespace
