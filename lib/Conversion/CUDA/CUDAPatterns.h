//===- CUDAPatterns.h - What the CUDA lowering's passes ask of ops -------===//
//
// Which ops become cuBLAS / cuDNN calls (asked on tensors too, by
// soap-cuda-split-reductions), the element types the libraries take, which
// reductions the generated kernels split, and buffer sizes. The buffer
// patterns the library-call lowerings share are in ../BufferPatterns.h.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_CUDA_CUDAPATTERNS_H
#define SOAP_LIB_CONVERSION_CUDA_CUDAPATTERNS_H

#include "../BufferPatterns.h"
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

} // namespace cuda
} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_CUDA_CUDAPATTERNS_H
