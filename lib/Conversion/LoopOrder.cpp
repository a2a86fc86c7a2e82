//===- LoopOrder.cpp - Reordering the loops of linalg ops -----------------===//

#include "soap/Conversion/LoopOrder.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

void mlir::soap::reorderLinalgLoops(
    Operation *root,
    llvm::function_ref<SmallVector<unsigned>(linalg::LinalgOp)> desiredOrder) {
  SmallVector<std::pair<linalg::LinalgOp, SmallVector<unsigned>>> ops;
  root->walk([&](linalg::LinalgOp op) {
    SmallVector<unsigned> order = desiredOrder(op);
    if (!order.empty())
      ops.emplace_back(op, std::move(order));
  });
  IRRewriter rewriter(root->getContext());
  for (auto &[op, order] : ops) {
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(*op);
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        continue;
      generic = *generalized;
    }
    (void)linalg::interchangeGenericOp(rewriter, generic, order);
  }
}
