//===- ChangeFloatType.cpp - Every float of one type another --------------===//
//
// soap-change-float-type{from=f32 to=bf16}: upstream's AttrTypeReplacer over
// the module, replacing the float type in element types (results, block
// arguments, function types) and converting the values of scalar and dense
// float constants (rounded to nearest even).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/ChangeFloatType.h"
#include "soap/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CHANGEFLOATTYPE
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

FloatType mlir::soap::parseFloatType(MLIRContext *context, StringRef name) {
  if (name == "f32")
    return Float32Type::get(context);
  if (name == "bf16")
    return BFloat16Type::get(context);
  if (name == "f16")
    return Float16Type::get(context);
  return {};
}

void mlir::soap::changeFloatType(ModuleOp module, FloatType from,
                                 FloatType to) {
  auto convert = [to](APFloat value) {
    bool lost = false;
    value.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return value;
  };
  AttrTypeReplacer replacer;
  replacer.addReplacement([from, to](FloatType t) -> std::optional<Type> {
    if (t != from)
      return std::nullopt;
    return to;
  });
  // Attributes whose values are `from` data: converted whole, not walked
  // into (their type alone must not change under their bits).
  replacer.addReplacement(
      [&](FloatAttr a) -> std::optional<std::pair<Attribute, WalkResult>> {
        if (a.getType() != from)
          return std::nullopt;
        return std::make_pair(
            Attribute(FloatAttr::get(to, convert(a.getValue()))),
            WalkResult::skip());
      });
  replacer.addReplacement(
      [&](DenseFPElementsAttr a)
          -> std::optional<std::pair<Attribute, WalkResult>> {
        if (a.getElementType() != from)
          return std::nullopt;
        Attribute converted = a.mapValues(
            to, [&](const APFloat &v) { return convert(v).bitcastToAPInt(); });
        return std::make_pair(converted, WalkResult::skip());
      });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  // Conversions between the two types are now from a type to itself (a
  // mixed-precision product's operands extended to f32, made f32): gone.
  module.walk([](Operation *op) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(op) ||
        op->getOperand(0).getType() != op->getResult(0).getType())
      return;
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  });
}

namespace {
struct ChangeFloatType
    : public mlir::soap::impl::ChangeFloatTypeBase<ChangeFloatType> {
  using ChangeFloatTypeBase::ChangeFloatTypeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FloatType fromType = soap::parseFloatType(&getContext(), from);
    FloatType toType = soap::parseFloatType(&getContext(), to);
    if (!fromType || !toType) {
      mlir::emitError(module.getLoc())
          << "soap-change-float-type: unknown type '" << (fromType ? to : from)
          << "' (expected f32, bf16 or f16)";
      return signalPassFailure();
    }
    soap::changeFloatType(module, fromType, toType);
  }
};
} // namespace
