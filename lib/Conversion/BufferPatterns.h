//===- BufferPatterns.h - Patterns the library-call lowerings share -*- C++
//-*-===//
//
// What soap-cpu-library-calls and soap-cuda-library-calls recognise on
// bufferized code before they make library calls: zero-padded buffers
// (tensor.pad bufferized), leading views, zero fills, and whether a buffer
// keeps its contents between two ops.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_BUFFERPATTERNS_H
#define SOAP_LIB_CONVERSION_BUFFERPATTERNS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir {
namespace soap {

/// The buffer a chain of views (and memref.casts and memref.transposes)
/// starts from.
Value rootBuffer(Value v);

/// Whether `root` is an argument of its function marked `llvm.noalias`
/// (soap-cpu-entry marks the rank functions': each gets its own buffer),
/// so that it shares memory with no other argument so marked.
bool isNoAliasArgument(Value root);

/// Whether `op` sets all of `target` to +0.0: linalg.fill, or linalg.map
/// without inputs yielding the constant (how tensor.pad bufferizes).
bool isZeroFill(Operation *op, Value target);

/// A leading view (offsets 0, unit strides) with one user, or null.
memref::SubViewOp leadingView(Operation *op);

/// The buffer `x` is, or is a leading view of, if an alloc.
memref::AllocOp allocOf(Value x);

/// A zero-padded buffer: alloc, zero fill, copy of the source into an
/// interior view (what tensor.pad bufferizes to), read only by ops that
/// `isReader(op, value read)` accepts, directly or through a leading view
/// each; the fill, the copy and every reader in the alloc's block, in that
/// order. `ops`: what goes when no reader reads it any more, users first.
/// (Whether the source still holds its values later is for the caller to
/// check.)
struct ZeroPadded {
  Value source;
  memref::SubViewOp interior;
  SmallVector<Operation *> readers; // in block order
  SmallVector<Operation *> ops;
};
std::optional<ZeroPadded>
matchZeroPadded(memref::AllocOp alloc,
                function_ref<bool(Operation *, Value)> isReader);

/// The writes of the library calls made so far, for asking whether a buffer
/// keeps its contents between two ops.
class BufferWrites {
public:
  /// `call` writes `buffer` (and reads only its other operands).
  void recordCall(Operation *call, Value buffer) { calls[call] = buffer; }

  /// Whether nothing between `from` and `to` (same block, `from` first)
  /// may write or free `buffer` (compared by root buffer; distinct roots
  /// are distinct memory). Unknown effects count as writes; libsoaprt's
  /// all-reduce and transfer calls write their first operand. With `frees`,
  /// deallocations of the buffer are collected there instead (for the
  /// caller to move past `to`).
  bool unchangedBetween(Value buffer, Operation *from, Operation *to,
                        SmallVectorImpl<Operation *> *frees = nullptr) const;

private:
  llvm::DenseMap<Operation *, Value> calls;
};

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_BUFFERPATTERNS_H
