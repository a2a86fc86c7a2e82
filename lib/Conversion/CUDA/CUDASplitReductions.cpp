//===- CUDASplitReductions.cpp - More threads for reductions --------------===//
//
// See Passes.td (soap-cuda-split-reductions).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "CUDAPatterns.h"

#include "soap/Analysis/IterationSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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
  /// The size of the loop's parallel part: 1, the loop stays as it is;
  /// `extent`: made parallel whole; else the loop is split in two.
  int64_t factor = 1;
  /// The lead input's contiguous loop: its parallel part is the inner one
  /// (index = outer * factor + inner) and becomes the new op's last loop,
  /// so that consecutive threads read consecutive elements. Otherwise a
  /// split loop's parallel part is the outer one (index = outer * (extent /
  /// factor) + inner), each thread reading a run of the loop.
  bool interleaved = false;
  bool promoted() const { return factor > 1; }
  bool split() const { return factor > 1 && factor < extent; }
  /// The size of a split loop's inner part.
  int64_t innerSize() const { return interleaved ? factor : extent / factor; }
};

/// The op's largest input and the reduction loop that indexes its
/// innermost (contiguous) dimension.
struct ContiguousLoop {
  OpOperand *input;
  unsigned loop;
};

/// The contiguous reduction loop of the op's largest input, if any.
static std::optional<ContiguousLoop>
contiguousReductionLoop(linalg::GenericOp op) {
  OpOperand *lead = nullptr;
  int64_t most = 0;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
        type.getNumElements() <= most)
      continue;
    most = type.getNumElements();
    lead = in;
  }
  if (!lead)
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(
      op.getMatchingIndexingMap(lead).getResults().back());
  if (!dim || op.getIteratorTypesArray()[dim.getPosition()] !=
                  utils::IteratorType::reduction)
    return std::nullopt;
  return ContiguousLoop{lead, dim.getPosition()};
}

/// `op` with the run of reduction loops that ends at the contiguous loop
/// `c` and that every operand reads as one run of adjacent dimensions (h and
/// w of an NCHW input) merged into one loop (operands reshaped), so that the
/// interleaved split can take more than a row: a 14x14 image offers 196
/// elements, not 14. Failure if there is no such run of two or more. (When
/// the split then does not happen, the merged op stays: the same
/// computation over reshaped views of the same tensors.)
static FailureOr<linalg::GenericOp>
mergeContiguousRun(IRRewriter &rewriter, linalg::GenericOp op,
                   const ContiguousLoop &c) {
  AffineMap map = op.getMatchingIndexingMap(c.input);
  auto iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  ReassociationIndices run = {static_cast<int64_t>(c.loop)};
  for (int r = static_cast<int>(map.getNumResults()) - 2; r >= 0; --r) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    if (!dim || dim.getPosition() + 1 != run.front() ||
        iterators[dim.getPosition()] != utils::IteratorType::reduction)
      break;
    ReassociationIndices longer = {static_cast<int64_t>(dim.getPosition())};
    longer.append(run.begin(), run.end());
    if (!linalg::areDimSequencesPreserved(maps, {longer}))
      break;
    run = std::move(longer);
  }
  if (run.size() < 2)
    return failure();
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {run}, rewriter);
  if (failed(collapsed))
    return failure();
  rewriter.replaceOp(op, collapsed->results);
  return cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

/// The parallel part of the contiguous loop: the largest divisor of
/// `extent` of at most `budget` that is a multiple of 8 (a 32-byte sector
/// of f32), else the largest; 1 if none.
static int64_t contiguousFactor(int64_t extent, int64_t budget) {
  int64_t limit = std::min(budget, extent);
  int64_t largest = 1, largestOf8 = 0;
  for (int64_t k = 2; k <= limit; ++k)
    if (extent % k == 0) {
      largest = k;
      if (k % 8 == 0)
        largestOf8 = k;
    }
  return largestOf8 ? largestOf8 : largest;
}

