//===- NormalizationStatistics.cpp - Frozen normalization statistics ------===//
//
// See NormalizationStatistics.h.
//
//===----------------------------------------------------------------------===//

#include "soap/Analysis/NormalizationStatistics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

/// `v` with float extensions and truncations looked through.
static Value throughCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::TruncFOp, arith::ExtFOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The block argument `v` is, if it is one of `body`'s and nothing else in
/// the body reads it.
static BlockArgument soleArgument(Value v, Block &body) {
  auto arg = dyn_cast<BlockArgument>(throughCasts(v));
  if (!arg || arg.getOwner() != &body || !arg.hasOneUse())
    return nullptr;
  return arg;
}

/// Whether `v` is computed in `body` from no block argument (an epsilon).
static bool isArgumentFree(Value v, Block &body) {
  if (isa<BlockArgument>(v))
    return cast<BlockArgument>(v).getOwner() != &body;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return true;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return isArgumentFree(o, body); });
}

llvm::SmallVector<OpOperand *, 2>
mlir::soap::getNormalizationStatistics(linalg::LinalgOp op) {
  llvm::SmallVector<OpOperand *, 2> statistics;
  if (op->getNumRegions() != 1 || op->getRegion(0).empty())
    return statistics;
  Block &body = op->getRegion(0).front();
  // The argument `v` is read as in `v + eps`, `eps + v`, with `add` the
  // operand of `root` (rsqrt / sqrt).
  auto varianceOf = [&](Value root, bool reciprocal) -> BlockArgument {
    Operation *def = root.getDefiningOp();
    if (!def || def->getBlock() != &body ||
        !(reciprocal ? isa<math::RsqrtOp>(def) : isa<math::SqrtOp>(def)))
      return nullptr;
    auto add = def->getOperand(0).getDefiningOp<arith::AddFOp>();
    if (!add)
      return nullptr;
    for (unsigned k = 0; k < 2; ++k)
      if (BlockArgument var = soleArgument(add->getOperand(k), body))
        if (isArgumentFree(add->getOperand(1 - k), body))
          return var;
    return nullptr;
  };
  for (Operation &inner : body.without_terminator()) {
    auto sub = dyn_cast<arith::SubFOp>(inner);
    if (!sub || !sub->hasOneUse())
      continue;
    BlockArgument mean = soleArgument(sub.getRhs(), body);
    if (!mean || isArgumentFree(sub.getLhs(), body))
      continue;
    Operation *user = *sub->getUsers().begin();
    BlockArgument var;
    if (isa<arith::MulFOp>(user))
      var = varianceOf(
          user->getOperand(user->getOperand(0) == sub.getResult() ? 1 : 0),
          /*reciprocal=*/true);
    else if (auto div = dyn_cast<arith::DivFOp>(user);
             div && div.getLhs() == sub)
      var = varianceOf(div.getRhs(), /*reciprocal=*/false);
    if (!var || var == mean)
      continue;
    for (BlockArgument arg : {mean, var})
      if (arg.getArgNumber() < op.getNumDpsInputs())
        statistics.push_back(op.getDpsInputOperand(arg.getArgNumber()));
  }
  return statistics;
}

llvm::DenseSet<OpOperand *>
mlir::soap::getNormalizationStatisticReads(Operation *root) {
  llvm::DenseSet<OpOperand *> reads;
  root->walk([&](linalg::LinalgOp op) {
    for (OpOperand *read : getNormalizationStatistics(op))
      reads.insert(read);
  });
  return reads;
}
