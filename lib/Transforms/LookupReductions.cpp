//===- LookupReductions.cpp - Embedding gathers as select reductions ------===//
//
// See Passes.td (soap-lookup-reductions).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_LOOKUPREDUCTIONS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// A gather `out[p] = table[..., id[p], ...]` in a generic's body: the
/// table, which of its dimensions the id indexes, and the loop each other
/// dimension reads (at rowDim: ~0u, unused).
struct Gather {
  Value table;
  unsigned rowDim = 0;
  SmallVector<unsigned> loops;
};

/// The id an index of the extract comes from: a block argument of the
/// generic's one input through casts, or null.
static BlockArgument idArgument(Value index, Block &body) {
  while (Operation *def = index.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
      return nullptr;
    index = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(index);
  if (!arg || arg.getOwner() != &body || arg.getArgNumber() != 0 ||
      !arg.getType().isSignlessInteger())
    return nullptr;
  return arg;
}

static std::optional<Gather> matchGather(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = *op.getBlock();
  auto extract =
      body.getTerminator()->getOperand(0).getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getBlock() != &body)
    return std::nullopt;
  Value table = extract.getTensor();
  auto tableType = dyn_cast<RankedTensorType>(table.getType());
  Type element = op.getDpsInitOperand(0)->get().getType();
  if (op->isAncestor(table.getParentBlock()->getParentOp()) || !tableType ||
      !tableType.hasStaticShape() ||
      !isa<FloatType>(tableType.getElementType()) ||
      cast<RankedTensorType>(element).getElementType() !=
          tableType.getElementType() ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0))
           .isProjectedPermutation() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation())
    return std::nullopt;
  Gather gather;
  gather.table = table;
  bool haveId = false;
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    if (auto loop = index.getDefiningOp<linalg::IndexOp>()) {
      // Each loop at most once (the table's map a projected permutation),
      // over the whole dimension (an operand of the new op must match the
      // loop's extent).
      if (llvm::is_contained(gather.loops, loop.getDim()) ||
          op.getStaticLoopRanges()[loop.getDim()] != tableType.getDimSize(dim))
        return std::nullopt;
      gather.loops.push_back(loop.getDim());
      continue;
    }
    if (haveId || !idArgument(index, body))
      return std::nullopt;
    haveId = true;
    gather.rowDim = dim;
    gather.loops.push_back(~0u); // unused: the row loop
  }
  if (!haveId)
    return std::nullopt;
  // Nothing else computes a value the result depends on (what the export's
  // stripped asserts compared is dead).
  for (Operation &inner : body.without_terminator())
    if (&inner != extract.getOperation() && !isPure(&inner))
      return std::nullopt;
  return gather;
}

/// out[p] = select(id[p] == r, table[.., r, ..], out[p]) over a new
/// reduction loop r (the last), out filled with zeros.
static void rewriteGather(linalg::GenericOp op, const Gather &gather) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  auto extend = [&](AffineMap map) {
    return AffineMap::get(numLoops + 1, 0, map.getResults(), ctx);
  };
  SmallVector<AffineExpr> tableDims;
  for (auto [dim, loop] : llvm::enumerate(gather.loops))
    tableDims.push_back(
        getAffineDimExpr(dim == gather.rowDim ? numLoops : loop, ctx));
  SmallVector<AffineMap> maps = {
      extend(op.getMatchingIndexingMap(op.getDpsInputOperand(0))),
      AffineMap::get(numLoops + 1, 0, tableDims, ctx),
      extend(op.getMatchingIndexingMap(op.getDpsInitOperand(0)))};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::reduction);
  Value init = op.getDpsInitOperand(0)->get();
  Type element = cast<RankedTensorType>(init.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value zeros = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  Value ids = op.getDpsInputOperand(0)->get();
  auto lookup = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{ids, gather.table}, zeros, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value row = linalg::IndexOp::create(nb, nl, numLoops);
        Value rowId =
            arith::IndexCastOp::create(nb, nl, args[0].getType(), row);
        Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                          args[0], rowId);
        Value kept = arith::SelectOp::create(nb, nl, hit, args[1], args[2]);
        linalg::YieldOp::create(nb, nl, kept);
      });
  lookup->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op->replaceAllUsesWith(lookup->getResults());
  op->erase();
}

struct LookupReductionsPass
    : public mlir::soap::impl::LookupReductionsBase<LookupReductionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Gather>> gathers;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<Gather> gather = matchGather(op))
        gathers.push_back({op, *gather});
    });
    for (auto &[op, gather] : gathers)
      rewriteGather(op, gather);
  }
};

} // namespace
