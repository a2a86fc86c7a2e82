//===- LowerToCUDA.h - Partitioned program -> LLVM + PTX for CUDA -*- C++ -*-===//
//
// soap-lower-to-cuda: the SPMD program soap-partition produces, lowered for
// NVIDIA GPUs. Same entry points and libsoaprt ABI as the CPU target
// (LowerToCPU.h); every tensor lives in device memory, and
//
//   matmul-like ops      -> cuBLAS   (soap-cuda-library-calls)
//   2-D convolutions     -> cuDNN    (soap-cuda-library-calls)
//   everything else      -> kernels generated through upstream MLIR:
//                           elementwise fusion, linalg -> parallel loops ->
//                           gpu.launch -> outlined gpu.func -> NVVM -> PTX
//                           (sm_90 by default), embedded in the object
//   soap.transfer / all_reduce -> libsoaprt over NCCL
//
// Passes in order: soap-specialize-ranks, soap-cpu-prepare,
// soap-bubble-up-slices, soap-compact-tensors, soap-gather-lookups,
// soap-cuda-fuse-elementwise, soap-cuda-split-reductions,
// one-shot-bufferize, soap-cpu-entry, buffer deallocation,
// soap-dealloc-after-last-use, soap-scatter-lookup-gradients,
// soap-cuda-library-calls, soap-cuda-copies, soap-cuda-loop-order,
// soap-cuda-collapse-dims,
// convert-linalg-to-parallel-loops, soap-cuda-map-loops,
// convert-parallel-loops-to-gpu, gpu-launch-sink-index-computations,
// gpu-kernel-outlining,
// soap-cuda-device-memory, soap-cuda-async-communication, then upstream's
// GPU-to-NVVM and host lowering
// (the structure of gpu-lower-to-nvvm-pipeline) and gpu-module-to-binary.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_CONVERSION_LOWERTOCUDA_H
#define SOAP_CONVERSION_LOWERTOCUDA_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;

namespace soap {

struct LowerToCUDAOptions : public PassPipelineOptions<LowerToCUDAOptions> {
  Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("Entry function (default: the public function that no "
                     "other function calls)"),
      llvm::cl::init("")};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture (sm_XY)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (default: +ptx80, the PTX ISA of CUDA "
                     "12.0, which every sm_50..sm_90a chip accepts)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel format embedded in the object: isa (PTX text, "
                     "JIT-compiled by the driver), bin (cubin, needs ptxas) "
                     "or fatbin (needs ptxas and fatbinary)"),
      llvm::cl::init("isa")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit folder (ptxas) for format=bin|fatbin"),
      llvm::cl::init("")};
  Option<bool> allowTF32{
      *this, "allow-tf32",
      llvm::cl::desc("Let cuBLAS and cuDNN use TF32 tensor cores for fp32"),
      llvm::cl::init(false)};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of generated "
                                           "kernels"),
                            llvm::cl::init(256)};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Largest bucket of all-reduces started together as one "
                     "NCCL group (soap-cuda-async-communication; 0: none)"),
      llvm::cl::init(1 << 20)};
  Option<bool> hostEmulation{
      *this, "host-emulation",
      llvm::cl::desc("For testing without a GPU: run the kernels as host "
                     "loops (soap-cuda-emulate-kernels) and lower only host "
                     "code; link with libsoaprt_cuda_emu.a"),
      llvm::cl::init(false)};
  Option<bool> emulationProfile{
      *this, "emulation-profile",
      llvm::cl::desc("With host-emulation: report every kernel load and "
                     "store to libsoaprt_cuda_emu's access profiler "
                     "(coalescing of each kernel's accesses)"),
      llvm::cl::init(false)};
  Option<bool> toLLVM{
      *this, "to-llvm",
      llvm::cl::desc("Lower all the way to the LLVM dialect with the kernels "
                     "serialized (off: stop after outlining, for tests)"),
      llvm::cl::init(true)};
};

/// The whole lowering, module to LLVM dialect (+ gpu.binary).
void buildLowerToCUDAPipeline(OpPassManager &pm,
                              const LowerToCUDAOptions &options);

/// Registers the soap-cuda-* passes and the soap-lower-to-cuda pipeline.
void registerLowerToCUDAPasses();

/// Dialects, interfaces and translations the lowering needs (NVVM target,
/// GPU and NVVM translations to LLVM IR, bufferization models).
void registerLowerToCUDADependencies(DialectRegistry &registry);

/// The PTX of every kernel module in `module` (gpu.binary objects in
/// format=isa), concatenated; empty when there is none.
std::string collectPTX(ModuleOp module);

} // namespace soap
} // namespace mlir

#endif // SOAP_CONVERSION_LOWERTOCUDA_H
