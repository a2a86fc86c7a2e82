//===- AssignNames.cpp - Stable names for the layers of a model -----------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_ASSIGNNAMES
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {
struct AssignNamesPass
    : public mlir::soap::impl::AssignNamesBase<AssignNamesPass> {
  using AssignNamesBase::AssignNamesBase;

  void runOnOperation() override {
    FailureOr<func::FuncOp> func = findEntryFunction(getOperation(), entry);
    if (failed(func))
      return signalPassFailure();
    FailureOr<ExtractedOpGraph> graph = extractOpGraph(*func);
    if (failed(graph))
      return signalPassFailure();
    Builder builder(&getContext());
    for (auto [node, ops] : llvm::zip(graph->graph.nodes, graph->nodeOps))
      ops.front()->setAttr(SOAPDialect::kNameAttrName,
                           builder.getStringAttr(node.name));
  }
};
} // namespace