struct CUDASplitReductions
    : public mlir::soap::impl::CUDASplitReductionsBase<CUDASplitReductions> {
  using CUDASplitReductionsBase::CUDASplitReductionsBase;

  /// Splits `op`; `combination` is the op that combines the partials.
  LogicalResult splitOne(IRRewriter &rewriter, linalg::GenericOp op,
                         linalg::GenericOp &combination);

  /// Which loops of a reduction with fewer than `min-threads` outputs
  /// (`threads`) become parallel, at most `cap` threads in all; failure if
  /// none.
  LogicalResult planFewOutputs(linalg::GenericOp op,
                               MutableArrayRef<LoopPlan> plan,
                               std::optional<unsigned> lead, int64_t threads,
                               int64_t cap,
                               function_ref<bool(unsigned)> plainReads);

  /// The partials op and their combination as `plan` says.
  LogicalResult rewrite(IRRewriter &rewriter, linalg::GenericOp op,
                        ArrayRef<LoopPlan> plan, ArrayRef<ReductionKind> kinds,
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
  // cuBLAS and cuDNN compute contractions and filter gradients. Several
  // outputs (sibling reductions merged by soap-cuda-fuse-sibling-reductions)
  // share the partials' layout: the same map each.
  if (!cuda::isSplittableReduction(op))
    return failure();
  SmallVector<ReductionKind> kinds = *getReductionCombiners(op);
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic))
    return failure();
  auto iterators = op.getIteratorTypesArray();
  int64_t threads = 1, reduced = 1;
  for (auto [extent, iterator] : llvm::zip(extents, iterators))
    (iterator == utils::IteratorType::parallel ? threads : reduced) *= extent;
  if (reduced < minReduction)
    return failure();
  if (std::optional<ContiguousLoop> run = contiguousReductionLoop(op))
    if (FailureOr<linalg::GenericOp> merged =
            mergeContiguousRun(rewriter, op, *run);
        succeeded(merged)) {
      op = *merged;
      extents = op.getStaticLoopRanges();
      iterators = op.getIteratorTypesArray();
    }
  // Splitting a loop needs every read of it to be a whole dimension (it is
  // reshaped into outer x inner).
  auto plainReads = [&](unsigned l) {
    return llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap m) {
      return llvm::all_of(m.getResults(), [&](AffineExpr e) {
        return isa<AffineDimExpr>(e) || !e.isFunctionOfDim(l);
      });
    });
  };
  SmallVector<LoopPlan> plan(extents.size());
  for (auto [l, extent] : llvm::enumerate(extents))
    plan[l].extent = extent;
  std::optional<ContiguousLoop> contiguous = contiguousReductionLoop(op);
  std::optional<unsigned> lead;
  if (contiguous)
    lead = contiguous->loop;

  if (threads >= minThreads) {
    // Enough threads, but each reads its own run of the contiguous loop: a
    // warp's request touches 32 sectors for 4 sectors' worth. One sector's
    // worth of elements per output in parallel instead (8 f32), each
    // thread still summing `min-per-thread` or more: a warp reads 4 rows'
    // first sectors, then their second ones, ... and the partials (1/8 or
    // less of what the op reads) are summed by a second op.
    if (!lead)
      return failure();
    int64_t extent = extents[*lead];
    Type element = getElementTypeOrSelf(contiguous->input->get());
    unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
    int64_t sector = bits && bits <= 256 ? 256 / bits : 1;
    if (sector < 2 || extent % sector != 0 ||
        reduced / sector < minPerThread || !plainReads(*lead))
      return failure();
    plan[*lead].factor = sector;
    plan[*lead].interleaved = true;
  } else {
    // Each thread of the first op still reduces `min-per-thread` elements
    // or more; its combination is split again if it is long enough.
    int64_t cap =
        std::min<int64_t>(maxThreads, threads * (reduced / minPerThread));
    if (failed(planFewOutputs(op, plan, lead, threads, cap, plainReads)))
      return failure();
  }
  return rewrite(rewriter, op, plan, kinds, combination);
}

LogicalResult CUDASplitReductions::planFewOutputs(
    linalg::GenericOp op, MutableArrayRef<LoopPlan> plan,
    std::optional<unsigned> lead, int64_t threads, int64_t cap,
    function_ref<bool(unsigned)> plainReads) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  bool any = false;
  // First the lead input's contiguous loop, interleaved: a warp's threads
  // read whole sectors.
  if (lead) {
    int64_t factor = contiguousFactor(extents[*lead], cap / threads);
    if (factor > 1 && (factor == extents[*lead] || plainReads(*lead))) {
      plan[*lead].factor = factor;
      plan[*lead].interleaved = true;
      threads *= factor;
      any = true;
    }
  }
  // Then other reduction loops, outermost first.
  for (unsigned l = 0; l < extents.size(); ++l) {
    int64_t extent = extents[l];
    if (iterators[l] != utils::IteratorType::reduction ||
        plan[l].interleaved || threads >= minThreads || extent < 2)
      continue;
    if (threads * extent <= cap) {
      plan[l].factor = extent;
      threads *= extent;
      any = true;
      continue;
    }
    if (!plainReads(l))
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
  return success(any);
}

