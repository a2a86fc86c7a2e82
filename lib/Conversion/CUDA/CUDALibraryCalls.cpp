//===- CUDALibraryCalls.cpp - matmuls -> cuBLAS, convolutions -> cuDNN ----===//
//
// soap-cuda-library-calls: on bufferized code, linalg ops that a vendor
// library does best become calls of libsoaprt's CUDA back end
// (include/soap/Runtime/soaprt_cuda.h):
//
//   contraction (1 batch?, 1 M, 1 N, 1 K)  -> soaprt_cuda_matmul_f32(A, B, C)
//     (bf16 / f16 operands: ..._matmul_bf16, _f16, and with an f32 C
//     _bf16_f32, _f16_f32: tensor cores, fp32 accumulation; an f32
//     operand times a 16-bit one into f32: the 16-bit one widened into an
//     f32 copy, then ..._matmul_f32)
//   a 2-D convolution (NCHW, NHWC, depthwise, grouped: ConvolutionPatterns.h)
//                                           -> soaprt_cuda_conv2d_f32(X, W, Y)
//     (X, W and Y of bf16 or f16: ..._conv2d_bf16, _f16, and likewise the
//     gradients below)
//   its filter gradient (a linalg.generic)  -> ..._conv2d_filter_grad_f32
//   its input gradient (a conv of the spread, padded dY with the flipped
//   filter)                                  -> ..._conv2d_input_grad_f32
//
// Convolutions take cuDNN's 4-D views of their operands (transposes,
// reshapes) and a group count.
//
// The copies that only feed these calls go with them: a zero-padded input
// (tensor.pad bufferized) becomes cuDNN's own padding for every convolution
// and filter gradient that reads it; an input gradient takes W and dY as
// they are and computes only the part of dX that is read. That lowering is
// soap-cpu-library-calls' too (../LibraryCallLowering.h); this pass says
// which convolutions cuDNN takes, its function names and flags, and lowers
// the contractions.
//
// Operands are passed as strided views (memref.transpose puts a matmul's
// operands in (batch, M, K) / (batch, K, N) / (batch, M, N) order without
// copying); the runtime picks cuBLAS's transpose flags and leading dimensions
// from the strides.
//
//===----------------------------------------------------------------------===//

#include "CUDAPatterns.h"

#include "../LibraryCallLowering.h"

#include "soap/Conversion/Passes.h"

#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"
#include "soap/Runtime/soaprt_cuda.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDALIBRARYCALLS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;
using namespace mlir::soap::cuda;

namespace {

/// An elementwise linalg.generic of `ins` into `out` (identity maps, all of
/// one shape) yielding `body` of the block's arguments.
static linalg::GenericOp
buildElementwise(OpBuilder &builder, Location loc, ValueRange ins, Value out,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = cast<MemRefType>(out.getType()).getRank();
  SmallVector<AffineMap> identity(ins.size() + 1,
                                  builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      builder, loc, ins, ValueRange{out}, identity, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, body(b, l, args));
      });
}

/// The cuDNN convolutions and the calls' flags.
class CUDALowering : public LibraryCallLowering {
public:
  explicit CUDALowering(bool allowTF32)
      : LibraryCallLowering("__soap_op_name_", "soaprt_cuda_conv2d"),
        allowTF32(allowTF32) {}

protected:
  std::optional<LibraryConvolution>
  matchConvolution(linalg::LinalgOp op) const override {
    return matchCuDNNConvolution(op);
  }
  int64_t callFlags(bool overwrite) const override {
    return (allowTF32 ? SOAPRT_CUDA_ALLOW_TF32 : 0) |
           (overwrite ? SOAPRT_CUDA_OVERWRITE : 0);
  }

private:
  bool allowTF32;
};

struct CUDALibraryCalls
    : public mlir::soap::impl::CUDALibraryCallsBase<CUDALibraryCalls> {
  using CUDALibraryCallsBase::CUDALibraryCallsBase;

  /// C[b] += A[b] x B[b] as a cuBLAS call, if `op` is such a contraction.
  static LogicalResult lowerContraction(LibraryCallLowering &lowering,
                                        linalg::LinalgOp op) {
    std::optional<linalg::ContractionDimensions> dims =
        matchLibraryContraction(op);
    if (!dims)
      return failure();
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    auto aType = dyn_cast<MemRefType>(a.getType());
    auto bType = dyn_cast<MemRefType>(b.getType());
    auto cType = dyn_cast<MemRefType>(c.getType());
    if (!aType || !bType || !cType || !aType.hasStaticShape() ||
        !bType.hasStaticShape() || !cType.hasStaticShape())
      return failure();
    std::optional<std::string> variant = libraryMatmulVariant(
        aType.getElementType(), bType.getElementType(), cType.getElementType());
    // An f32 operand times a 16-bit one: the f32 GEMM of a widened copy.
    std::optional<int> narrow =
        variant ? std::nullopt : widenedMatmulOperand(op);
    if (!variant && !narrow)
      return failure();
    OpBuilder builder(op);
    Location loc = op.getLoc();
    std::optional<std::array<Value, 3>> views =
        buildMatmulViews(builder, op, *dims);
    if (!views)
      return failure();
    // The 16-bit operand's f32 copy (a kernel; exact), freed after the call.
    SmallVector<Operation *> widening;
    Value wide;
    if (narrow) {
      Value operand = op.getDpsInputOperand(*narrow)->get();
      auto type = cast<MemRefType>(operand.getType());
      wide = memref::AllocOp::create(
          builder, loc, MemRefType::get(type.getShape(), builder.getF32Type()));
      Operation *extend = buildElementwise(
          builder, loc, operand, wide,
          [](OpBuilder &nb, Location l, ValueRange args) {
            return arith::ExtFOp::create(nb, l, nb.getF32Type(), args[0])
                .getResult();
          });
      Value &view = (*views)[*narrow];
      eraseView(view, operand);
      view = gemmView(builder, loc, wide,
                      op.getMatchingIndexingMap(op.getDpsInputOperand(*narrow)),
                      *dims, *narrow);
      widening = {wide.getDefiningOp(), extend};
      variant = "f32";
    }
    lowering.call(builder, op, "soaprt_cuda_matmul_" + *variant,
                  {(*views)[0], (*views)[1], (*views)[2]}, {}, c, widening);
    if (wide)
      memref::DeallocOp::create(builder, loc, wide);
    lowering.erase(op);
    return success();
  }

  void runOnOperation() override {
    CUDALowering lowering(allowTF32);
    lowering.run(getOperation(), [&](linalg::LinalgOp op) {
      return lowerContraction(lowering, op);
    });
  }
};

} // namespace
