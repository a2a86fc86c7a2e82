//===- SplitFusedProjections.cpp - One matmul per part read ---------------===//
//
// See Passes.td (soap-split-fused-projections).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SPLITFUSEDPROJECTIONS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// A box of a tensor: static offsets and sizes per dim.
struct Box {
  SmallVector<int64_t> offsets, sizes;
};

/// The box of the result that `slice` reads, the slice being of the result
/// or of `expand`, an expand_shape of it. A slice of the expansion must cut
/// each reshaped group in its outermost dim only (the inner dims whole), so
/// that it is one box of the result.
std::optional<Box> sliceBox(tensor::ExtractSliceOp slice,
                            tensor::ExpandShapeOp expand) {
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  if (!slice.hasUnitStride() || ShapedType::isDynamicShape(offsets) ||
      ShapedType::isDynamicShape(sizes))
    return std::nullopt;
  if (!expand)
    return Box{SmallVector<int64_t>(offsets), SmallVector<int64_t>(sizes)};
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  Box box;
  for (const ReassociationIndices &group : expand.getReassociationIndices()) {
    int64_t inner = 1;
    for (int64_t d : ArrayRef<int64_t>(group).drop_front()) {
      if (offsets[d] != 0 || sizes[d] != shape[d])
        return std::nullopt;
      inner *= shape[d];
    }
    box.offsets.push_back(offsets[group.front()] * inner);
    box.sizes.push_back(sizes[group.front()] * inner);
  }
  return box;
}

/// Whether result dim `dim` of `op` is the columns (N) of a contraction:
/// of `op` itself, or, for an elementwise op (a bias add), of the producer
/// of an input that carries it and that nothing else reads.
bool isProjectionColumns(linalg::LinalgOp op, unsigned dim) {
  AffineMap map = op.getIndexingMapMatchingResult(op->getResult(0));
  auto loopExpr = dyn_cast<AffineDimExpr>(map.getResult(dim));
  if (!loopExpr)
    return false;
  unsigned loop = loopExpr.getPosition();
  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    return succeeded(dims) && llvm::is_contained(dims->n, loop);
  }
  if (op.getNumParallelLoops() != op.getNumLoops())
    return false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    std::optional<unsigned> position =
        op.getMatchingIndexingMap(input).getResultPosition(loopExpr);
    auto producer = input->get().getDefiningOp<linalg::LinalgOp>();
    if (position && producer && producer->getNumResults() == 1 &&
        input->get().hasOneUse() && isProjectionColumns(producer, *position))
      return true;
  }
  return false;
}

/// How a projection's result is read in parts: its slices (of `expand`,
/// its one reader, where that is an expand_shape) and their boxes of the
/// result.
struct Parts {
  tensor::ExpandShapeOp expand;
  SmallVector<tensor::ExtractSliceOp> slices;
  SmallVector<Box> boxes;
};

/// `op`'s parts if its result is read only in disjoint slices along the
/// columns of a projection.
std::optional<Parts> matchParts(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || !op.hasPureTensorSemantics())
    return std::nullopt;
  Value result = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Parts parts;
  if (result.hasOneUse())
    parts.expand = dyn_cast<tensor::ExpandShapeOp>(*result.getUsers().begin());
  Value read = parts.expand ? parts.expand.getResult() : result;
  for (Operation *user : read.getUsers()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
    std::optional<Box> box =
        slice ? sliceBox(slice, parts.expand) : std::nullopt;
    if (!box)
      return std::nullopt;
    parts.slices.push_back(slice);
    parts.boxes.push_back(*box);
  }
  ArrayRef<Box> boxes = parts.boxes;
  if (boxes.size() < 2)
    return std::nullopt;
  // One cut dim; the others whole; the parts disjoint.
  std::optional<unsigned> cut;
  for (unsigned d = 0; d < type.getRank(); ++d) {
    for (const Box &box : boxes) {
      if (box.offsets[d] == 0 && box.sizes[d] == type.getDimSize(d))
        continue;
      if (cut && *cut != d)
        return std::nullopt;
      cut = d;
    }
  }
  if (!cut || !isProjectionColumns(op, *cut))
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (const Box &box : boxes)
    ranges.push_back({box.offsets[*cut], box.offsets[*cut] + box.sizes[*cut]});
  llvm::sort(ranges);
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      return std::nullopt;

  return parts;
}