LogicalResult CUDASplitReductions::rewrite(IRRewriter &rewriter,
                                           linalg::GenericOp op,
                                           ArrayRef<LoopPlan> plan,
                                           ArrayRef<ReductionKind> kinds,
                                           linalg::GenericOp &combination) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  unsigned numOutputs = op.getNumDpsInits();
  SmallVector<Operation *> combiners;
  for (Value yielded : op.getBlock()->getTerminator()->getOperands())
    combiners.push_back(yielded.getDefiningOp());
  // At most one loop (the largest input's contiguous one) is interleaved.
  const LoopPlan *interleavedPlan =
      llvm::find_if(plan, [](const LoopPlan &p) { return p.interleaved; });
  std::optional<unsigned> interleaved;
  if (interleavedPlan != plan.end())
    interleaved = interleavedPlan - plan.begin();

  // New loops: each old loop in place (a split one as outer, inner); the
  // parallel part of the interleaved loop last. `dimsOf[l]`: the new loops
  // that make old loop l (outer first).
  MLIRContext *ctx = op.getContext();
  SmallVector<utils::IteratorType> newIterators;
  SmallVector<SmallVector<unsigned, 2>> dimsOf(extents.size());
  auto addLoop = [&](unsigned l, utils::IteratorType kind) {
    dimsOf[l].push_back(newIterators.size());
    newIterators.push_back(kind);
  };
  for (auto [l, p] : llvm::enumerate(plan)) {
    if (p.interleaved) {
      if (p.split())
        addLoop(l, utils::IteratorType::reduction);
    } else if (p.split()) {
      addLoop(l, utils::IteratorType::parallel);
      addLoop(l, utils::IteratorType::reduction);
    } else {
      addLoop(l, p.promoted() ? utils::IteratorType::parallel : iterators[l]);
    }
  }
  if (interleaved)
    addLoop(*interleaved, utils::IteratorType::parallel);
  unsigned numNewDims = newIterators.size();
  SmallVector<AffineExpr> replacement;
  for (auto [l, p] : llvm::enumerate(plan)) {
    AffineExpr outer = getAffineDimExpr(dimsOf[l][0], ctx);
    replacement.push_back(
        dimsOf[l].size() == 2
            ? outer * p.innerSize() + getAffineDimExpr(dimsOf[l][1], ctx)
            : outer);
  }
  // The partials' extra dimensions: the promoted loops' parallel parts, in
  // loop order, the interleaved one last.
  SmallVector<unsigned> promotedDims;
  SmallVector<int64_t> promotedExtents;
  for (auto [l, p] : llvm::enumerate(plan))
    if (p.promoted() && !p.interleaved) {
      promotedDims.push_back(dimsOf[l][0]);
      promotedExtents.push_back(p.factor);
    }
  if (interleaved) {
    promotedDims.push_back(dimsOf[*interleaved].back());
    promotedExtents.push_back(plan[*interleaved].factor);
  }
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
        for (unsigned d : dimsOf[dim.getPosition()])
          results.push_back(getAffineDimExpr(d, ctx));
        groups.push_back({next, next + 1});
        shape.append({p.extent / p.innerSize(), p.innerSize()});
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
  // Every output has the same shape (one map).
  auto outputShape =
      cast<RankedTensorType>(op.getDpsInitOperand(0)->get().getType())
          .getShape();
  SmallVector<int64_t> partialShape(outputShape);
  for (AffineExpr e : outMap.getResults())
    partialExprs.push_back(getAffineDimExpr(
        dimsOf[cast<AffineDimExpr>(e).getPosition()][0], ctx));
  for (auto [d, extent] : llvm::zip(promotedDims, promotedExtents)) {
    partialExprs.push_back(getAffineDimExpr(d, ctx));
    partialShape.push_back(extent);
  }
  maps.append(numOutputs, AffineMap::get(numNewDims, 0, partialExprs, ctx));

  // 1. Partial results, from each combiner's identity. The fills follow
  // one another (no allocation between them once bufferized), so that
  // soap-cuda-fuse-parallel-loops runs them all in the partials' kernel.
  SmallVector<Value> empties, starts, outputStarts;
  SmallVector<Type> partialTypes, outputTypes;
  for (Value init : op.getDpsInits()) {
    Type elem = getElementTypeOrSelf(init);
    partialTypes.push_back(RankedTensorType::get(partialShape, elem));
    outputTypes.push_back(init.getType());
    outputStarts.push_back(init);
    empties.push_back(
        tensor::EmptyOp::create(rewriter, loc, partialShape, elem));
  }
  for (auto [empty, kind] : llvm::zip(empties, kinds)) {
    Value identity = arith::ConstantOp::create(
        rewriter, loc,
        getReductionIdentity(rewriter, kind, getElementTypeOrSelf(empty)));
    starts.push_back(
        linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0));
  }
  auto partial = linalg::GenericOp::create(rewriter, loc, partialTypes,
                                           inputs, starts, maps,
                                           newIterators);
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().end());
  // linalg.index of an old loop: its new loop, or outer * inner size + inner.
  SmallVector<linalg::IndexOp> indices;
  partial.getRegion().walk([&](linalg::IndexOp index) {
    indices.push_back(index);
  });
  for (linalg::IndexOp index : indices) {
    unsigned l = index.getDim();
    rewriter.setInsertionPoint(index);
    Value outer =
        linalg::IndexOp::create(rewriter, index.getLoc(), dimsOf[l][0]);
    Value value = outer;
    if (dimsOf[l].size() == 2) {
      Value inner =
          linalg::IndexOp::create(rewriter, index.getLoc(), dimsOf[l][1]);
      Value size = arith::ConstantIndexOp::create(rewriter, index.getLoc(),
                                                  plan[l].innerSize());
      Value scaled = arith::MulIOp::create(rewriter, index.getLoc(), outer, size);
      value = arith::AddIOp::create(rewriter, index.getLoc(), scaled, inner);
    }
    rewriter.replaceOp(index, value);
  }

  // 2. The partials combined into the original outputs and start values.
  rewriter.setInsertionPoint(op);
  unsigned rank = outputShape.size();
  unsigned numLoops = rank + promotedDims.size();
  SmallVector<utils::IteratorType> combineIterators(
      rank, utils::IteratorType::parallel);
  combineIterators.append(promotedDims.size(), utils::IteratorType::reduction);
  // Partials: all loops; outputs: (d0, ..., d_rank-1), the leading ones.
  SmallVector<AffineMap> combineMaps(
      numOutputs, AffineMap::getMultiDimIdentityMap(numLoops, ctx));
  combineMaps.append(
      numOutputs,
      AffineMap::get(numLoops, 0,
                     llvm::to_vector(llvm::map_range(
                         llvm::seq<unsigned>(0, rank),
                         [&](unsigned d) { return getAffineDimExpr(d, ctx); })),
                     ctx));
  auto combine = linalg::GenericOp::create(
      rewriter, loc, outputTypes, partial.getResults(), outputStarts,
      combineMaps, combineIterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> combined;
        for (auto [i, combiner] : llvm::enumerate(combiners)) {
          OperationState state(l, combiner->getName());
          state.addOperands({args[i], args[numOutputs + i]});
          state.addTypes(args[numOutputs + i].getType());
          state.addAttributes(combiner->getAttrs());
          combined.push_back(b.create(state)->getResult(0));
        }
        linalg::YieldOp::create(b, l, combined);
      });
  rewriter.replaceOp(op, combine.getResults());
  // The outputs' start values, fills only the combination reads, right
  // before it (not before the partials): soap-cuda-fuse-parallel-loops
  // then runs them in one kernel.
  for (Value outputStart : outputStarts)
    if (auto fill = outputStart.getDefiningOp<linalg::FillOp>();
        fill && fill->hasOneUse() && fill->getBlock() == combine->getBlock())
      rewriter.moveOpBefore(fill, combine);
  combination = combine;
  return success();
}

} // namespace
