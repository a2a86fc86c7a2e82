//===- LiftConstantParameters.cpp - Weight constants -> parameters --------===//
//
// See Passes.td (soap-lift-constant-parameters).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_LIFTCONSTANTPARAMETERS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// Whether `use` reads its value as data (not as the destination a
/// destination-style op writes into).
static bool readsAsData(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return !dps || !dps.isDpsInit(&use);
}

struct LiftConstantParametersPass
    : public mlir::soap::impl::LiftConstantParametersBase<
          LiftConstantParametersPass> {
  using LiftConstantParametersBase::LiftConstantParametersBase;

  void runOnOperation() override {
    FailureOr<func::FuncOp> found = findEntryFunction(getOperation(), entry);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    if (func.isExternal() || getParameterArguments(func).any())
      return;

    // Constants anywhere in the body (exporters put them at the top, but a
    // constant inside a region would be read the same way).
    SmallVector<arith::ConstantOp> weights;
    func.walk([&](arith::ConstantOp cst) {
      auto type = dyn_cast<RankedTensorType>(cst.getType());
      if (!type || type.getRank() == 0 ||
          !isa<FloatType>(type.getElementType()))
        return;
      if (llvm::any_of(cst->getUses(), readsAsData))
        weights.push_back(cst);
    });
    MLIRContext *context = &getContext();
    for (arith::ConstantOp cst : weights) {
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(
              index, cst.getType(),
              DictionaryAttr::get(
                  context,
                  {NamedAttribute(StringAttr::get(
                                      context, SOAPDialect::kParameterAttrName),
                                  UnitAttr::get(context)),
                   NamedAttribute(
                       StringAttr::get(context,
                                       SOAPDialect::kInitialValueAttrName),
                       cst.getValue())}),
              cst.getLoc()))) {
        cst.emitError("soap-lift-constant-parameters: cannot add an argument "
                      "for this constant");
        return signalPassFailure();
      }
      Value arg = func.getArgument(index);
      cst.getResult().replaceUsesWithIf(arg, readsAsData);
      if (cst->use_empty())
        cst.erase();
    }
  }
};

} // namespace
