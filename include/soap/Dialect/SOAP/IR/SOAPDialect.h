//===- SOAPDialect.h - SOAP dialect -----------------------------*- C++ -*-===//

#ifndef SOAP_DIALECT_SOAP_IR_SOAPDIALECT_H
#define SOAP_DIALECT_SOAP_IR_SOAPDIALECT_H

#include "mlir/IR/Dialect.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h.inc"

#endif // SOAP_DIALECT_SOAP_IR_SOAPDIALECT_H
