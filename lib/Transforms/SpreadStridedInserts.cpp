//===- SpreadStridedInserts.cpp - Strided insertions as reshapes and pads -===//
//
// See Passes.td (soap-spread-strided-inserts).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "StridedPlacement.h"

#include "soap/Analysis/IterationSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SPREADSTRIDEDINSERTS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {
struct SpreadStridedInsertsPass
    : public mlir::soap::impl::SpreadStridedInsertsBase<
          SpreadStridedInsertsPass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation()->walk([&](tensor::InsertSliceOp op) {
      if (!op.hasUnitStride() && op.getSourceType().hasStaticShape() &&
          op.getType().hasStaticShape() &&
          op.getSourceType().getRank() == op.getType().getRank() &&
          !ShapedType::isDynamicShape(op.getStaticOffsets()) &&
          !ShapedType::isDynamicShape(op.getStaticStrides()) &&
          mlir::soap::getSplatValue(op.getDest()))
        inserts.push_back(op);
    });
    for (tensor::InsertSliceOp op : inserts) {
      OpBuilder b(op);
      Value spread = mlir::soap::buildStridedPlacement(
          b, op.getLoc(), op.getSource(), op.getStaticOffsets(),
          op.getStaticStrides(), op.getType(),
          mlir::soap::getSplatValue(op.getDest()));
      op.replaceAllUsesWith(spread);
      op.erase();
    }
  }
};
} // namespace
