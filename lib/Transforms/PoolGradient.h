//===- PoolGradient.h - Input gradient of a 2-D pooling ---------*- C++ -*-===//
//
// Part of soap-training-step (TrainingStep.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_TRANSFORMS_POOLGRADIENT_H
#define SOAP_LIB_TRANSFORMS_POOLGRADIENT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::soap {

/// The input gradient of `pool` (linalg.pooling_nchw_max, _nchw_sum,
/// _nhwc_max or _nhwc_sum, unit dilations) given `grad`, the gradient of its
/// result.
struct PoolGradient {
  /// The gradient, the pooling input's type.
  Value value;
  /// The op that computes it: a linalg.generic over the loops
  /// (n, c, qh, [rh], qw, [rw], eh, ew) (NHWC: (n, qh, [rh], qw, [rw], c, eh,
  /// ew)), input row h = qh * SH + rh, column
  /// w = qw * SW + rw (rh / rw only where the stride is not 1), and eh / ew
  /// over the windows that hold them.
  linalg::GenericOp op;
  /// For each of its loops, the pooling's loop it corresponds to (-1: none).
  SmallVector<int32_t> forwardLoops;
};

/// Each input element sums the gradient of the windows that hold it (of a
/// max pooling: of the windows whose maximum it is). With stride S and window
/// K that is at most ceil(K / S) windows per dimension, or the O windows there
/// are when fewer: the generic visits only those (masked where a window of
/// them stops short), so a strided pooling needs no dilated copy of `grad`
/// and a global one reads one value per element.
PoolGradient buildPoolInputGradient(OpBuilder &b, linalg::LinalgOp pool,
                                    bool isMax, Value grad);

} // namespace mlir::soap

#endif // SOAP_LIB_TRANSFORMS_POOLGRADIENT_H
