//===- ChangeFloatType.cpp - Every float of one type another --------------===//
//
// soap-change-float-type{from=bf16,f16 to=f32}: upstream's AttrTypeReplacer
// over the module, replacing the float type in element types (results, block
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

void mlir::soap::changeFloatType(ModuleOp module, ArrayRef<FloatType> from,
                                 FloatType to) {
  auto replaced = [&](Type t) { return llvm::is_contained(from, t); };
  auto convert = [to](APFloat value) {
    bool lost = false;
    value.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return value;
  };
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](FloatType t) -> std::optional<Type> {
    if (!replaced(t))
      return std::nullopt;
    return to;
  });
  // Attributes whose values are `from` data: converted whole, not walked
  // into (their type alone must not change under their bits).
  replacer.addReplacement(
      [&](FloatAttr a) -> std::optional<std::pair<Attribute, WalkResult>> {
        if (!replaced(a.getType()))
          return std::nullopt;
        return std::make_pair(
            Attribute(FloatAttr::get(to, convert(a.getValue()))),
            WalkResult::skip());
      });
  replacer.addReplacement(
      [&](DenseFPElementsAttr a)
          -> std::optional<std::pair<Attribute, WalkResult>> {
        if (!replaced(a.getElementType()))
          return std::nullopt;
        Attribute converted = a.mapValues(
            to, [&](const APFloat &v) { return convert(v).bitcastToAPInt(); });
        return std::make_pair(converted, WalkResult::skip());
      });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  // The conversions between float types, rebuilt for their new types: gone
  // where both are one type now (a mixed-precision product's operands
  // extended to f32, made f32), a truncation where an extension now
  // narrows and the reverse, through f32 between f16 and bf16.
  SmallVector<Operation *> casts;
  module.walk([&](Operation *op) {
    if (isa<arith::ExtFOp, arith::TruncFOp>(op))
      casts.push_back(op);
  });
  for (Operation *op : casts) {
    Value in = op->getOperand(0);
    auto from = cast<FloatType>(getElementTypeOrSelf(in.getType()));
    auto to = cast<FloatType>(getElementTypeOrSelf(op->getResult(0).getType()));
    Value out = in;
    if (from != to) {
      bool valid = isa<arith::ExtFOp>(op) ? from.getWidth() < to.getWidth()
                                          : from.getWidth() > to.getWidth();
      if (valid)
        continue;
      OpBuilder b(op);
      auto convert = [&](Value v, FloatType t) -> Value {
        unsigned w = cast<FloatType>(v.getType()).getWidth();
        if (w < t.getWidth())
          return arith::ExtFOp::create(b, op->getLoc(), t, v);
        return arith::TruncFOp::create(b, op->getLoc(), t, v);
      };
      if (from.getWidth() == to.getWidth())
        out = convert(convert(in, b.getF32Type()), to);
      else
        out = convert(in, to);
    }
    op->getResult(0).replaceAllUsesWith(out);
    op->erase();
  }
}

namespace {
struct ChangeFloatType
    : public mlir::soap::impl::ChangeFloatTypeBase<ChangeFloatType> {
  using ChangeFloatTypeBase::ChangeFloatTypeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<FloatType> fromTypes;
    for (const std::string &name : from) {
      fromTypes.push_back(soap::parseFloatType(&getContext(), name));
      if (!fromTypes.back())
        return unknown(name);
    }
    FloatType toType = soap::parseFloatType(&getContext(), to);
    if (!toType)
      return unknown(to);
    soap::changeFloatType(module, fromTypes, toType);
  }

  void unknown(StringRef name) {
    mlir::emitError(getOperation().getLoc())
        << "soap-change-float-type: unknown type '" << name
        << "' (expected f32, bf16 or f16)";
    signalPassFailure();
  }
};
} // namespace
