//===- BubbleUpSlices.cpp - soap-bubble-up-slices -------------------------===//
//
// A rank reshapes and pads only the part of a tensor it reads (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_BUBBLEUPSLICES
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {
static bool isStatic(tensor::ExtractSliceOp slice) {
  return slice.getOffsets().empty() && slice.getSizes().empty() &&
         slice.getStrides().empty();
}

/// Merges the static extract_slice ops of one value in one block that take
/// the same part (the first one stays); returns whether it merged any.
/// (Not CSE: that would also merge the tensor.empty ops of distinct
/// tensors, which soap-compact-tensors sizes one by one.)
static bool mergeIdenticalSlices(Operation *root) {
  using Key = std::tuple<Value, Block *, Attribute, Attribute, Attribute,
                         Type>;
  DenseMap<Key, tensor::ExtractSliceOp> first;
  SmallVector<std::pair<tensor::ExtractSliceOp, tensor::ExtractSliceOp>>
      duplicates;
  root->walk([&](tensor::ExtractSliceOp slice) {
    if (!isStatic(slice))
      return;
    Key key{slice.getSource(), slice->getBlock(),
            slice.getStaticOffsetsAttr(), slice.getStaticSizesAttr(),
            slice.getStaticStridesAttr(), slice.getType()};
    auto [it, inserted] = first.try_emplace(key, slice);
    if (!inserted)
      duplicates.push_back({slice, it->second});
  });
  for (auto [slice, kept] : duplicates) {
    slice.getResult().replaceAllUsesWith(kept.getResult());
    slice->erase();
  }
  return !duplicates.empty();
}

/// A slice of a copy that reads its one input through a permutation of the
/// loops, some of them reversed (getCopyReads: a convolution's filter,
/// flipped for its input gradient or a transposed convolution): the copy of
/// the input's slice. (Upstream's linalg pattern takes elementwise ops only,
/// whose maps are projected permutations.)
struct BubbleUpSliceOfCopy : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto copy = slice.getSource().getDefiningOp<linalg::GenericOp>();
    if (!copy || !isStatic(slice) || !slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getType().getRank())
      return rewriter.notifyMatchFailure(slice, "not a whole-rank slice of "
                                                "a generic");
    std::optional<SmallVector<mlir::soap::CopyRead>> reads =
        mlir::soap::getCopyReads(copy);
    if (!reads)
      return rewriter.notifyMatchFailure(slice, "the generic is no copy");
    // The slice's offset and size along each loop (the output's dims are
    // the loops, permuted).
    AffineMap outMap = copy.getMatchingIndexingMap(copy.getDpsInitOperand(0));
    unsigned rank = copy.getNumLoops();
    SmallVector<int64_t> loopOffsets(rank), loopSizes(rank);
    for (auto [p, e] : llvm::enumerate(outMap.getResults())) {
      unsigned l = cast<AffineDimExpr>(e).getPosition();
      loopOffsets[l] = slice.getStaticOffsets()[p];
      loopSizes[l] = slice.getStaticSizes()[p];
    }
    OpOperand *in = copy.getDpsInputOperand(0);
    auto inType = cast<RankedTensorType>(in->get().getType());
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<OpFoldResult> inOffsets, inSizes;
    SmallVector<AffineExpr> inExprs;
    for (auto [d, read] : llvm::enumerate(*reads)) {
      if (read.loop < 0) {
        inOffsets.push_back(rewriter.getIndexAttr(0));
        inSizes.push_back(rewriter.getIndexAttr(1));
        inExprs.push_back(getAffineConstantExpr(0, ctx));
        continue;
      }
      int64_t lo = loopOffsets[read.loop], size = loopSizes[read.loop];
      AffineExpr loop = getAffineDimExpr(read.loop, ctx);
      inOffsets.push_back(rewriter.getIndexAttr(
          read.reversed ? inType.getDimSize(d) - lo - size : lo));
      inSizes.push_back(rewriter.getIndexAttr(size));
      inExprs.push_back(read.reversed ? size - 1 - loop : loop);
    }
    Location loc = copy.getLoc();
    SmallVector<OpFoldResult> unit(inType.getRank(), rewriter.getIndexAttr(1));
    Value part = tensor::ExtractSliceOp::create(rewriter, loc, in->get(),
                                                inOffsets, inSizes, unit);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, slice.getType().getShape(),
                                slice.getType().getElementType());
    auto sliced = linalg::GenericOp::create(
        rewriter, loc, TypeRange{slice.getType()}, ValueRange{part},
        ValueRange{init}, {AffineMap::get(rank, 0, inExprs, ctx), outMap},
        copy.getIteratorTypesArray(),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(slice, sliced.getResult(0));
    return success();
  }
};

struct BubbleUpSlicesPass
    : mlir::soap::impl::BubbleUpSlicesBase<BubbleUpSlicesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    tensor::populateBubbleUpExtractSliceOpPatterns(patterns);
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    linalg::populateSwapExtractSliceWithFillPatterns(patterns);
    // A slice of a pad: the pad of the slice of its source. Static slices
    // only; no guard for slices wholly in the padding (bubbleUpPadSlice
    // then makes the slice of zeros itself).
    patterns.add<linalg::ExtractSliceOfPadTensorSwapPattern>(
        context, [](tensor::ExtractSliceOp slice) -> std::optional<bool> {
          if (!isStatic(slice))
            return std::nullopt;
          return false;
        });
    patterns.add<BubbleUpSliceOfCopy>(context);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet shapes(std::move(patterns));
    // Elementwise ops computed whole, then sliced (applied to the slices of
    // elementwise ops only: through windowed or flipped indexing maps the
    // sliced operands' offsets could fall outside them).
    RewritePatternSet elementwisePatterns(context);
    linalg::populateBubbleUpExtractSliceOpPatterns(elementwisePatterns);
    FrozenRewritePatternSet elementwise(std::move(elementwisePatterns));
    GreedyRewriteConfig existingOnly;
    existingOnly.setStrictness(GreedyRewriteStrictness::ExistingOps);

    // The linalg pattern moves a slice only above an op it is the one user
    // of: identical slices (a rank's tiles reading the same part) are
    // merged first, and again after each round.
    for (int round = 0; round < 4; ++round) {
      bool merged = mergeIdenticalSlices(getOperation());
      SmallVector<Operation *> slicesOfElementwise;
      getOperation().walk([&](tensor::ExtractSliceOp slice) {
        auto producer = slice.getSource().getDefiningOp<linalg::LinalgOp>();
        if (producer && linalg::isElementwise(producer))
          slicesOfElementwise.push_back(slice);
      });
      bool movedElementwise = false, changed = false;
      if (failed(applyOpPatternsGreedily(slicesOfElementwise, elementwise,
                                         existingOnly, &movedElementwise)) ||
          failed(applyPatternsGreedily(getOperation(), shapes,
                                       GreedyRewriteConfig(), &changed))) {
        signalPassFailure();
        return;
      }
      if (!merged && !movedElementwise && !changed)
        break;
    }
  }
};
} // namespace
