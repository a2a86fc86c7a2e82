//===- LowerToCUDA.cpp - The soap-lower-to-cuda pipeline ------------------===//

#include "soap/Conversion/LowerToCUDA.h"

#include "soap/Conversion/LowerToCPU.h"
#include "soap/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::soap::buildLowerToCUDAPipeline(OpPassManager &pm,
                                          const LowerToCUDAOptions &options) {
  // Tensors: one function per rank, each tensor the size of what its rank
  // touches, the same checks and entry handling as the CPU, then one linalg
  // op per elementwise group.
  buildRankFunctionsPipeline(pm, options.entry, "CUDA");
  pm.addPass(createCUDAFuseElementwise());
  pm.addPass(createCUDAFuseSiblingReductions());
  pm.addPass(createCUDASplitReductions());
  pm.addPass(createCanonicalizerPass());

  // Buffers (identity layouts at the entry's boundary), the entry points,
  // ownership-based deallocation.
  pm.addPass(createBufferize());
  pm.addPass(createCPUEntryPass());
  buildDeallocationPipeline(pm);
  // Clones become alloc + copy (a kernel below); the deallocation helpers
  // stay host loops.
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Each buffer freed after its last use (the pool reuses it).
  pm.addNestedPass<func::FuncOp>(createDeallocAfterLastUse());
  // Embedding gradients: atomic adds into the ids' rows.
  pm.addNestedPass<func::FuncOp>(createScatterLookupGradients());

  // cuBLAS / cuDNN for what they do best, kernels for the rest.
  CUDALibraryCallsOptions library;
  library.allowTF32 = options.allowTF32;
  pm.addPass(createCUDALibraryCalls(library));
  pm.addNestedPass<func::FuncOp>(createCUDACopies());
  pm.addNestedPass<func::FuncOp>(createCUDALoopOrder());
  pm.addNestedPass<func::FuncOp>(createCUDACollapseDims());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // A fill and the reduction that accumulates into it, a reduction's
  // combination and the updates that read it: one kernel.
  pm.addNestedPass<func::FuncOp>(createCUDAFuseParallelLoops());
  pm.addNestedPass<func::FuncOp>(createScalarAccumulators());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  CUDAMapLoopsOptions map;
  map.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createCUDAMapLoops(map));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  // Constant sizes and index arithmetic into the kernels (divisions by
  // constants become multiplications; fewer kernel arguments).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createCUDAShareKernels());
  pm.addPass(createCUDADeviceMemory());
  pm.addPass(createCanonicalizerPass());
  // Communication on its own stream, waited for where its data is used.
  CUDAAsyncCommunicationOptions communication;
  communication.bucketBytes = options.bucketBytes;
  pm.addPass(createCUDAAsyncCommunication(communication));
  if (options.hostEmulation) {
    CUDAEmulateKernelsOptions emulation;
    emulation.profileAccesses = options.emulationProfile;
    pm.addPass(createCUDAEmulateKernels(emulation));
    pm.addPass(createCanonicalizerPass());
    // Host code only: the CPU target's lowering to LLVM, allocations through
    // libsoaprt's (emulated) device allocator.
    if (options.toLLVM)
      buildHostToLLVMPipeline(pm, /*genericAllocation=*/true);
    return;
  }
  if (!options.toLLVM)
    return;

  // The structure of upstream's gpu-lower-to-nvvm-pipeline: common
  // lowering, the kernels to NVVM, the host to LLVM, kernels to binary.
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host: allocations go to libsoaprt's device allocator.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMergeRankFunctions());
}

void mlir::soap::registerLowerToCUDAPasses() {
  registerSOAPConversionPasses();
  PassPipelineRegistration<LowerToCUDAOptions>(
      "soap-lower-to-cuda",
      "Lower a (partitioned) SOAP program for NVIDIA GPUs: cuBLAS / cuDNN "
      "calls, generated kernels (NVVM, PTX), device memory, libsoaprt entry "
      "points; the host code to the LLVM dialect",
      buildLowerToCUDAPipeline);
}

void mlir::soap::registerLowerToCUDADependencies(DialectRegistry &registry) {
  registerLowerToCPUDependencies(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllGPUToLLVMIRTranslations(registry);
}

std::string mlir::soap::collectPTX(ModuleOp module) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (object && object.getFormat() == gpu::CompilationTarget::Assembly)
        ptx += object.getObject().getValue().str();
    }
  });
  return ptx;
}
