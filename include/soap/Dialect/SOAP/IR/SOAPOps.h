//===- SOAPOps.h - SOAP communication operations ----------------*- C++ -*-===//

#ifndef SOAP_DIALECT_SOAP_IR_SOAPOPS_H
#define SOAP_DIALECT_SOAP_IR_SOAPOPS_H

#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace soap {
/// The resource communication ops read and write: it keeps them in program
/// order on every rank.
struct CommunicationResource
    : public SideEffects::Resource::Base<CommunicationResource> {
  StringRef getName() final { return "soap.communication"; }
};
} // namespace soap
} // namespace mlir

#define GET_OP_CLASSES
#include "soap/Dialect/SOAP/IR/SOAPOps.h.inc"

#endif // SOAP_DIALECT_SOAP_IR_SOAPOPS_H
