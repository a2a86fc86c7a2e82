//===- Pipelines.cpp - SOAP pass pipelines --------------------------------===//

#include "soap/Transforms/Pipelines.h"

#include "soap/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::soap;

void mlir::soap::buildImportPipeline(OpPassManager &pm,
                                     const ImportOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createStripAsserts());
  // torch-mlir's embedding gathers: select reductions over the table's rows,
  // the table an operand (a weight to lift and train). First: the
  // TOSA conversions fold ops, and a gather from a splat table would fold
  // to a constant.
  funcPm.addPass(createLookupReductions());
  // TOSA models become linalg on tensors (a no-op on other models).
  funcPm.addPass(tosa::createTosaToLinalgNamed());
  funcPm.addPass(tosa::createTosaToLinalg());
  funcPm.addPass(createTosaToArithPass());
  funcPm.addPass(createTosaToTensorPass());
  // linalg.softmax and other aggregated ops: fills and linalg.generic ops.
  funcPm.addPass(createDecomposeAggregates());
  // arith / math ops on whole tensors: linalg.generic ops.
  funcPm.addPass(createConvertElementwiseToLinalgPass());
  // JAX exports call private helpers such as @relu. Without the inliner's
  // default canonicalization: it would merge equal weight constants before
  // soap-lift-constant-parameters sees them apart (canonicalize runs below).
  pm.addPass(createInlinerPass(llvm::StringMap<OpPassManager>(),
                               [](OpPassManager &) {}));
  pm.addPass(createSymbolDCEPass());
  if (options.liftConstantParameters) {
    LiftConstantParametersOptions lift;
    lift.entry = options.entry;
    pm.addPass(createLiftConstantParameters(lift));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // torch-mlir's transposed convolutions spread their input with a strided
  // insert_slice and flip their filter in a generic's body (the offsets and
  // the flipped indices are constants by now).
  pm.addNestedPass<func::FuncOp>(createSpreadStridedInserts());
  pm.addNestedPass<func::FuncOp>(createLookupReductions());
  if (options.batch != 0) {
    RescaleBatchOptions rescale;
    rescale.batch = options.batch;
    rescale.entry = options.entry;
    pm.addPass(createRescaleBatch(rescale));
    pm.addPass(createCanonicalizerPass());
  }
  // A fused q / k / v projection read in parts: one matmul per part.
  pm.addNestedPass<func::FuncOp>(createSplitFusedProjections());
  // Attention's batch x heads, merged for linalg.batch_matmul: one batch
  // loop per dim, so a strategy can split the heads.
  pm.addNestedPass<func::FuncOp>(createSplitMergedBatchLoops());
  AssignNamesOptions names;
  names.entry = options.entry;
  pm.addPass(createAssignNames(names));
  if (options.randomInputRanges) {
    RandomInputRangesOptions ranges;
    ranges.entry = options.entry;
    pm.addPass(createRandomInputRanges(ranges));
  }
}

void mlir::soap::registerSOAPPipelines() {
  PassPipelineRegistration<ImportOptions>(
      "soap-import",
      "Import a model: drop asserts, embedding gathers to lookup "
      "reductions, TOSA to linalg, decompose aggregated ops (softmax), "
      "elementwise arith / math on tensors to linalg, inline helpers, "
      "optionally lift weight constants to parameters, canonicalize, "
      "strided insertions to reshapes and pads, rescale the batch, split "
      "fused projections and merged batch loops (batch x heads), name the "
      "layers, optionally mark the weights' random ranges",
      buildImportPipeline);
}
