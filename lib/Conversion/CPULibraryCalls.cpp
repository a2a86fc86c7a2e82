//===- CPULibraryCalls.cpp - matmuls, convolutions -> OpenBLAS ------------===//
//
// soap-cpu-library-calls: on bufferized code, every f32 or f64 contraction
// with one M, one N, one K and at most one batch loop becomes
//
//   soaprt_cpu_matmul_<f32|f64>(A, B, C, flags, name)
//
// on (batch, M, K) / (batch, K, N) / (batch, M, N) strided views of its
// operands (LibraryCalls.h, shared with the CUDA lowering's cuBLAS calls),
// and every f32 or f64 2-D convolution or filter gradient
//
//   soaprt_cpu_conv2d_[filter_grad_]<f32|f64>(X, W | dY, Y | dW, strides,
//                                             dilations, padding, groups,
//                                             flags, name)
//
// on 4-D views of its operands (ConvolutionPatterns.h, shared with the
// cuDNN calls); libsoaprt_blas.a (lib/Runtime/soaprt_blas.c,
// soaprt_blas_conv.c) calls CBLAS.
//
//===----------------------------------------------------------------------===//

#include "ConvolutionPatterns.h"
#include "LibraryCalls.h"

#include "soap/Conversion/Passes.h"

#include "soap/Runtime/soaprt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CPULIBRARYCALLS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// "f32" or "f64" when `op` has two inputs and one output, all
/// static-shaped buffers of that element type.
static std::optional<StringRef> blasVariant(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  Type type;
  for (OpOperand &operand : op->getOpOperands()) {
    auto memref = cast<MemRefType>(operand.get().getType());
    if (!memref.hasStaticShape() || (type && memref.getElementType() != type))
      return std::nullopt;
    type = memref.getElementType();
  }
  if (type.isF32())
    return StringRef("f32");
  if (type.isF64())
    return StringRef("f64");
  return std::nullopt;
}

/// Whether each group of `conv` has one channel and one filter (a
/// depthwise convolution): its GEMMs would have one row, slower with the
/// im2col copy than the generated loops (6x on mobilenet_v2's 3x3 ones).
static bool isDepthwise(const LibraryConvolution &conv) {
  auto w = cast<MemRefType>(conv.w.getType());
  int64_t perGroup = 1;
  for (auto [i, d] : llvm::enumerate(conv.wDims[0]))
    if (!conv.grouped || i > 0)
      perGroup *= w.getDimSize(d);
  for (int64_t d : conv.wDims[1])
    perGroup *= w.getDimSize(d);
  return perGroup == 1;
}

/// `op` as a convolution or filter gradient libsoaprt_blas computes
/// (blasVariant), with the 4-D views of its operands possible; not a
/// depthwise one.
static std::optional<LibraryConvolution>
matchBlasConvolution(linalg::LinalgOp op) {
  if (!blasVariant(op))
    return std::nullopt;
  std::optional<LibraryConvolution> conv = matchLibraryConvolution(op);
  if (!conv || isDepthwise(*conv) ||
      !hasConvolutionView(conv->x, conv->xDims) ||
      !hasConvolutionView(conv->w, conv->wDims) ||
      !hasConvolutionView(conv->y, conv->yDims))
    return std::nullopt;
  return conv;
}

struct CPULibraryCalls
    : public mlir::soap::impl::CPULibraryCallsBase<CPULibraryCalls> {
  RuntimeOpNames names{"__soap_blas_op_name_"};

  /// The runtime call `name` on `views` and `scalars` in place of `op`,
  /// overwriting `output` if a zero fill of it comes right before `op` (the
  /// fill is erased).
  void call(linalg::LinalgOp op, StringRef name, ArrayRef<Value> views,
            ArrayRef<int64_t> scalars, Value output) {
    OpBuilder b(op);
    int64_t flags = 0;
    if (linalg::FillOp fill = zeroFillBefore(op, output, {})) {
      fill->erase();
      flags |= SOAPRT_BLAS_OVERWRITE;
    }
    createLibraryCall(b, op.getLoc(), op->getParentOfType<ModuleOp>(), name,
                      views, scalars, flags, names.get(b, op));
    op->erase();
  }

  /// C[b] += A[b] x B[b] as an OpenBLAS call; fails, leaving `op`, where
  /// CBLAS does not compute it.
  LogicalResult lowerContraction(linalg::LinalgOp op) {
    std::optional<StringRef> variant = blasVariant(op);
    std::optional<linalg::ContractionDimensions> dims =
        variant ? gemmDims(op) : std::nullopt;
    if (!dims)
      return failure();
    OpBuilder b(op);
    std::optional<std::array<Value, 3>> views = buildMatmulViews(b, op, *dims);
    if (!views)
      return failure();
    call(op, ("soaprt_cpu_matmul_" + *variant).str(), *views, {},
         op.getDpsInitOperand(0)->get());
    return success();
  }

  /// Y += conv(X, W), or dW += its filter gradient, as an im2col + OpenBLAS
  /// call; fails, leaving `op`, where there is none.
  LogicalResult lowerConvolution(linalg::LinalgOp op) {
    std::optional<LibraryConvolution> conv = matchBlasConvolution(op);
    if (!conv)
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value x = convolutionView(b, loc, conv->x, conv->xDims);
    Value w = convolutionView(b, loc, conv->w, conv->wDims);
    Value y = convolutionView(b, loc, conv->y, conv->yDims);
    SmallVector<int64_t> scalars = {conv->strides[0],   conv->strides[1],
                                    conv->dilations[0], conv->dilations[1],
                                    /*padH=*/0,         /*padW=*/0,
                                    conv->groups};
    std::string variant = blasVariant(op)->str();
    if (conv->filterGradient)
      call(op, "soaprt_cpu_conv2d_filter_grad_" + variant, {x, y, w}, scalars,
           conv->w);
    else
      call(op, "soaprt_cpu_conv2d_" + variant, {x, w, y}, scalars, conv->y);
    return success();
  }

  void runOnOperation() override {
    // Only ops with two inputs and an output: the zero fills the calls
    // erase are never visited.
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (blasVariant(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops)
      if (failed(lowerConvolution(op)))
        (void)lowerContraction(op);
  }
};

} // namespace
