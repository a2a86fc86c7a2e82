//===- SpreadStridedInserts.cpp - Strided insertions as reshapes and pads -===//
//
// See Passes.td (soap-spread-strided-inserts).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "StridedPlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SPREADSTRIDEDINSERTS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

/// The value `v` holds everywhere: a fill's scalar or a splat constant's.
static TypedAttr splatValue(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    Attribute scalar;
    if (matchPattern(fill.getInputs()[0], m_Constant(&scalar)))
      return dyn_cast<TypedAttr>(scalar);
    return {};
  }
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return dyn_cast<TypedAttr>(dense.getSplatValue<Attribute>());
  return {};
}

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
          splatValue(op.getDest()))
        inserts.push_back(op);
    });
    for (tensor::InsertSliceOp op : inserts) {
      OpBuilder b(op);
      Value spread = soap::buildStridedPlacement(
          b, op.getLoc(), op.getSource(), op.getStaticOffsets(),
          op.getStaticStrides(), op.getType(), splatValue(op.getDest()));
      op.replaceAllUsesWith(spread);
      op.erase();
    }
  }
};
} // namespace
