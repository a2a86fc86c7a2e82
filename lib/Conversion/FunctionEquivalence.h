//===- FunctionEquivalence.h - Functions that compute the same --*- C++ -*-===//
//
// Generated code repeats itself: a data-parallel program's ranks run the
// same loop nests and kernels on their own buffers, and a network's repeated
// blocks (resnet101's layer3: 22 bottlenecks of one shape) give equal nests
// within a rank. Functions equal but for their symbol names and locations are
// found by a structural hash and compared with upstream's
// OperationEquivalence, so that the lowering compiles each once.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_FUNCTIONEQUIVALENCE_H
#define SOAP_LIB_CONVERSION_FUNCTIONEQUIVALENCE_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace soap {

/// Whether `a` and `b` compute the same: equal attributes but for their
/// symbol names (the function type among them), and equivalent bodies
/// (the same ops, attributes and types in the same order, locations aside).
bool areEquivalentFunctions(FunctionOpInterface a, FunctionOpInterface b);

/// Functions seen so far, by structure.
class EquivalentFunctions {
public:
  /// A function added before that is equivalent to `func`, or null.
  FunctionOpInterface find(FunctionOpInterface func) const;
  void add(FunctionOpInterface func);

private:
  llvm::DenseMap<llvm::hash_code, SmallVector<FunctionOpInterface, 1>> byHash;
};

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_FUNCTIONEQUIVALENCE_H
