//===- CPULibraryCalls.cpp - matmuls -> OpenBLAS on the CPU target --------===//
//
// soap-cpu-library-calls: on bufferized code, every f32 or f64 contraction
// with one M, one N, one K and at most one batch loop becomes
//
//   soaprt_cpu_matmul_<f32|f64>(A, B, C, flags, name)
//
// on (batch, M, K) / (batch, K, N) / (batch, M, N) strided views of its
// operands (MatmulCalls.h, shared with the CUDA lowering's cuBLAS calls);
// libsoaprt_blas.a (lib/Runtime/soaprt_blas.c) calls CBLAS.
//
//===----------------------------------------------------------------------===//

#include "MatmulCalls.h"

#include "soap/Conversion/Passes.h"

#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"
#include "soap/Runtime/soaprt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
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

/// "f32" or "f64" when A, B and C all have that static-shaped element type.
static std::optional<StringRef> blasVariant(linalg::LinalgOp op) {
  Type type;
  for (Value v :
       {op.getDpsInputOperand(0)->get(), op.getDpsInputOperand(1)->get(),
        op.getDpsInitOperand(0)->get()}) {
    auto memref = dyn_cast<MemRefType>(v.getType());
    if (!memref || !memref.hasStaticShape() ||
        (type && memref.getElementType() != type))
      return std::nullopt;
    type = memref.getElementType();
  }
  if (type.isF32())
    return StringRef("f32");
  if (type.isF64())
    return StringRef("f64");
  return std::nullopt;
}

/// The contraction dimensions of `op` if CBLAS computes it.
static std::optional<linalg::ContractionDimensions>
matchBlasContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !blasVariant(op))
    return std::nullopt;
  return gemmDims(op);
}

struct CPULibraryCalls
    : public mlir::soap::impl::CPULibraryCallsBase<CPULibraryCalls> {
  RuntimeOpNames names{"__soap_blas_op_name_"};

  /// Replaces `op` with the runtime call; fails, leaving `op`, where CBLAS
  /// does not compute it.
  LogicalResult lower(linalg::LinalgOp op) {
    std::optional<linalg::ContractionDimensions> dims =
        matchBlasContraction(op);
    if (!dims)
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    std::optional<std::array<Value, 3>> views = buildMatmulViews(b, op, *dims);
    if (!views)
      return failure();
    SmallVector<Value> args;
    for (Value view : *views) {
      auto type = cast<MemRefType>(view.getType());
      args.push_back(memref::CastOp::create(
          b, loc,
          UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
          view));
    }
    int64_t flags = 0;
    if (linalg::FillOp fill =
            zeroFillBefore(op, op.getDpsInitOperand(0)->get(), {})) {
      fill->erase();
      flags |= SOAPRT_BLAS_OVERWRITE;
    }
    args.push_back(arith::ConstantIntOp::create(b, loc, flags, 64));
    args.push_back(names.get(b, op));
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    func::FuncOp callee = getOrInsertRuntimeFunction(
        b, op->getParentOfType<ModuleOp>(),
        ("soaprt_cpu_matmul_" + *blasVariant(op)).str(),
        b.getFunctionType(types, {}), /*cInterface=*/true);
    func::CallOp::create(b, loc, callee, args);
    op->erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (matchBlasContraction(op))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      (void)lower(op);
  }
};

} // namespace
