//===- NormalizationStatistics.h - Running statistics --------*- C++ -*-===//
//
// An inference-mode normalization (torch-mlir's batch norm of an eval-mode
// export) reads running statistics, not parameters: one linalg op whose
// body computes `(x - mean) * rsqrt(var + eps)` (or `/ sqrt(var + eps)`)
// then scales and shifts. A training step leaves the statistics alone, as
// PyTorch's optimizer leaves a module's buffers (soap-lift-constant-
// parameters keeps them constants), and trains the scale and the shift.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_ANALYSIS_NORMALIZATIONSTATISTICS_H
#define SOAP_ANALYSIS_NORMALIZATIONSTATISTICS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace soap {

/// The input operands of `op` whose body reads them only as the `mean` and
/// the `var` of `(x - mean) * rsqrt(var + eps)` or `(x - mean) / sqrt(var +
/// eps)`: `x` computed from some other block argument, `eps` from none
/// (float casts looked through). Mean first, then variance, per
/// normalization in the body; empty when there is none.
llvm::SmallVector<OpOperand *, 2>
getNormalizationStatistics(linalg::LinalgOp op);

/// Those reads of every linalg op nested in `root`.
llvm::DenseSet<OpOperand *> getNormalizationStatisticReads(Operation *root);

} // namespace soap
} // namespace mlir

#endif // SOAP_ANALYSIS_NORMALIZATIONSTATISTICS_H
