//===- CPULibraryCalls.cpp - matmuls, convolutions -> OpenBLAS ------------===//
//
// soap-cpu-library-calls: on bufferized code, every f32 or f64 contraction
// with one M, one N, one K and at most one batch loop becomes
//
//   soaprt_cpu_matmul_<f32|f64>(A, B, C, flags, name)
//
// on (batch, M, K) / (batch, K, N) / (batch, M, N) strided views of its
// operands (LibraryCalls.h, shared with the CUDA lowering's cuBLAS calls),
// and every f32 or f64 2-D convolution, its filter gradient and its input
// gradient
//
//   soaprt_cpu_conv2d_[filter_grad_|input_grad_]<f32|f64>(
//       X | X | W, W | dY | dY, Y | dW | dX, strides, dilations, padding,
//       groups, flags, name)
//
// on 4-D views of its operands, a zero-padded input becoming the call's
// padding (LibraryCallLowering.h, shared with the cuDNN calls);
// libsoaprt_blas.a (lib/Runtime/soaprt_blas.c, soaprt_blas_conv.c) calls
// CBLAS.
//
//===----------------------------------------------------------------------===//

#include "LibraryCallLowering.h"

#include "soap/Conversion/Passes.h"
#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

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

/// f32 or f64 when `op` has two inputs and one output, all static-shaped
/// buffers of that element type.
static std::optional<Type> blasElementType(linalg::LinalgOp op) {
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
  if (type.isF32() || type.isF64())
    return type;
  return std::nullopt;
}

/// `op` as a convolution or filter gradient libsoaprt_blas computes
/// (blasElementType; depthwise ones too: the runtime computes those by direct
/// loops, not GEMMs of one row).
static std::optional<LibraryConvolution>
matchBlasConvolution(linalg::LinalgOp op) {
  if (!blasElementType(op))
    return std::nullopt;
  return matchLibraryConvolution(op);
}

/// libsoaprt_blas's convolutions and the calls' flags.
class CPULowering : public LibraryCallLowering {
public:
  CPULowering()
      : LibraryCallLowering("__soap_blas_op_name_", "soaprt_cpu_conv2d") {}

protected:
  std::optional<LibraryConvolution>
  matchConvolution(linalg::LinalgOp op) const override {
    return matchBlasConvolution(op);
  }
  int64_t callFlags(bool overwrite) const override {
    return overwrite ? SOAPRT_BLAS_OVERWRITE : 0;
  }
};

struct CPULibraryCalls
    : public mlir::soap::impl::CPULibraryCallsBase<CPULibraryCalls> {
  /// C[b] += A[b] x B[b] as an OpenBLAS call; fails, leaving `op`, where
  /// CBLAS does not compute it.
  static LogicalResult lowerContraction(LibraryCallLowering &lowering,
                                        linalg::LinalgOp op) {
    std::optional<Type> element = blasElementType(op);
    std::optional<linalg::ContractionDimensions> dims =
        element ? gemmDims(op) : std::nullopt;
    if (!dims)
      return failure();
    OpBuilder b(op);
    std::optional<std::array<Value, 3>> views = buildMatmulViews(b, op, *dims);
    if (!views)
      return failure();
    lowering.call(b, op, getRuntimeFunctionName("soaprt_cpu_matmul", *element),
                  *views, {}, op.getDpsInitOperand(0)->get());
    lowering.erase(op);
    return success();
  }

  void runOnOperation() override {
    CPULowering lowering;
    lowering.run(getOperation(), [&](linalg::LinalgOp op) {
      return lowerContraction(lowering, op);
    });
  }
};

} // namespace
