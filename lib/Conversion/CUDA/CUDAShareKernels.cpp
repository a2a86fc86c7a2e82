//===- CUDAShareKernels.cpp - soap-cuda-share-kernels ---------------------===//
//
// Launches of kernels that compute the same share one kernel (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "../FunctionEquivalence.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDASHAREKERNELS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// The kernel of a module that holds one kernel and nothing else, with no
/// attributes but its name (as kernel outlining makes them), or null.
static gpu::GPUFuncOp getOnlyKernel(gpu::GPUModuleOp module) {
  Block &body = module.getBodyRegion().front();
  if (!llvm::hasSingleElement(body) || module->getAttrs().size() != 1)
    return {};
  auto kernel = dyn_cast<gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : gpu::GPUFuncOp();
}

struct CUDAShareKernelsPass
    : mlir::soap::impl::CUDAShareKernelsBase<CUDAShareKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    mlir::soap::EquivalentFunctions kernels;
    // The kernel each module's launches now name, for the modules to go.
    llvm::DenseMap<StringAttr, SymbolRefAttr> sharedKernel;
    SmallVector<gpu::GPUModuleOp> unused;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      gpu::GPUFuncOp kernel = getOnlyKernel(gpuModule);
      if (!kernel)
        continue;
      FunctionOpInterface equal = kernels.find(kernel);
      if (!equal) {
        kernels.add(kernel);
        continue;
      }
      auto owner = cast<gpu::GPUModuleOp>(equal->getParentOp());
      sharedKernel[gpuModule.getSymNameAttr()] =
          SymbolRefAttr::get(owner.getSymNameAttr(),
                             {FlatSymbolRefAttr::get(equal.getNameAttr())});
      unused.push_back(gpuModule);
    }
    if (unused.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = sharedKernel.find(launch.getKernelModuleName());
      if (it != sharedKernel.end())
        launch.setKernelAttr(it->second);
    });
    for (gpu::GPUModuleOp gpuModule : unused)
      gpuModule.erase();
    numShared += unused.size();
  }
};

} // namespace
