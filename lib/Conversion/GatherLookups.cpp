//===- GatherLookups.cpp - One-hot select reductions as gathers -----------===//
//
// See Passes.td (soap-gather-lookups).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "LookupPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_GATHERLOOKUPS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// A lookup: `out = select(id == r, table[...], out)` over reduction loop r.
struct Lookup {
  unsigned loop;      // r
  OpOperand *id;      // an integer input that does not depend on r
  OpOperand *table;   // read through plain loop dimensions, r among them
};

static std::optional<Lookup> matchLookup(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op.getNumDpsInputs() != 2)
    return std::nullopt;
  Block &body = *op.getBlock();
  if (body.getOperations().size() > 5) // index, cast, cmpi, select, yield
    return std::nullopt;
  auto select =
      body.getTerminator()->getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select || select.getFalseValue() != body.getArgument(2))
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  std::optional<soap::IdEqualsLoop> test = soap::matchIdEqualsLoop(op, cmp);
  auto tableArg = dyn_cast<BlockArgument>(select.getTrueValue());
  if (!test || !tableArg || tableArg.getOwner() != &body ||
      tableArg.getArgNumber() >= 2 ||
      op.getIteratorTypesArray()[test->loop] != utils::IteratorType::reduction)
    return std::nullopt;
  OpOperand *id = test->id;
  std::optional<unsigned> loop = test->loop;
  OpOperand *table = op.getDpsInputOperand(tableArg.getArgNumber());
  if (id == table)
    return std::nullopt;
  AffineMap idMap = op.getMatchingIndexingMap(id);
  AffineMap tableMap = op.getMatchingIndexingMap(table);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (idMap.isFunctionOfDim(*loop) || !tableMap.isProjectedPermutation() ||
      !tableMap.isFunctionOfDim(*loop) || !outMap.isProjectedPermutation() ||
      !idMap.isProjectedPermutation())
    return std::nullopt;
  // Nothing else in the body (the index and its cast only feed the
  // comparison).
  for (Operation &inner : body.without_terminator())
    if (&inner != select && &inner != cmp &&
        !isa<linalg::IndexOp, arith::IndexCastOp>(inner))
      return std::nullopt;
  return Lookup{*loop, id, table};
}

/// Replaces the lookup `op` with a parallel generic over its other loops
/// that extracts the id's row.
static void rewriteLookup(RewriterBase &rewriter, linalg::GenericOp op,
                          const Lookup &lookup) {
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  int64_t rows = op.getStaticLoopRanges()[lookup.loop];
  // Loops without r, renumbered.
  SmallVector<AffineExpr> dropR;
  for (unsigned d = 0; d < numLoops; ++d)
    dropR.push_back(d < lookup.loop   ? getAffineDimExpr(d, ctx)
                    : d > lookup.loop ? getAffineDimExpr(d - 1, ctx)
                                      : getAffineConstantExpr(0, ctx));
  auto renumber = [&](AffineMap map) {
    return map.replaceDimsAndSymbols(dropR, {}, numLoops - 1, 0);
  };
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<AffineMap> maps = {renumber(op.getMatchingIndexingMap(lookup.id)),
                                 renumber(op.getMatchingIndexingMap(init))};
  SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                             utils::IteratorType::parallel);
  AffineMap tableMap = op.getMatchingIndexingMap(lookup.table);
  Value table = lookup.table->get();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto gather = linalg::GenericOp::create(
      rewriter, loc, op.getResultTypes(), ValueRange{lookup.id->get()},
      ValueRange{init->get()}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value id = args[0];
        Value inRange = soap::idInRange(b, l, id, rows);
        Value zero =
            arith::ConstantOp::create(b, l, b.getIntegerAttr(id.getType(), 0));
        Value safe = arith::SelectOp::create(b, l, inRange, id, zero);
        Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), safe);
        SmallVector<Value> indices;
        for (AffineExpr e : tableMap.getResults()) {
          unsigned d = cast<AffineDimExpr>(e).getPosition();
          indices.push_back(d == lookup.loop
                                ? row
                                : linalg::IndexOp::create(
                                      b, l, d < lookup.loop ? d : d - 1)
                                      .getResult());
        }
        Value value = tensor::ExtractOp::create(b, l, table, indices);
        linalg::YieldOp::create(
            b, l, arith::SelectOp::create(b, l, inRange, value, args[1])
                      .getResult());
      });
  rewriter.replaceOp(op, gather.getResults());
}

struct GatherLookups
    : public soap::impl::GatherLookupsBase<GatherLookups> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Lookup>> lookups;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Lookup> lookup = matchLookup(op))
        if (!ShapedType::isDynamic(op.getStaticLoopRanges()[lookup->loop]))
          lookups.emplace_back(op, *lookup);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, lookup] : lookups)
      rewriteLookup(rewriter, op, lookup);
  }
};

} // namespace
