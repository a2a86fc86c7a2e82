//===- FloatType.cpp - The zoo's models in another float type -------------===//
//
// soap-models --dtype=bf16|f16: the model built in f32, then every f32 in
// it made the other type with upstream's AttrTypeReplacer: tensor element
// types (results, block arguments, the function type), scalar constants
// (rounded to nearest even; -inf stays -inf) and dense constants.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

void soapmodels::convertFloatType(ModuleOp module, FloatType to) {
  auto convert = [to](APFloat value) {
    bool lost = false;
    value.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return value;
  };
  AttrTypeReplacer replacer;
  replacer.addReplacement([to](FloatType t) -> std::optional<Type> {
    if (!t.isF32())
      return std::nullopt;
    return to;
  });
  // Attributes whose values are f32 data: converted whole, not walked into
  // (their type alone must not change under their bits).
  replacer.addReplacement(
      [&](FloatAttr a) -> std::optional<std::pair<Attribute, WalkResult>> {
        if (!a.getType().isF32())
          return std::nullopt;
        return std::make_pair(
            Attribute(FloatAttr::get(to, convert(a.getValue()))),
            WalkResult::skip());
      });
  replacer.addReplacement(
      [&](DenseFPElementsAttr a)
          -> std::optional<std::pair<Attribute, WalkResult>> {
        if (!a.getElementType().isF32())
          return std::nullopt;
        Attribute converted = a.mapValues(
            to, [&](const APFloat &v) { return convert(v).bitcastToAPInt(); });
        return std::make_pair(converted, WalkResult::skip());
      });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
}
