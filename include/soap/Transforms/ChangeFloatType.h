//===- ChangeFloatType.h - Every float of one type another ------*- C++ -*-===//
//
// The function behind soap-change-float-type, for tools (soap-models
// --dtype) that change a module they built.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_TRANSFORMS_CHANGEFLOATTYPE_H
#define SOAP_TRANSFORMS_CHANGEFLOATTYPE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace soap {

/// "f32", "bf16" or "f16" as a type; null for anything else.
FloatType parseFloatType(MLIRContext *context, StringRef name);

/// Makes every float of a type in `from` in `module` `to`: element types,
/// scalar and dense constants (rounded to nearest even).
void changeFloatType(ModuleOp module, ArrayRef<FloatType> from, FloatType to);

} // namespace soap
} // namespace mlir

#endif // SOAP_TRANSFORMS_CHANGEFLOATTYPE_H
