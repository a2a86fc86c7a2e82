//===- StridedPlacement.cpp - Strided insertion from unit-stride ops ------===//

#include "StridedPlacement.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value soap::buildStridedPlacement(OpBuilder &b, Location loc, Value part,
                                  ArrayRef<int64_t> offsets,
                                  ArrayRef<int64_t> strides,
                                  RankedTensorType type, TypedAttr padValue) {
  auto partType = cast<RankedTensorType>(part.getType());
  Type elem = partType.getElementType();
  int64_t rank = partType.getRank();
  SmallVector<int64_t> shape(partType.getShape());
  Value pad;
  auto padBy = [&](Value source, ArrayRef<int64_t> low,
                   ArrayRef<int64_t> high) -> Value {
    if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
        llvm::all_of(high, [](int64_t v) { return v == 0; }))
      return source;
    if (!pad)
      pad = arith::ConstantOp::create(b, loc, padValue);
    auto sourceType = cast<RankedTensorType>(source.getType());
    SmallVector<int64_t> padded;
    SmallVector<OpFoldResult> lo, hi;
    for (int64_t d = 0; d < sourceType.getRank(); ++d) {
      padded.push_back(sourceType.getDimSize(d) + low[d] + high[d]);
      lo.push_back(b.getIndexAttr(low[d]));
      hi.push_back(b.getIndexAttr(high[d]));
    }
    return tensor::PadOp::create(b, loc, RankedTensorType::get(padded, elem),
                                 source, lo, hi, pad)
        .getResult();
  };
  if (llvm::any_of(strides, [](int64_t s) { return s > 1; })) {
    // Each dim d of stride s becomes (d, 1), padded to (d, s), collapsed.
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> expandedShape, high;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t at = static_cast<int64_t>(expandedShape.size());
      expandedShape.push_back(shape[d]);
      high.push_back(0);
      if (strides[d] > 1) {
        groups.push_back({at, at + 1});
        expandedShape.push_back(1);
        high.push_back(strides[d] - 1);
      } else {
        groups.push_back({at});
      }
    }
    Value v = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(expandedShape, elem), part, groups);
    v = padBy(v, SmallVector<int64_t>(high.size(), 0), high);
    part = tensor::CollapseShapeOp::create(b, loc, v, groups);
    for (int64_t d = 0; d < rank; ++d)
      shape[d] *= strides[d];
  }
  // The spread part may run past the tensor (the stride after its last
  // element): only fill lies there.
  bool pastEnd = false;
  for (int64_t d = 0; d < rank; ++d)
    pastEnd |= offsets[d] + shape[d] > type.getDimSize(d);
  if (pastEnd) {
    SmallVector<OpFoldResult> zero(rank, b.getIndexAttr(0)), sizes,
        unit(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d) {
      shape[d] = std::min(shape[d], type.getDimSize(d) - offsets[d]);
      sizes.push_back(b.getIndexAttr(shape[d]));
    }
    part = tensor::ExtractSliceOp::create(b, loc, part, zero, sizes, unit);
  }
  SmallVector<int64_t> low(offsets), high;
  for (int64_t d = 0; d < rank; ++d)
    high.push_back(type.getDimSize(d) - offsets[d] - shape[d]);
  return padBy(part, low, high);
}
