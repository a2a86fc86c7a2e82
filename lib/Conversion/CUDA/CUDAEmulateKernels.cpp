//===- CUDAEmulateKernels.cpp - Kernel launches as host loops -------------===//
//
// soap-cuda-emulate-kernels: for testing the CUDA lowering on a machine
// without a GPU. Every gpu.launch_func becomes
//
//   scf.for %bz, %by, %bx (blocks) { scf.for %tz, %ty, %tx (threads) {
//     <the kernel's body, ids and sizes replaced> } }
//
// on the host. The kernels the CUDA lowering generates are one block of
// straight-line code with scf.if / scf.for inside, no barriers and no
// shared memory, and every thread writes its own elements: running the
// threads one after another computes what the GPU computes.
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDAEMULATEKERNELS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Why `kernel` cannot run as sequential host loops, or success.
static LogicalResult checkEmulatable(gpu::LaunchFuncOp launch,
                                     gpu::GPUFuncOp kernel) {
  auto reject = [&](const Twine &why) {
    InFlightDiagnostic diag = launch.emitOpError()
                              << "cannot be emulated on the host: " << why;
    diag.attachNote(kernel.getLoc()) << "kernel defined here";
    return diag;
  };
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return reject("asynchronous launch");
  if (launch.hasClusterSize())
    return reject("thread block clusters");
  if (launch.getDynamicSharedMemorySize())
    return reject("dynamic shared memory");
  if (kernel.getNumWorkgroupAttributions() ||
      kernel.getNumPrivateAttributions())
    return reject("memory attributions");
  if (!kernel.getBody().hasOneBlock())
    return reject("the kernel's body has several blocks");
  WalkResult walk = kernel.getBody().walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::ReturnOp>(op) ||
        !isa<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::advance();
    (void)reject("'" + op->getName().getStringRef() +
                 "' has no sequential meaning");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Replaces `launch` with loops over its grid and blocks around a copy of
/// the kernel's body.
static void emulate(RewriterBase &rewriter, gpu::LaunchFuncOp launch,
                    gpu::GPUFuncOp kernel) {
  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  // Outermost first: block z, y, x, then thread z, y, x.
  SmallVector<Value> upper = {grid.z, grid.y, grid.x,
                              block.z, block.y, block.x};
  SmallVector<Value> ids;
  for (Value bound : upper) {
    auto loop = scf::ForOp::create(rewriter, loc, zero, bound, one);
    ids.push_back(loop.getInductionVar());
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  auto pick = [](gpu::Dimension dim, Value x, Value y, Value z) {
    return dim == gpu::Dimension::x ? x : dim == gpu::Dimension::y ? y : z;
  };

  IRMapping mapping;
  Block &body = kernel.getBody().front();
  mapping.map(body.getArguments(), launch.getKernelOperands());
  for (Operation &op : body.without_terminator())
    rewriter.clone(op, mapping);
  // Ids and sizes, wherever they are in the copy.
  Block *inner = rewriter.getInsertionBlock();
  SmallVector<Operation *> gpuOps;
  inner->walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp,
            gpu::GridDimOp>(op))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    Value value;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      value = pick(id.getDimension(), ids[2], ids[1], ids[0]);
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      value = pick(id.getDimension(), ids[5], ids[4], ids[3]);
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      value = pick(dim.getDimension(), block.x, block.y, block.z);
    else
      value = pick(cast<gpu::GridDimOp>(op).getDimension(), grid.x, grid.y,
                   grid.z);
    rewriter.replaceOp(op, value);
  }
  rewriter.eraseOp(launch);
}

struct CUDAEmulateKernels
    : public soap::impl::CUDAEmulateKernelsBase<CUDAEmulateKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchFuncOp launch : launches) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel) {
        launch.emitOpError()
            << "cannot be emulated on the host: " << launch.getKernel()
            << " is not a gpu.func (run soap-cuda-emulate-kernels before "
               "the kernels are lowered to NVVM)";
        return signalPassFailure();
      }
      if (failed(checkEmulatable(launch, kernel)))
        return signalPassFailure();
      emulate(rewriter, launch, kernel);
    }
    for (Operation &op : llvm::make_early_inc_range(module.getOps())) {
      if (isa<gpu::BinaryOp>(op)) {
        op.emitOpError() << "is compiled code: run soap-cuda-emulate-kernels "
                            "before gpu-module-to-binary";
        return signalPassFailure();
      }
      if (isa<gpu::GPUModuleOp>(op))
        op.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
