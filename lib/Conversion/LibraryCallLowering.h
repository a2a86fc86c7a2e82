//===- LibraryCallLowering.h - What both library-call passes do -*- C++ -*-===//
//
// The part of soap-cpu-library-calls (OpenBLAS, libsoaprt_blas) and
// soap-cuda-library-calls (cuBLAS, cuDNN) that is the same: a library call
// in place of an op, its zero fill turned into the call's overwrite flag,
// the calls' writes recorded (BufferWrites) and erased ops remembered; and
// the lowering of convolutions, with the copies that only feed them:
//
//   - a convolution or filter gradient (ConvolutionPatterns.h) becomes the
//     library's forward or filter-gradient call on 4-D views;
//   - a zero-padded input (tensor.pad bufferized) read only by such ops
//     becomes the library's own padding in each of their calls;
//   - the input gradient soap-training-step writes (a stride-1 convolution
//     of the spread, zero-padded dY with the flipped filter) becomes the
//     library's input-gradient call on W and dY as they are, computing only
//     the part of dX anyone reads: no flipped filter, no spread or padded
//     copy, none of the products with the spread's zeros.
//
// Each pass says which convolutions its library computes, how its
// functions are named and what its flags are.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_LIBRARYCALLLOWERING_H
#define SOAP_LIB_CONVERSION_LIBRARYCALLLOWERING_H

#include "BufferPatterns.h"
#include "ConvolutionPatterns.h"
#include "LibraryCalls.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <string>

namespace mlir {
namespace soap {

/// Which of the library's convolution calls: Y += conv(X, W), dW += the
/// filter gradient (X, dY), dX += the input gradient (W, dY).
enum class ConvolutionCall { Forward, FilterGradient, InputGradient };

class LibraryCallLowering {
public:
  /// Runtime op names are globals `<namePrefix>0`, `<namePrefix>1`, ...;
  /// the convolution calls are `<convolutionPrefix>[_filter_grad|
  /// _input_grad]_<element type>` (getRuntimeFunctionName's suffixes).
  LibraryCallLowering(StringRef namePrefix, StringRef convolutionPrefix)
      : names(namePrefix), convolutionPrefix(convolutionPrefix) {}
  virtual ~LibraryCallLowering() = default;

  /// Lowers what the library computes under `root`: input gradients first
  /// (their padded dY is theirs alone), then the readers of padded inputs,
  /// then each other linalg op on buffers: a convolution, or else
  /// `lowerOther(op)` (the pass's contractions, which may fail).
  void run(Operation *root,
           function_ref<LogicalResult(linalg::LinalgOp)> lowerOther);

  /// A call of runtime function `name` for `op` with `buffers` (the last
  /// one is what it writes), `scalars` and the flags (callFlags), at `b`'s
  /// insertion point. The zero fill of `output` right before `op` (past
  /// `replaced`, which go with `op`) is erased and makes the call overwrite.
  func::CallOp call(OpBuilder &b, Operation *op, StringRef name,
                    ArrayRef<Value> buffers, ArrayRef<int64_t> scalars,
                    Value output, ArrayRef<Operation *> replaced = {});

  /// Erases `op` (never to be visited again).
  void erase(Operation *op);
  bool isErased(Operation *op) const { return erased.contains(op); }

  /// `op` as a convolution or filter gradient on buffers that the library
  /// computes.
  std::optional<LibraryConvolution> convolutionOf(Operation *op) const;

  /// What the calls made so far write.
  const BufferWrites &getWrites() const { return writes; }

protected:
  /// `op` (on buffers) as a convolution or filter gradient the library
  /// computes: its element type one the library has, its layout one it
  /// can view.
  virtual std::optional<LibraryConvolution>
  matchConvolution(linalg::LinalgOp op) const = 0;
  /// The flags word of a call; `overwrite`: the output is the result alone.
  virtual int64_t callFlags(bool overwrite) const = 0;

private:
  /// The runtime function of convolution call `kind` on elements of `type`.
  std::string convolutionFunction(ConvolutionCall kind, Type type) const;
  LogicalResult lowerInputGradient(linalg::LinalgOp op);
  LogicalResult lowerPaddedInput(memref::AllocOp alloc);
  /// Y += conv(X, W) or dW += its filter gradient as a call on 4-D views,
  /// reading `x` padded by `padH` x `padW` instead of the op's X if given.
  /// Returns the call, null if `op` is none or the views cannot be made.
  Operation *lowerConvolution(linalg::LinalgOp op, Value x = {},
                              int64_t padH = 0, int64_t padW = 0,
                              ArrayRef<Operation *> replaced = {});

  RuntimeOpNames names;
  std::string convolutionPrefix;
  llvm::DenseSet<Operation *> erased;
  BufferWrites writes;
};

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_LIBRARYCALLLOWERING_H
