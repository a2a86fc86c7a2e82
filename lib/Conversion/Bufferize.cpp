//===- Bufferize.cpp - soap-bufferize -------------------------------------===//
//
// One-shot module bufferization for the CPU and CUDA lowerings, with the
// alias analysis skipped for functions too large for it (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "soap/Dialect/SOAP/IR/SOAPOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_BUFFERIZE
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {
struct Bufferize : public soap::impl::BufferizeBase<Bufferize> {
  using BufferizeBase::BufferizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    SmallVector<std::string> unanalyzed;
    for (auto func : module.getOps<func::FuncOp>()) {
      int64_t writes = 0;
      func.walk([&](Operation *op) {
        if (isa<tensor::InsertSliceOp, soap::TransferOp, soap::AllReduceOp,
                soap::ReduceScatterOp, soap::AllGatherOp>(op))
          ++writes;
      });
      if (writes <= maxAnalyzedWrites)
        continue;
      mlir::emitRemark(func.getLoc())
          << "'" << func.getSymName() << "' has " << writes
          << " in-place tensor writes (more than "
          << static_cast<int64_t>(maxAnalyzedWrites)
          << "): bufferized with a copy before every write, without alias "
             "analysis";
      unanalyzed.push_back(func.getSymName().str());
    }
    options.noAnalysisFuncFilter = unanalyzed;
    // An op on tensors with no bufferization (tensor.gather, tensor.bitcast,
    // linalg.pack) would fail below with 'op was not bufferized': say what
    // it means instead.
    WalkResult unsupported = module.walk([&](Operation *op) {
      auto isTensor = llvm::IsaPred<TensorType>;
      if (!llvm::any_of(op->getOperandTypes(), isTensor) &&
          !llvm::any_of(op->getResultTypes(), isTensor))
        return WalkResult::advance();
      if (options.dynCastBufferizableOp(op))
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' has no lowering to buffers, so SOAP's CPU and "
                         "CUDA targets cannot compile it (express it with "
                         "linalg ops)";
      return WalkResult::interrupt();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(module, options,
                                                        state)))
      return signalPassFailure();
  }
};
} // namespace
