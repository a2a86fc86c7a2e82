//===- SOAPAttrs.h - SOAP attributes ----------------------------*- C++ -*-===//

#ifndef SOAP_DIALECT_SOAP_IR_SOAPATTRS_H
#define SOAP_DIALECT_SOAP_IR_SOAPATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"


#include "soap/Dialect/SOAP/IR/SOAPEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h.inc"

#endif // SOAP_DIALECT_SOAP_IR_SOAPATTRS_H
