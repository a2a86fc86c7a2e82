//===- LoopOrder.h - Reordering the loops of linalg ops ---------*- C++ -*-===//
//
// What soap-cpu-loop-order and soap-cuda-loop-order share: every linalg op
// for which `desiredOrder` returns a new loop order (empty: keep it) is
// generalized if needed and interchanged. The order of the arithmetic of
// each output element is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_CONVERSION_LOOPORDER_H
#define SOAP_CONVERSION_LOOPORDER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace soap {

void reorderLinalgLoops(
    Operation *root,
    llvm::function_ref<SmallVector<unsigned>(linalg::LinalgOp)> desiredOrder);

} // namespace soap
} // namespace mlir

#endif // SOAP_CONVERSION_LOOPORDER_H
