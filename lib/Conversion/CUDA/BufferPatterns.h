//===- BufferPatterns.h - Buffer-level patterns of the CUDA lowering -----===//
//
// What soap-cuda-library-calls recognises on bufferized code before it
// makes library calls: zero-padded buffers (tensor.pad bufferized), leading
// views, zero fills, and whether a buffer
// keeps its contents between two ops; and which ops become library calls
// (asked on tensors too, by soap-cuda-split-reductions).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_CUDA_BUFFERPATTERNS_H
#define SOAP_LIB_CONVERSION_CUDA_BUFFERPATTERNS_H

#include "../ConvolutionPatterns.h"
#include "../LibraryCalls.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir {
namespace soap {
namespace cuda {

/// The suffix of libsoaprt's cuDNN calls for elements of type `t`
/// (soaprt_cuda_conv2d_<suffix>): "f32", "bf16" or "f16"; none for others.
std::optional<StringRef> libraryFloatSuffix(Type t);

/// Whether `v` is a statically shaped memref of f32, bf16 or f16
/// (libraryFloatSuffix).
bool isLibraryFloatBuffer(Value v);

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

/// Which of libsoaprt's matmuls (soaprt_cuda_matmul_<variant>) multiplies
/// A and B of element types `a` and `b` into C of `c`: "f32" (all f32),
/// "bf16" / "f16" (all 16-bit: cuBLAS accumulates in fp32 and rounds C
/// once, where the op's own arithmetic would round every partial sum), or
/// "bf16_f32" / "f16_f32" (16-bit A and B, f32 C: mixed precision, the
/// products exact in fp32). None for other types.
std::optional<std::string> libraryMatmulVariant(Type a, Type b, Type c);

/// Which input of `op` (0 or 1) is a bf16 or f16 operand of a contraction
/// with an f32 one into f32, the product and sum in f32 of the 16-bit one
/// extended (a mixed-precision layer's gradients in the training step: the
/// f32 cotangent times bf16 weights or inputs). Widened to an f32 copy
/// (exact), it is cuBLAS's f32 GEMM.
std::optional<int> widenedMatmulOperand(linalg::LinalgOp op);

/// The contraction dimensions of `op` if it is one cuBLAS computes (two
/// inputs, one M, N and K loop, at most one batch loop; tensors or buffers
/// of element types libraryMatmulVariant takes, or one operand to widen:
/// widenedMatmulOperand).
std::optional<linalg::ContractionDimensions>
matchLibraryContraction(linalg::LinalgOp op);

/// `op` as a convolution or filter gradient cuDNN computes
/// (matchLibraryConvolution, of f32, bf16 or f16: libraryFloatSuffix).
std::optional<LibraryConvolution> matchCuDNNConvolution(linalg::LinalgOp op);

/// Whether soap-cuda-library-calls makes `op` a cuBLAS or cuDNN call (a
/// contraction above, a convolution or a filter gradient:
/// matchCuDNNConvolution), so that no kernel is generated for it.
bool becomesLibraryCall(linalg::LinalgOp op);

/// Whether `op` is a reduction that generated kernels compute and
/// soap-cuda-split-reductions can split: at least one reduction loop, a
/// sum / max / min combiner per output (getReductionCombiners), every output
/// through one projected-permutation map, and no cuBLAS / cuDNN call.
bool isSplittableReduction(linalg::GenericOp op);

/// The bytes of a statically shaped memref of integers or floats (an i1
/// takes a byte); nullopt otherwise.
std::optional<int64_t> staticByteSize(MemRefType type);

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

} // namespace cuda
} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_CUDA_BUFFERPATTERNS_H
