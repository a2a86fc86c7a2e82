//===- soap-opt.cpp - SOAP optimizer driver -------------------------------===//
//
// MlirOptMain with the upstream dialects a model may arrive in, the SOAP
// dialect, every upstream pass and every SOAP pass.
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/LowerToCPU.h"
#include "soap/Conversion/LowerToCUDA.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Transforms/Passes.h"
#include "soap/Transforms/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // All upstream dialects (func, arith, math, tensor, linalg, tosa, cf, scf,
  // memref, bufferization, gpu, nvvm, llvm, ...) with their interface models
  // (TilingInterface for linalg and tensor ops, bufferization, inlining).
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::soap::SOAPDialect>();
  mlir::soap::registerLowerToCPUDependencies(registry);
  mlir::soap::registerLowerToCUDADependencies(registry);

  mlir::registerAllPasses();
  mlir::soap::registerSOAPPasses();
  mlir::soap::registerSOAPPipelines();
  mlir::soap::registerLowerToCPUPasses();
  mlir::soap::registerLowerToCUDAPasses();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "SOAP optimizer driver\n", registry));
}
