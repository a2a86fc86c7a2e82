//===- Lookup.cpp - Embedding lookups written as reductions ---------------===//

#include "soap/Analysis/Lookup.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// `v` is `linalg.index r` plus a constant: the loop and the constant.
static std::optional<std::pair<unsigned, int64_t>> shiftedLoopIndex(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  int64_t offset = 0;
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    APInt c;
    if (matchPattern(add.getRhs(), m_ConstantInt(&c)))
      v = add.getLhs();
    else if (matchPattern(add.getLhs(), m_ConstantInt(&c)))
      v = add.getRhs();
    else
      return std::nullopt;
    offset = c.getSExtValue();
  } else if (auto apply = v.getDefiningOp<affine::AffineApplyOp>()) {
    // One operand is the index, the others constants: the map must be
    // `index + constant` once the constants are substituted.
    AffineMap map = apply.getAffineMap();
    SmallVector<AffineExpr> dims, symbols;
    Value index;
    unsigned numDims = map.getNumDims();
    for (auto [i, operand] : llvm::enumerate(apply.getMapOperands())) {
      APInt c;
      AffineExpr e;
      if (matchPattern(operand, m_ConstantInt(&c))) {
        e = getAffineConstantExpr(c.getSExtValue(), apply.getContext());
      } else if (!index) {
        index = operand;
        e = getAffineDimExpr(0, apply.getContext());
      } else {
        return std::nullopt;
      }
      (i < numDims ? dims : symbols).push_back(e);
    }
    if (!index)
      return std::nullopt;
    AffineExpr e = simplifyAffineExpr(
        map.getResult(0).replaceDimsAndSymbols(dims, symbols), 1, 0);
    AffineExpr base = getAffineDimExpr(0, apply.getContext());
    auto sum = dyn_cast<AffineBinaryOpExpr>(e);
    if (e == base) {
      offset = 0;
    } else if (sum && sum.getKind() == AffineExprKind::Add &&
               sum.getLHS() == base && isa<AffineConstantExpr>(sum.getRHS())) {
      offset = cast<AffineConstantExpr>(sum.getRHS()).getValue();
    } else {
      return std::nullopt;
    }
    v = index;
  }
  if (auto index = v.getDefiningOp<linalg::IndexOp>())
    return std::make_pair(static_cast<unsigned>(index.getDim()), offset);
  return std::nullopt;
}

std::optional<soap::IdEqualsLoop> soap::matchIdEqualsLoop(linalg::LinalgOp op,
                                                          arith::CmpIOp cmp) {
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
  for (auto [a, b] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                      std::pair(cmp.getRhs(), cmp.getLhs())})
    if (OpOperand *id = input(a))
      if (auto loop = shiftedLoopIndex(b))
        return IdEqualsLoop{id, loop->first, loop->second};
  return std::nullopt;
}

/// True when `v` is computed in `body` from `acc`.
static bool readsValue(Value v, Value acc, Block *body) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value w = work.pop_back_val();
    if (w == acc)
      return true;
    Operation *def = w.getDefiningOp();
    if (def && def->getBlock() == body && seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

std::optional<soap::IdEqualsLoop>
soap::matchOneHotSelection(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1 ||
      !op.getBlock())
    return std::nullopt;
  Block *body = op.getBlock();
  Value acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto select =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select || select->getBlock() != body || select.getFalseValue() != acc ||
      readsValue(select.getTrueValue(), acc, body))
    return std::nullopt;
  std::optional<IdEqualsLoop> test = matchIdEqualsLoop(
      op, select.getCondition().getDefiningOp<arith::CmpIOp>());
  if (!test ||
      op.getIteratorTypesArray()[test->loop] !=
          utils::IteratorType::reduction ||
      op.getMatchingIndexingMap(test->id).isFunctionOfDim(test->loop))
    return std::nullopt;
  return test;
}
