//===- Recompute.h - Activation recomputation in a training step -*- C++
//-*-===//
//
// Part of soap-training-step (TrainingStep.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_TRANSFORMS_RECOMPUTE_H
#define SOAP_LIB_TRANSFORMS_RECOMPUTE_H

#include "mlir/IR/Operation.h"

namespace mlir::soap {

/// Activation recomputation. `forward` lists the forward ops of a training
/// step, in order, in the same block as the backward ops after them. Every
/// result of a forward op marked `soap.recompute` (and none of whose
/// results the step returns: those stay alive anyway) that an op after
/// `forward` (but the block's terminator) reads is read from a copy of the
/// op instead, made right before the first such reader. The copy's operands
/// made by marked ops, and by fills and empty tensors of the forward pass
/// (a destination), are copies too, made first; the others are the
/// forward values (kept). So the forward values of marked ops die in the
/// forward pass, and the backward pass computes each again, one chain of
/// marked ops at a time, where it needs it. Copies carry
/// `soap.recomputed` instead of `soap.recompute` (CSE then keeps them
/// apart from the originals) and their original's `soap.name` with
/// ".recompute" appended. Returns the number of ops copied.
unsigned recomputeForBackward(ArrayRef<Operation *> forward);

} // namespace mlir::soap

#endif // SOAP_LIB_TRANSFORMS_RECOMPUTE_H
