//===- Pipelines.h - SOAP pass pipelines ------------------------*- C++ -*-===//

#ifndef SOAP_TRANSFORMS_PIPELINES_H
#define SOAP_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
namespace soap {

struct ImportOptions : public PassPipelineOptions<ImportOptions> {
  Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("Entry function (default: the public function that no "
                     "other function calls)"),
      llvm::cl::init("")};
  Option<int64_t> batch{*this, "batch",
                        llvm::cl::desc("Rescale the batch to this size "
                                       "(0: keep the model's batch)"),
                        llvm::cl::init(0)};
  Option<bool> liftConstantParameters{
      *this, "lift-constant-parameters",
      llvm::cl::desc("Make the entry's weight constants parameter arguments "
                     "when it has none (soap-lift-constant-parameters; "
                     "before canonicalization merges equal ones)"),
      llvm::cl::init(false)};
  Option<bool> randomInputRanges{
      *this, "random-input-ranges",
      llvm::cl::desc("Mark the weights with the He-uniform range an "
                     "executable's --random-inputs draws them from "
                     "(soap-random-input-ranges)"),
      llvm::cl::init(false)};
};

/// Import: TOSA to linalg, inline calls to private helpers, drop exporters'
/// asserts, optionally lift weight constants to parameters, canonicalize and
/// CSE, rescale the batch, give fused projections' parts and merged batch
/// loops (attention's batch x heads) ops and loops of their own, name every
/// layer, optionally mark the weights' random ranges, and report what
/// cannot be partitioned.
void buildImportPipeline(OpPassManager &pm, const ImportOptions &options);

/// Registers `soap-import` as a pass pipeline (for soap-opt).
void registerSOAPPipelines();

} // namespace soap
} // namespace mlir

#endif // SOAP_TRANSFORMS_PIPELINES_H
