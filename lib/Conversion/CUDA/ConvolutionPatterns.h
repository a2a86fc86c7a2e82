//===- ConvolutionPatterns.h - Convolutions cuDNN computes ----*- C++ -*-===//
//
// Which linalg ops soap-cuda-library-calls hands to cuDNN as convolutions,
// read off their indexing maps, whatever the layout: a named convolution
// (NCHW or NHWC, depthwise, grouped) as a forward convolution, and the
// filter gradient soap-training-step writes for any of them (a
// linalg.generic over the forward loops) as cuDNN's backward filter. cuDNN
// sees every operand as a strided 4-D view in its own dim order (N, C, H, W
// for X and Y; F, C / G, KH, KW for the filter), made of the operand's dims
// by memref.transpose, memref.collapse_shape (a group and its channels) and
// memref.expand_shape (unit dims).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_CUDA_CONVOLUTIONPATTERNS_H
#define SOAP_LIB_CONVERSION_CUDA_CONVOLUTIONPATTERNS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace mlir {
namespace soap {
namespace cuda {

/// For each of cuDNN's four dims of an operand, the operand's dims that
/// make it up, outermost first (none: a unit dim).
using CuDNNDims = std::array<SmallVector<int64_t, 2>, 4>;

/// A convolution cuDNN computes, in `groups` channel groups (filter f of F
/// reads channels [g C/G, (g+1) C/G), g = f / (F/G)):
///   forward:         Y[n, f, oh, ow] += X[n, c, oh sh + kh dh, ow sw + kw dw]
///                                       * W[f, c mod C/G, kh, kw]
///   filter gradient: dW[f, c mod C/G, kh, kw] += X[...] * dY[n, f, oh, ow]
/// summed over every loop not in the output. Loops of the op: n, g, c, f,
/// rows and columns of the output (oh, ow) and of the window (kh, kw), each
/// at most once (a depthwise convolution's channel is a group: no c or f).
struct CuDNNConvolution {
  bool filterGradient = false;
  /// The op's operands: `w` is dW and `y` is dY for a filter gradient.
  Value x, w, y;
  int64_t strides[2] = {1, 1}, dilations[2] = {1, 1};
  int64_t groups = 1;
  /// Whether a group loop exists (xDims[1], yDims[1] and wDims[0] then
  /// start with its dim, even when it has one group).
  bool grouped = false;
  int64_t kernel[2] = {1, 1}, out[2] = {1, 1};
  CuDNNDims xDims, wDims, yDims;
  /// X's rows and columns dims (xDims[2], xDims[3]).
  int64_t xRows() const { return xDims[2][0]; }
  int64_t xCols() const { return xDims[3][0]; }
};

/// `op` as a cuDNN convolution (static tensors or buffers, all of f32, all
/// of bf16 or all of f16; body
/// `acc + a * b`): a named convolution (not a pooling) as a forward one, a
/// linalg.generic as a filter gradient.
std::optional<CuDNNConvolution> matchCuDNNConvolution(linalg::LinalgOp op);

/// Whether cudnnView can view `buffer` (a memref with a strided layout):
/// each group's dims one run of memory.
bool hasCuDNNView(Value buffer, const CuDNNDims &dims);

/// The 4-D strided view cuDNN reads of `buffer` given `dims`; null if
/// there is none (hasCuDNNView).
Value cudnnView(OpBuilder &b, Location loc, Value buffer,
                const CuDNNDims &dims);

} // namespace cuda
} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_CUDA_CONVOLUTIONPATTERNS_H
