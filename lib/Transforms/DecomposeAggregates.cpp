//===- DecomposeAggregates.cpp - Decompose aggregated linalg ops ----------===//
//
// linalg.softmax and the other ops of linalg::AggregatedOpInterface become
// the structured ops their decomposeOperation builds (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_DECOMPOSEAGGREGATES
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {
struct DecomposeAggregatesPass
    : public mlir::soap::impl::DecomposeAggregatesBase<
          DecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    for (linalg::AggregatedOpInterface op : aggregates) {
      OpBuilder builder(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(builder);
      if (failed(parts)) {
        op->emitError() << "'" << op->getName()
                        << "' cannot be decomposed into structured ops; "
                           "SOAP cannot partition it";
        return signalPassFailure();
      }
      op->replaceAllUsesWith(*parts);
      op->erase();
    }
  }
};
} // namespace
