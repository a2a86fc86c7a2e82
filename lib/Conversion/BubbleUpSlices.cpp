//===- BubbleUpSlices.cpp - soap-bubble-up-slices -------------------------===//
//
// A rank reshapes and pads only the part of a tensor it reads (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

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
/// loops, some of them reversed (`size - 1 - d`: a convolution's filter,
/// flipped for its input gradient or a transposed convolution), and writes
/// it in loop order: the copy of the input's slice. (Upstream's linalg
/// pattern takes projected permutations only.)
struct BubbleUpSliceOfFlip : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto flip = slice.getSource().getDefiningOp<linalg::GenericOp>();
    if (!flip || !isStatic(slice) || flip.getNumDpsInputs() != 1 ||
        flip.getNumDpsInits() != 1 ||
        flip.getNumParallelLoops() != flip.getNumLoops() ||
        !slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getType().getRank())
      return rewriter.notifyMatchFailure(slice, "not a whole-rank slice of "
                                                "a one-input generic");
    Block *body = flip.getBlock();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    if (body->getOperations().size() != 1 ||
        yield.getOperand(0) != body->getArgument(0))
      return rewriter.notifyMatchFailure(slice, "the generic is no copy");
    OpOperand *in = flip.getDpsInputOperand(0);
    auto inType = dyn_cast<RankedTensorType>(in->get().getType());
    if (!inType || !inType.hasStaticShape() ||
        !flip.getMatchingIndexingMap(flip.getDpsInitOperand(0)).isIdentity())
      return rewriter.notifyMatchFailure(slice, "not read in loop order");
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<OpFoldResult> inOffsets, inSizes;
    SmallVector<AffineExpr> reads;
    for (auto [d, e] :
         llvm::enumerate(flip.getMatchingIndexingMap(in).getResults())) {
      int64_t extent = inType.getDimSize(d);
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() != 0 || extent != 1)
          return rewriter.notifyMatchFailure(slice, "a constant read");
        inOffsets.push_back(rewriter.getIndexAttr(0));
        inSizes.push_back(rewriter.getIndexAttr(1));
        reads.push_back(e);
        continue;
      }
      // d, or extent - 1 - d over a loop of the same extent.
      int64_t constant = 0, coefficient = 1;
      AffineExpr loop = e;
      if (auto sum = dyn_cast<AffineBinaryOpExpr>(loop);
          sum && loop.getKind() == AffineExprKind::Add)
        if (auto c = dyn_cast<AffineConstantExpr>(sum.getRHS())) {
          constant = c.getValue();
          loop = sum.getLHS();
        }
      if (auto product = dyn_cast<AffineBinaryOpExpr>(loop);
          product && loop.getKind() == AffineExprKind::Mul)
        if (auto c = dyn_cast<AffineConstantExpr>(product.getRHS())) {
          coefficient = c.getValue();
          loop = product.getLHS();
        }
      bool reversed = coefficient == -1 && constant == extent - 1;
      if (!isa<AffineDimExpr>(loop) ||
          !(reversed || (coefficient == 1 && constant == 0)))
        return rewriter.notifyMatchFailure(slice, "not a permutation or "
                                                  "reversal");
      unsigned l = cast<AffineDimExpr>(loop).getPosition();
      if (reversed && flip.getStaticLoopRanges()[l] != extent)
        return rewriter.notifyMatchFailure(slice, "a partial reversal");
      int64_t lo = reversed ? extent - offsets[l] - sizes[l] : offsets[l];
      inOffsets.push_back(rewriter.getIndexAttr(lo));
      inSizes.push_back(rewriter.getIndexAttr(sizes[l]));
      reads.push_back(reversed ? sizes[l] - 1 - loop : loop);
    }
    Location loc = flip.getLoc();
    SmallVector<OpFoldResult> unit(inType.getRank(), rewriter.getIndexAttr(1));
    Value part = tensor::ExtractSliceOp::create(rewriter, loc, in->get(),
                                                inOffsets, inSizes, unit);
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         slice.getType().getElementType());
    unsigned rank = flip.getNumLoops();
    auto copy = linalg::GenericOp::create(
        rewriter, loc, TypeRange{slice.getType()}, ValueRange{part},
        ValueRange{init},
        {AffineMap::get(rank, 0, reads, ctx),
         rewriter.getMultiDimIdentityMap(rank)},
        flip.getIteratorTypesArray(),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(slice, copy.getResult(0));
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
    patterns.add<BubbleUpSliceOfFlip>(context);
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
