//===- ScatterLookupGradients.cpp - Embedding gradients as atomic adds ----===//
//
// See Passes.td (soap-scatter-lookup-gradients).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "LookupPatterns.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SCATTERLOOKUPGRADIENTS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// A lookup's gradient: `acc + select(id == v, value, 0)` over the loops,
/// `value` computed elementwise from the other inputs.
struct LookupGradient {
  unsigned row;          // v: parallel, indexes the output only
  int64_t offset;        // the output's first row: id == v + offset
  OpOperand *id;         // integer input, does not depend on v
  arith::AddFOp add;     // acc + select
  arith::SelectOp select;
  arith::CmpIOp cmp;
};

static std::optional<LookupGradient> matchLookupGradient(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() < 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  Block &body = *op.getBlock();
  unsigned numInputs = op.getNumDpsInputs();
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value acc = body.getArgument(numInputs);
  Value other = add.getLhs() == acc   ? add.getRhs()
                : add.getRhs() == acc ? add.getLhs()
                                      : Value();
  auto select = other ? other.getDefiningOp<arith::SelectOp>() : nullptr;
  if (!select || !matchPattern(select.getFalseValue(), m_AnyZeroFloat()) ||
      !acc.hasOneUse())
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  std::optional<soap::IdEqualsLoop> test = soap::matchIdEqualsLoop(op, cmp);
  if (!test ||
      op.getIteratorTypesArray()[test->loop] != utils::IteratorType::parallel)
    return std::nullopt;
  OpOperand *id = test->id;
  std::optional<unsigned> row = test->loop;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation() || !outMap.isFunctionOfDim(*row))
    return std::nullopt;
  // No input depends on v; v's index feeds only the comparison; the rest of
  // the body is side-effect free (what computes the added value).
  for (OpOperand *in : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(in).isFunctionOfDim(*row))
      return std::nullopt;
  // (v's index, its offset and its cast: one chain into the comparison.)
  auto feedsOnlyCmp = [&](Operation *index) {
    for (Operation *user = index; user != cmp;) {
      if (!user->hasOneUse())
        return false;
      user = *user->user_begin();
      if (user != cmp &&
          !isa<arith::IndexCastOp, arith::AddIOp, affine::AffineApplyOp>(user))
        return false;
    }
    return true;
  };
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner);
        index && index.getDim() == *row) {
      if (!feedsOnlyCmp(index))
        return std::nullopt;
      continue;
    }
    if (!isMemoryEffectFree(&inner) || inner.getNumRegions() != 0)
      return std::nullopt;
  }
  return LookupGradient{*row, test->offset, id, add, select, cmp};
}

/// The values of `map`'s results at loop indices `ivs` (`row` standing for
/// loop `rowLoop`, absent from `ivs`).
static SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                                    ValueRange ivs, unsigned rowLoop,
                                    Value row) {
  SmallVector<Value> operands;
  for (unsigned d = 0; d < map.getNumDims(); ++d)
    operands.push_back(d == rowLoop ? row
                                    : ivs[d < rowLoop ? d : d - 1]);
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      indices.push_back(operands[dim.getPosition()]);
      continue;
    }
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), operands));
  }
  return indices;
}

static void rewrite(RewriterBase &rewriter, linalg::GenericOp op,
                    const LookupGradient &g) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> lower, upper, steps;
  for (auto [d, extent] : llvm::enumerate(extents)) {
    if (d == g.row)
      continue;
    lower.push_back(zero);
    upper.push_back(arith::ConstantIndexOp::create(rewriter, loc, extent));
    steps.push_back(one);
  }
  Value out = op.getDpsInitOperand(0)->get();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  int64_t rows = extents[g.row];
  Block &body = *op.getBlock();
  scf::ParallelOp::create(
      rewriter, loc, lower, upper, steps,
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        auto load = [&](OpBuilder &at, OpOperand *in) {
          return memref::LoadOp::create(
                     at, l, in->get(),
                     indicesAt(at, l, op.getMatchingIndexingMap(in), ivs,
                               g.row, zero))
              .getResult();
        };
        Value id = load(b, g.id);
        Value inRange = soap::idInRange(b, l, id, g.offset, rows);
        scf::IfOp::create(b, l, inRange, [&](OpBuilder &t, Location tl) {
          Value row = soap::tileRow(t, tl, id, Value(), g.offset);
          // The added value: the body's computation on the other inputs'
          // elements (loaded where used), its loop indices the loop's.
          IRMapping mapping;
          for (OpOperand *in : op.getDpsInputOperands()) {
            BlockArgument arg = op.getMatchingBlockArgument(in);
            if (in == g.id)
              mapping.map(arg, id);
            else if (!arg.use_empty())
              mapping.map(arg, load(t, in));
          }
          for (Operation &inner : body.without_terminator()) {
            if (&inner == g.add || &inner == g.select || &inner == g.cmp)
              continue;
            if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
              unsigned d = index.getDim();
              mapping.map(index.getResult(),
                          d == g.row ? row : ivs[d < g.row ? d : d - 1]);
              continue;
            }
            t.clone(inner, mapping);
          }
          Value value = mapping.lookupOrDefault(
              arith::SelectOp(g.select).getTrueValue());
          memref::AtomicRMWOp::create(
              t, tl, arith::AtomicRMWKind::addf, value, out,
              indicesAt(t, tl, outMap, ivs, g.row, row));
          scf::YieldOp::create(t, tl);
        });
      });
  rewriter.eraseOp(op);
}

struct ScatterLookupGradients
    : public soap::impl::ScatterLookupGradientsBase<ScatterLookupGradients> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, LookupGradient>> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<LookupGradient> g = matchLookupGradient(op))
        if (llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
          found.emplace_back(op, *g);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, g] : found)
      rewrite(rewriter, op, g);
  }
};

} // namespace
