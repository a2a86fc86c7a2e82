//===- LibraryCalls.h - Calls of libsoaprt's library ops ------*- C++ -*-===//
//
// What the CPU (soap-cpu-library-calls: OpenBLAS) and CUDA
// (soap-cuda-library-calls: cuBLAS, cuDNN) lowerings share when they turn a
// linalg op on buffers into a call of libsoaprt: the call itself (views as
// unranked memrefs, scalars, flags, the op's name for error messages), the
// zero fill before it that the call does itself (beta = 0), and a GEMM's
// operands as strided (batch, rows, columns) views.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_LIBRARYCALLS_H
#define SOAP_LIB_CONVERSION_LIBRARYCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
namespace soap {

/// How a library call names `op` in the runtime's error messages: its kind,
/// its soap.name and its location ("linalg.matmul 'fc1' at model.mlir:3:5").
std::string runtimeOpName(Operation *op);

/// The names of a pass's library calls as pointers to global strings, one
/// global per distinct name (`<prefix>0`, `<prefix>1`, ...): the ranks'
/// copies of an op share it, so rank functions that differ in nothing else
/// stay alike (soap-merge-rank-functions).
class RuntimeOpNames {
public:
  explicit RuntimeOpNames(StringRef prefix) : prefix(prefix) {}
  /// A pointer to the string naming `op` (runtimeOpName), at `b`'s
  /// insertion point.
  Value get(OpBuilder &b, Operation *op);

private:
  std::string prefix;
  Operation *owner = nullptr;           // the module `globals` are in
  llvm::StringMap<std::string> globals; // name -> its global's symbol
};

/// A call of libsoaprt's `name` (its C interface) at `b`'s insertion point:
/// `views` cast to unranked memrefs, then `scalars` and `flags` as i64
/// constants, then `opName` (RuntimeOpNames::get). Declares `name` in the
/// module the first time.
func::CallOp createLibraryCall(OpBuilder &b, Location loc, ModuleOp module,
                               StringRef name, ArrayRef<Value> views,
                               ArrayRef<int64_t> scalars, int64_t flags,
                               Value opName);

/// `type` (strided) with its dimensions permuted (result dim r = source dim
/// perm[r]): what memref.transpose makes; null if it has no strides.
MemRefType permutedType(MemRefType type, ArrayRef<unsigned> perm);

/// The zero fill of `output` right before `op` (only side-effect-free ops
/// in between, or ops in `replaced`, which go with `op`), which the
/// library call can do itself (beta = 0).
linalg::FillOp zeroFillBefore(Operation *op, Value output,
                              ArrayRef<Operation *> replaced);

/// The contraction dimensions of `op` if it is one GEMM per batch: two
/// inputs and one output, a contraction (upstream's interface) with M, N
/// and K loops and any number of batch loops. Several loops of one kind
/// (attention's batch x heads, expanded by soap-split-merged-batch-loops)
/// are one GEMM dim where each operand's layout lets them be collapsed
/// (gemmView). Element types are the caller's to check.
std::optional<linalg::ContractionDimensions> gemmDims(linalg::LinalgOp op);

/// Contraction operand `operand`'s (0: A, 1: B, 2: C) (batch, M, K),
/// (batch, K, N) or (batch, M, N) view of `value`, indexed through `map`:
/// a memref.transpose to the GEMM dims' loops in that order (each dim's
/// loops in loop order; none where the map has that order), then a
/// memref.collapse_shape of each GEMM dim's loops where there are several;
/// null (and no op left behind) where the map or the layout does not allow
/// it.
Value gemmView(OpBuilder &b, Location loc, Value value, AffineMap map,
               const linalg::ContractionDimensions &dims, int operand);

/// Erases the view ops between `view` and `value` (gemmView's).
void eraseView(Value view, Value value);

/// The gemmViews of contraction `op`'s A, B and C, or, where one is not
/// possible, nothing (and no op left behind).
std::optional<std::array<Value, 3>>
buildMatmulViews(OpBuilder &b, linalg::LinalgOp op,
                 const linalg::ContractionDimensions &dims);

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_LIBRARYCALLS_H
