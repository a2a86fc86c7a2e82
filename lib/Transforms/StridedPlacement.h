//===- StridedPlacement.h - Strided insertion from unit-stride ops -*- C++
//-*-===//
//
// A strided tensor.insert_slice into a splat tensor, built from ops SOAP
// partitions (reshapes and pads): used by soap-spread-strided-inserts and
// by soap-training-step (a strided slice's adjoint, a strided
// convolution's spread output gradient).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_TRANSFORMS_STRIDEDPLACEMENT_H
#define SOAP_LIB_TRANSFORMS_STRIDEDPLACEMENT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::soap {

/// A tensor of `type` that holds `padValue` everywhere except at
/// `offsets[d] + strides[d] * i` (i < part's size along d), which hold
/// `part`: `tensor.insert_slice part into splat(padValue)` with those
/// offsets and strides. Each dim of stride s > 1 is spread by an
/// expand_shape (n -> n x 1), a pad of its unit dim to s and a
/// collapse_shape (-> n * s), cut to what fits; one pad then places the
/// result at the offsets. Requires static shapes and an insertion that
/// fits in `type`.
Value buildStridedPlacement(OpBuilder &b, Location loc, Value part,
                            ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> strides, RankedTensorType type,
                            TypedAttr padValue);

} // namespace mlir::soap

#endif // SOAP_LIB_TRANSFORMS_STRIDEDPLACEMENT_H
