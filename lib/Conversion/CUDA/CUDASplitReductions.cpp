//===- CUDASplitReductions.cpp - More threads for reductions --------------===//
//
// See Passes.td (soap-cuda-split-reductions).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "soap/Analysis/IterationSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDASPLITREDUCTIONS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// How one loop of the op is rewritten.
struct LoopPlan {
  int64_t extent = 1;
  /// 1: stays as it is; `extent`: made parallel whole; else split into an
  /// outer parallel loop of `factor` and an inner reduction loop.
  int64_t factor = 1;
  bool promoted() const { return factor > 1; }
  bool split() const { return factor > 1 && factor < extent; }
};

struct CUDASplitReductions
    : public mlir::soap::impl::CUDASplitReductionsBase<CUDASplitReductions> {
  using CUDASplitReductionsBase::CUDASplitReductionsBase;

  /// acc + a * b over two inputs: a contraction or a convolution filter
  /// gradient, for cuBLAS / cuDNN.
  static bool isMultiplyAdd(linalg::GenericOp op) {
    if (op.getNumDpsInputs() != 2)
      return false;
    Block &body = *op.getBlock();
    if (body.getOperations().size() != 3)
      return false;
    Operation *add = body.getTerminator()->getOperand(0).getDefiningOp();
    return add && isa<arith::AddFOp>(add) &&
           llvm::any_of(add->getOperands(), [](Value v) {
             return isa_and_nonnull<arith::MulFOp>(v.getDefiningOp());
           });
  }

  /// Splits `op`; `combination` is the op that combines the partials.
  LogicalResult splitOne(IRRewriter &rewriter, linalg::GenericOp op,
                         linalg::GenericOp &combination);

  void runOnOperation() override {
    if (minThreads < 1 || maxThreads < minThreads || minReduction < 2 ||
        minPerThread < 1) {
      getOperation()->emitError()
          << "soap-cuda-split-reductions: need 1 <= min-threads <= "
             "max-threads, min-reduction >= 2 and min-per-thread >= 1";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // A long combination is split again: a reduction tree.
    while (!ops.empty()) {
      linalg::GenericOp combination;
      if (succeeded(splitOne(rewriter, ops.pop_back_val(), combination)))
        ops.push_back(combination);
    }
  }
};

LogicalResult CUDASplitReductions::splitOne(IRRewriter &rewriter,
                                            linalg::GenericOp op,
                                            linalg::GenericOp &combination) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      op.getNumReductionLoops() == 0 || isMultiplyAdd(op))
    return failure();
  FailureOr<ReductionKind> kind = getReductionCombiner(op);
  if (failed(kind))
    return failure();
  Operation *combiner =
      op.getBlock()->getTerminator()->getOperand(0).getDefiningOp();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation(/*allowZeroInResults=*/false))
    return failure();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic))
    return failure();
  auto iterators = op.getIteratorTypesArray();
  int64_t threads = 1, reduced = 1;
  for (auto [extent, iterator] : llvm::zip(extents, iterators))
    (iterator == utils::IteratorType::parallel ? threads : reduced) *= extent;
  if (threads >= minThreads || reduced < minReduction)
    return failure();
  // Each thread of the first op still reduces `min-per-thread` elements or
  // more; its combination is split again if it is long enough.
  int64_t cap = std::min<int64_t>(maxThreads, threads * (reduced / minPerThread));

  // Which reduction loops become parallel, outermost first.
  SmallVector<LoopPlan> plan(extents.size());
  bool any = false;
  for (unsigned l = 0; l < extents.size(); ++l) {
    int64_t extent = extents[l];
    plan[l].extent = extent;
    if (iterators[l] != utils::IteratorType::reduction ||
        threads >= minThreads || extent < 2)
      continue;
    if (threads * extent <= cap) {
      plan[l].factor = extent;
      threads *= extent;
      any = true;
      continue;
    }
    // Splitting needs every read of the loop to be a whole dimension (it is
    // reshaped into outer x inner).
    bool plainReads = llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap m) {
      return llvm::all_of(m.getResults(), [&](AffineExpr e) {
        return isa<AffineDimExpr>(e) || !e.isFunctionOfDim(l);
      });
    });
    if (!plainReads)
      break;
    for (int64_t k = std::min(cap / threads, extent - 1); k >= 2; --k)
      if (extent % k == 0) {
        plan[l].factor = k;
        threads *= k;
        any = true;
        break;
      }
    break; // inner loops stay sequential
  }
  if (!any)
    return failure();

  // New loops: each old loop in place; a split one as (outer, inner).
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> replacement;
  SmallVector<utils::IteratorType> newIterators;
  SmallVector<unsigned> promotedDims; // new dims of the partials' extra dims
  SmallVector<int64_t> promotedExtents;
  SmallVector<unsigned> newDimOf(extents.size());
  for (auto [l, p] : llvm::enumerate(plan)) {
    unsigned d = newIterators.size();
    newDimOf[l] = d;
    if (p.split()) {
      replacement.push_back(getAffineDimExpr(d, ctx) * (p.extent / p.factor) +
                            getAffineDimExpr(d + 1, ctx));
      newIterators.push_back(utils::IteratorType::parallel);
      newIterators.push_back(utils::IteratorType::reduction);
    } else {
      replacement.push_back(getAffineDimExpr(d, ctx));
      newIterators.push_back(p.promoted() ? utils::IteratorType::parallel
                                          : iterators[l]);
    }
    if (p.promoted()) {
      promotedDims.push_back(d);
      promotedExtents.push_back(p.factor);
    }
  }
  unsigned numNewDims = newIterators.size();
  // Inputs: a dimension a split loop indexes becomes (outer, inner).
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    SmallVector<AffineExpr> results;
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    bool expands = false;
    for (auto [r, e] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      int64_t next = shape.size();
      if (dim && plan[dim.getPosition()].split()) {
        const LoopPlan &p = plan[dim.getPosition()];
        unsigned d = newDimOf[dim.getPosition()];
        results.push_back(getAffineDimExpr(d, ctx));
        results.push_back(getAffineDimExpr(d + 1, ctx));
        groups.push_back({next, next + 1});
        shape.append({p.factor, p.extent / p.factor});
        expands = true;
        continue;
      }
      results.push_back(e.replaceDimsAndSymbols(replacement, {}));
      groups.push_back({next});
      shape.push_back(type ? type.getDimSize(r) : 1);
    }
    Value value = in->get();
    if (expands)
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
          value, groups);
    inputs.push_back(value);
    maps.push_back(AffineMap::get(numNewDims, 0, results, ctx));
  }
  SmallVector<AffineExpr> partialExprs;
  auto initType = cast<RankedTensorType>(op.getDpsInitOperand(0)->get().getType());
  SmallVector<int64_t> partialShape(initType.getShape());
  for (AffineExpr e : outMap.getResults())
    partialExprs.push_back(getAffineDimExpr(
        newDimOf[cast<AffineDimExpr>(e).getPosition()], ctx));
  for (auto [d, extent] : llvm::zip(promotedDims, promotedExtents)) {
    partialExprs.push_back(getAffineDimExpr(d, ctx));
    partialShape.push_back(extent);
  }
  maps.push_back(AffineMap::get(numNewDims, 0, partialExprs, ctx));

  // 1. Partial results, from the combiner's identity.
  Type elem = initType.getElementType();
  auto partialType = RankedTensorType::get(partialShape, elem);
  Value identity = arith::ConstantOp::create(rewriter, loc,
                                             getReductionIdentity(rewriter, *kind, elem));
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, elem);
  Value start = linalg::FillOp::create(rewriter, loc, identity, empty)
                    .getResult(0);
  auto partial = linalg::GenericOp::create(rewriter, loc, TypeRange{partialType},
                                           inputs, ValueRange{start}, maps,
                                           newIterators);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().end());
  // linalg.index of an old loop: its new loop, or outer * size + inner.
  SmallVector<linalg::IndexOp> indices;
  partial.getRegion().walk([&](linalg::IndexOp index) {
    indices.push_back(index);
  });
  for (linalg::IndexOp index : indices) {
    unsigned l = index.getDim();
    rewriter.setInsertionPoint(index);
    Value outer = linalg::IndexOp::create(rewriter, index.getLoc(), newDimOf[l]);
    Value value = outer;
    if (plan[l].split()) {
      Value inner =
          linalg::IndexOp::create(rewriter, index.getLoc(), newDimOf[l] + 1);
      Value size = arith::ConstantIndexOp::create(
          rewriter, index.getLoc(), plan[l].extent / plan[l].factor);
      Value scaled = arith::MulIOp::create(rewriter, index.getLoc(), outer, size);
      value = arith::AddIOp::create(rewriter, index.getLoc(), scaled, inner);
    }
    rewriter.replaceOp(index, value);
  }

  // 2. The partials combined into the original output and start value.
  rewriter.setInsertionPoint(op);
  unsigned rank = initType.getRank();
  unsigned numLoops = rank + promotedDims.size();
  SmallVector<utils::IteratorType> combineIterators(
      rank, utils::IteratorType::parallel);
  combineIterators.append(promotedDims.size(), utils::IteratorType::reduction);
  SmallVector<AffineMap> combineMaps = {
      AffineMap::getMultiDimIdentityMap(numLoops, ctx),
      AffineMap::getMinorIdentityMap(numLoops, rank, ctx)};
  // (d0, ..., d_rank-1) of the loops: the leading ones.
  combineMaps[1] = AffineMap::get(
      numLoops, 0,
      llvm::to_vector(llvm::map_range(llvm::seq<unsigned>(0, rank),
                                      [&](unsigned d) {
                                        return getAffineDimExpr(d, ctx);
                                      })),
      ctx);
  OperationName combinerName = combiner->getName();
  NamedAttrList combinerAttrs(combiner->getAttrs());
  auto combine = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, ValueRange{partial.getResult(0)},
      ValueRange{op.getDpsInitOperand(0)->get()}, combineMaps,
      combineIterators, [&](OpBuilder &b, Location l, ValueRange args) {
        OperationState state(l, combinerName);
        state.addOperands({args[0], args[1]});
        state.addTypes(args[1].getType());
        state.addAttributes(combinerAttrs);
        Operation *c = b.create(state);
        linalg::YieldOp::create(b, l, c->getResult(0));
      });
  rewriter.replaceOp(op, combine.getResults());
  combination = combine;
  return success();
}

} // namespace
