//===- LookupPatterns.cpp - Embedding lookups written as reductions -------===//

#include "LookupPatterns.h"

using namespace mlir;

std::optional<soap::IdEqualsLoop>
soap::matchIdEqualsLoop(linalg::GenericOp op, arith::CmpIOp cmp) {
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  Block &body = *op.getBlock();
  auto input = [&](Value v) -> OpOperand * {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body ||
        arg.getArgNumber() >= op.getNumDpsInputs())
      return nullptr;
    OpOperand *operand = op.getDpsInputOperand(arg.getArgNumber());
    return isa<IntegerType>(getElementTypeOrSelf(operand->get())) ? operand
                                                                   : nullptr;
  };
  auto loopOf = [](Value v) -> std::optional<unsigned> {
    if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
      v = cast.getIn();
    if (auto index = v.getDefiningOp<linalg::IndexOp>())
      return index.getDim();
    return std::nullopt;
  };
  for (auto [a, b] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                      std::pair(cmp.getRhs(), cmp.getLhs())})
    if (OpOperand *id = input(a))
      if (std::optional<unsigned> loop = loopOf(b))
        return IdEqualsLoop{id, *loop};
  return std::nullopt;
}

Value soap::idInRange(OpBuilder &b, Location loc, Value id, int64_t rows) {
  Type type = id.getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
  Value limit = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, rows));
  return arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, id, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, limit));
}
