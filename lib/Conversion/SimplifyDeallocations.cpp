//===- SimplifyDeallocations.cpp - soap-simplify-deallocations ------------===//
//
// Upstream's bufferization.dealloc simplification, skipped for functions
// whose deallocs list too many buffers (Passes.td); and the deallocation
// pipeline that uses it.
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/LowerToCPU.h"
#include "soap/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SIMPLIFYDEALLOCATIONS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {
struct SimplifyDeallocations
    : public soap::impl::SimplifyDeallocationsBase<SimplifyDeallocations> {
  using SimplifyDeallocationsBase::SimplifyDeallocationsBase;

  LogicalResult initialize(MLIRContext *) override {
    simplify.addPass(bufferization::createBufferDeallocationSimplificationPass());
    return success();
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    SimplifyDeallocationsBase::getDependentDialects(registry);
    simplify.getDependentDialects(registry);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    int64_t memrefs = 0;
    func.walk([&](bufferization::DeallocOp op) {
      memrefs += static_cast<int64_t>(op.getMemrefs().size());
    });
    if (memrefs > maxMemrefs) {
      // At the location only: Operation::emitRemark would print the whole
      // (huge) function with it.
      mlir::emitRemark(func.getLoc())
          << "'" << func.getSymName() << "' deallocates "
                        << memrefs << " buffers (more than "
                        << static_cast<int64_t>(maxMemrefs)
                        << "): its deallocations are not simplified";
      return;
    }
    if (failed(runPipeline(simplify, func)))
      signalPassFailure();
  }

  OpPassManager simplify{func::FuncOp::getOperationName()};
};
} // namespace

void mlir::soap::buildDeallocationPipeline(OpPassManager &pm) {
  // bufferization::buildBufferDeallocationPipeline, with the simplification
  // bounded.
  memref::ExpandReallocPassOptions expandRealloc;
  expandRealloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(expandRealloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createSimplifyDeallocations());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}
