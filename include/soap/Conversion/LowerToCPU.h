//===- LowerToCPU.h - Partitioned program -> LLVM for the CPU ---*- C++ -*-===//
//
// soap-lower-to-cpu: from the SPMD program soap-partition produces (tensors,
// soap.rank / soap.transfer / soap.all_reduce) to the LLVM dialect, calling
// libsoaprt (include/soap/Runtime/soaprt.h) for communication and exporting
// the entry points its main() drives (soap_setup, soap_main, ...).
//
//   soap-cpu-prepare     check the entry signature and the devices, keep the
//                        entry's arguments read-only, soap.rank -> soaprt_rank
//   soap-gather-lookups  embedding lookups read one row per id
//   one-shot-bufferize   function boundaries, identity layouts; soap.transfer
//                        and soap.all_reduce become libsoaprt calls
//   soap-cpu-entry       globals for the inputs, soap_setup / soap_main /
//                        soap_num_devices / soap_num_inputs / soap_num_outputs
//   buffer deallocation, soap-scatter-lookup-gradients (atomic adds into the
//   ids' rows), with blas=true soap-cpu-library-calls (matmuls and
//   convolutions as OpenBLAS calls), linalg to loops, affine, scf to cf, math
//   to LLVM and libm, everything to LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_CONVERSION_LOWERTOCPU_H
#define SOAP_CONVERSION_LOWERTOCPU_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;

namespace soap {

struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("Entry function (default: the public function that no "
                     "other function calls)"),
      llvm::cl::init("")};
  Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Compute f32 / f64 matmuls and convolutions with "
                     "OpenBLAS (soap-cpu-library-calls): the executable "
                     "links libsoaprt_blas.a and OpenBLAS"),
      llvm::cl::init(false)};
};

/// Name of the unit attribute soap-cpu-prepare puts on the entry function.
constexpr llvm::StringLiteral kCPUEntryAttrName = "soap_cpu_entry";

/// Name of the unit attribute soap-cpu-entry puts on the functions soap_main
/// calls: the entry, or each rank's (they compute the model; on the CUDA
/// target, on data in device memory).
constexpr llvm::StringLiteral kModelFunctionAttrName = "soap_model_function";

/// `target` names the target in messages ("the CPU", "CUDA"): the CUDA
/// lowering starts with the same checks.
std::unique_ptr<Pass> createCPUPreparePass(std::string entry = "",
                                           std::string target = "the CPU");
std::unique_ptr<Pass> createCPUEntryPass();

/// The first part of both lowerings: one function per rank
/// (soap-specialize-ranks), the checks and entry handling (soap-cpu-prepare,
/// `target` naming the target in messages), each rank's slices moved above
/// whole-tensor reshapes and pads (soap-bubble-up-slices), each tensor
/// sized to what its rank touches (soap-compact-tensors), and embedding
/// lookups as gathers (soap-gather-lookups).
void buildRankFunctionsPipeline(OpPassManager &pm, const std::string &entry,
                                const std::string &target);

/// Host code on buffers and loops (scf, affine, arith, math, memref) to the
/// LLVM dialect, each loop nest in a function of its own
/// (soap-outline-loop-nests): the CPU pipeline's last part, shared with the
/// CUDA lowering's host emulation. With `genericAllocation`, memref.alloc and
/// dealloc call _mlir_memref_to_llvm_alloc / _free (libsoaprt's device
/// allocator on the CUDA back end) instead of malloc / free.
void buildHostToLLVMPipeline(OpPassManager &pm, bool genericAllocation);

/// Upstream's buffer deallocation pipeline with its simplification bounded
/// in time (soap-simplify-deallocations): both lowerings run it after
/// bufferization.
void buildDeallocationPipeline(OpPassManager &pm);

/// The whole lowering, module to LLVM dialect.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);

/// Registers soap-cpu-prepare, soap-cpu-entry and the soap-lower-to-cpu
/// pipeline (for soap-opt).
void registerLowerToCPUPasses();

/// Dialects, interfaces and translations the lowering needs (the SOAP ops'
/// bufferization models, LLVM IR translation).
void registerLowerToCPUDependencies(DialectRegistry &registry);

/// Translates a module in the LLVM dialect to LLVM IR and writes an object
/// file for the host (or `cpu`: a CPU name, "host" or "generic") at -O`optLevel`.
LogicalResult emitObjectFile(ModuleOp module, llvm::raw_pwrite_stream &os,
                             StringRef cpu = "host", unsigned optLevel = 2);

/// Whether the host's LLVM target knows CPU `cpu` ("host" and "generic"
/// always); else the reason, for a diagnostic.
std::optional<std::string> checkCPUName(StringRef cpu);

} // namespace soap
} // namespace mlir

#endif // SOAP_CONVERSION_LOWERTOCPU_H
