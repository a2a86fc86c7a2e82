//===- ConvolutionPatterns.h - Convolutions a library computes -*- C++ -*-===//
//
// Which linalg ops the library-call lowerings hand to a convolution library
// (soap-cuda-library-calls: cuDNN; soap-cpu-library-calls: libsoaprt_blas's
// im2col + OpenBLAS), read off their indexing maps, whatever the layout: a
// named convolution (NCHW or NHWC, depthwise, grouped) as a forward
// convolution, and the filter gradient soap-training-step writes for any of
// them (a linalg.generic over the forward loops) as a backward filter. The
// library sees every operand as a strided 4-D view in cuDNN's dim order
// (N, C, H, W for X and Y; F, C / G, KH, KW for the filter), made of the
// operand's dims by memref.transpose, memref.collapse_shape (a group and its
// channels) and memref.expand_shape (unit dims).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_CONVOLUTIONPATTERNS_H
#define SOAP_LIB_CONVERSION_CONVOLUTIONPATTERNS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>

namespace mlir {
namespace soap {
/// For each of the four dims (cuDNN's order) of an operand, the operand's dims
/// that make it up, outermost first (none: a unit dim).
using ConvolutionDims = std::array<SmallVector<int64_t, 2>, 4>;

/// A convolution a library computes, in `groups` channel groups (filter f of F
/// reads channels [g C/G, (g+1) C/G), g = f / (F/G)):
///   forward:         Y[n, f, oh, ow] += X[n, c, oh sh + kh dh, ow sw + kw dw]
///                                       * W[f, c mod C/G, kh, kw]
///   filter gradient: dW[f, c mod C/G, kh, kw] += X[...] * dY[n, f, oh, ow]
/// summed over every loop not in the output. Loops of the op: n, g, c, f,
/// rows and columns of the output (oh, ow) and of the window (kh, kw), each
/// at most once (a depthwise convolution's channel is a group: no c or f).
struct LibraryConvolution {
  bool filterGradient = false;
  /// The op's operands: `w` is dW and `y` is dY for a filter gradient.
  Value x, w, y;
  int64_t strides[2] = {1, 1}, dilations[2] = {1, 1};
  int64_t groups = 1;
  /// Whether a group loop exists (xDims[1], yDims[1] and wDims[0] then
  /// start with its dim, even when it has one group).
  bool grouped = false;
  int64_t kernel[2] = {1, 1}, out[2] = {1, 1};
  ConvolutionDims xDims, wDims, yDims;
  /// X's rows and columns dims (xDims[2], xDims[3]).
  int64_t xRows() const { return xDims[2][0]; }
  int64_t xCols() const { return xDims[3][0]; }
  /// The window's span along rows (d = 0) or columns (1): (K - 1) D + 1.
  int64_t span(int d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  /// How many windows fit along rows (d = 0) or columns (1) of `padded`
  /// elements (padding included) at `stride` (>= 1): 0 if none.
  int64_t windows(int d, int64_t padded, int64_t stride) const {
    return padded < span(d) ? 0 : (padded - span(d)) / stride + 1;
  }
};

/// `op` as a library convolution (static tensors or buffers, all of one
/// float type, which the caller checks is one its library has; body
/// `acc + a * b`): a named convolution (not a pooling) as a forward one, a
/// linalg.generic as a filter gradient.
std::optional<LibraryConvolution> matchLibraryConvolution(linalg::LinalgOp op);

/// Whether convolutionView can view `buffer` (a memref with a strided layout):
/// each group's dims one run of memory.
bool hasConvolutionView(Value buffer, const ConvolutionDims &dims);

/// The 4-D strided view the library reads of `buffer` given `dims`; null if
/// there is none (hasConvolutionView).
Value convolutionView(OpBuilder &b, Location loc, Value buffer,
                      const ConvolutionDims &dims);

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_CONVOLUTIONPATTERNS_H
