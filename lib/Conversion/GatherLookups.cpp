//===- GatherLookups.cpp - One-hot select reductions as gathers -----------===//
//
// See Passes.td (soap-gather-lookups).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "LookupPatterns.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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

/// A lookup: `out = select(id == r + offset, table[...], out)` over
/// reduction loop r (a tile of rows [offset, offset + extent of r) once
/// partitioned).
struct Lookup {
  unsigned loop;      // r
  int64_t offset;     // the table's first row in this op
  OpOperand *id;      // an integer input that does not depend on r
  OpOperand *table;   // read through plain loop dimensions, r among them
};

static std::optional<Lookup> matchLookup(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2)
    return std::nullopt;
  std::optional<soap::IdEqualsLoop> test = soap::matchOneHotSelection(op);
  if (!test)
    return std::nullopt;
  Block &body = *op.getBlock();
  auto select = cast<arith::SelectOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  auto tableArg = dyn_cast<BlockArgument>(select.getTrueValue());
  if (!tableArg || tableArg.getOwner() != &body || tableArg.getArgNumber() >= 2)
    return std::nullopt;
  OpOperand *id = test->id;
  OpOperand *table = op.getDpsInputOperand(tableArg.getArgNumber());
  if (id == table)
    return std::nullopt;
  AffineMap idMap = op.getMatchingIndexingMap(id);
  AffineMap tableMap = op.getMatchingIndexingMap(table);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!tableMap.isProjectedPermutation() ||
      !tableMap.isFunctionOfDim(test->loop) ||
      !outMap.isProjectedPermutation() || !idMap.isProjectedPermutation())
    return std::nullopt;
  // Nothing else in the body (the index, its offset and its cast only feed
  // the comparison).
  for (Operation &inner : body.without_terminator())
    if (&inner != select && inner.getResult(0) != select.getCondition() &&
        !isa<linalg::IndexOp, arith::IndexCastOp, arith::ConstantOp,
             arith::AddIOp, affine::AffineApplyOp>(inner))
      return std::nullopt;
  return Lookup{test->loop, test->offset, id, table};
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
        Value inRange = soap::idInRange(b, l, id, lookup.offset, rows);
        Value row = soap::tileRow(b, l, id, inRange, lookup.offset);
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
