//===- Passes.h - SOAP passes -----------------------------------*- C++ -*-===//

#ifndef SOAP_TRANSFORMS_PASSES_H
#define SOAP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

namespace mlir {
namespace soap {

#define GEN_PASS_DECL
#include "soap/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "soap/Transforms/Passes.h.inc"

} // namespace soap
} // namespace mlir

#endif // SOAP_TRANSFORMS_PASSES_H
