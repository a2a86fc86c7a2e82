//===- Passes.h - SOAP conversion passes ------------------------*- C++ -*-===//

#ifndef SOAP_CONVERSION_PASSES_H
#define SOAP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace affine {
class AffineDialect;
} // namespace affine

namespace soap {

#define GEN_PASS_DECL
#include "soap/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "soap/Conversion/Passes.h.inc"

} // namespace soap
} // namespace mlir

#endif // SOAP_CONVERSION_PASSES_H