/// Replaces `op`, whose result is read in parts (matchParts), with one tile
/// of it per part.
LogicalResult splitIntoParts(linalg::LinalgOp op, const Parts &parts) {
  tensor::ExpandShapeOp expand = parts.expand;
  ArrayRef<tensor::ExtractSliceOp> slices = parts.slices;
  ArrayRef<Box> boxes = parts.boxes;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto tiling = cast<TilingInterface>(op.getOperation());
  std::string name = mlir::soap::getStableName(op);
  std::string expandName = expand ? mlir::soap::getStableName(expand) : "";
  // Part i: the i-th from the start of the cut dim.
  auto order = llvm::to_vector(llvm::seq<unsigned>(0, boxes.size()));
  llvm::sort(order, [&](unsigned x, unsigned y) {
    return boxes[x].offsets < boxes[y].offsets;
  });
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  for (auto [i, index] : llvm::enumerate(order)) {
    const Box &box = boxes[index];
    tensor::ExtractSliceOp slice = slices[index];
    // Part i of a layer named N is N.i.
    auto nameAs = [&, i = i](Operation *part, const std::string &base) {
      if (!base.empty())
        part->setAttr(mlir::soap::SOAPDialect::kNameAttrName,
                      b.getStringAttr(base + "." + std::to_string(i)));
    };
    FailureOr<TilingResult> tile = tiling.generateResultTileValue(
        b, 0, getAsIndexOpFoldResult(b.getContext(), box.offsets),
        getAsIndexOpFoldResult(b.getContext(), box.sizes));
    if (failed(tile) || tile->tiledValues.size() != 1)
      return op.emitError("soap-split-fused-projections: cannot compute a "
                          "part of this op by itself");
    for (Operation *tiled : tile->tiledOps)
      nameAs(tiled, name);
    Value part = tile->tiledValues[0];
    if (expand) {
      SmallVector<int64_t> shape(expand.getResultType().getShape());
      for (const ReassociationIndices &group : expand.getReassociationIndices())
        shape[group.front()] = slice.getStaticSizes()[group.front()];
      auto partExpand = tensor::ExpandShapeOp::create(
          b, expand.getLoc(),
          RankedTensorType::get(shape, type.getElementType()), part,
          expand.getReassociationIndices());
      nameAs(partExpand, expandName);
      part = partExpand;
    }
    // The slice now reads the whole part.
    if (part.getType() != slice.getType()) {
      SmallVector<OpFoldResult> zeros(slice.getSourceType().getRank(),
                                      b.getIndexAttr(0));
      auto partSlice = tensor::ExtractSliceOp::create(
          b, slice.getLoc(), slice.getType(), part, zeros,
          slice.getMixedSizes(), slice.getMixedStrides());
      partSlice->setDiscardableAttrs(slice->getDiscardableAttrDictionary());
      part = partSlice;
    }
    slice.replaceAllUsesWith(part);
  }
  for (tensor::ExtractSliceOp slice : slices)
    slice->erase();
  if (expand)
    expand.erase();
  op.erase();
  return success();
}

/// A part's slice of the accumulator's fill: a fill of the part. (Upstream's
/// swap pattern wants a fill read by one slice; here one is read by each.)
struct SliceOfFill : public OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto fill = slice.getSource().getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.hasPureTensorSemantics())
      return failure();
    Value init = tensor::ExtractSliceOp::create(
        rewriter, slice.getLoc(), slice.getType(), fill.getOutputs()[0],
        slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
    auto partFill = linalg::FillOp::create(rewriter, fill.getLoc(),
                                           fill.getInputs(), ValueRange{init});
    partFill->setDiscardableAttrs(fill->getDiscardableAttrDictionary());
    rewriter.replaceOp(slice, partFill->getResults());
    return success();
  }
};

struct SplitFusedProjectionsPass
    : public mlir::soap::impl::SplitFusedProjectionsBase<
          SplitFusedProjectionsPass> {
  void runOnOperation() override {
    bool any = false;
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<linalg::LinalgOp> ops;
      getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
      for (linalg::LinalgOp op : ops) {
        std::optional<Parts> parts = matchParts(op);
        if (!parts)
          continue;
        if (failed(splitIntoParts(op, *parts)))
          return signalPassFailure();
        changed = true;
      }
      any |= changed;
    }
    if (!any)
      return;
    // Each part's accumulator: a fill of its own size, not a slice of the
    // whole one's.
    RewritePatternSet patterns(&getContext());
    patterns.add<SliceOfFill>(&getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
