//===- LiftConstantParameters.cpp - Weight constants -> parameters --------===//
//
// See Passes.td (soap-lift-constant-parameters).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/NormalizationStatistics.h"
#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseSet.h"
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
    // constant inside a region would be read the same way), the reads that
    // stay constant (normalization statistics), and the order of the ops.
    SmallVector<arith::ConstantOp> weights;
    llvm::DenseMap<Operation *, unsigned> order;
    llvm::DenseSet<OpOperand *> frozen;
    if (!trainStatistics)
      frozen = getNormalizationStatisticReads(func);
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      order[op] = order.size();
      auto cst = dyn_cast<arith::ConstantOp>(op);
      if (!cst)
        return;
      auto type = dyn_cast<RankedTensorType>(cst.getType());
      if (type && type.getRank() > 0 && isa<FloatType>(type.getElementType()))
        weights.push_back(cst);
    });
    MLIRContext *context = &getContext();
    for (arith::ConstantOp cst : weights) {
      SmallVector<OpOperand *> reads;
      for (OpOperand &use : cst->getUses()) {
        if (!readsAsData(use))
          continue;
        if (!frozen.contains(&use))
          reads.push_back(&use);
      }
      if (reads.empty())
        continue;
      llvm::sort(reads, [&](OpOperand *a, OpOperand *b) {
        return std::make_pair(order.lookup(a->getOwner()),
                              a->getOperandNumber()) <
               std::make_pair(order.lookup(b->getOwner()),
                              b->getOperandNumber());
      });
      // A splat read several times: equal values by chance (zero biases, a
      // batch norm's unit scales), which an exporter merged; one parameter
      // per read, at the location of the op that reads it.
      // (A dense_resource blob is no splat.)
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      bool untie = untieSplats && reads.size() > 1 && dense && dense.isSplat();
      SmallVector<SmallVector<OpOperand *>> groups;
      if (untie)
        for (OpOperand *read : reads)
          groups.push_back({read});
      else
        groups.push_back(std::move(reads));
      for (ArrayRef<OpOperand *> group : groups) {
        unsigned index = func.getNumArguments();
        Location loc =
            untie ? group.front()->getOwner()->getLoc() : cst.getLoc();
        if (failed(func.insertArgument(
                index, cst.getType(),
                DictionaryAttr::get(
                    context,
                    {NamedAttribute(
                         StringAttr::get(context,
                                         SOAPDialect::kParameterAttrName),
                         UnitAttr::get(context)),
                     NamedAttribute(
                         StringAttr::get(context,
                                         SOAPDialect::kInitialValueAttrName),
                         cst.getValue())}),
                loc))) {
          cst.emitError("soap-lift-constant-parameters: cannot add an "
                        "argument for this constant");
          return signalPassFailure();
        }
        Value arg = func.getArgument(index);
        for (OpOperand *read : group)
          read->set(arg);
      }
      if (cst->use_empty())
        cst.erase();
    }
  }
};

} // namespace
