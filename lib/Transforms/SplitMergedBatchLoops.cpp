//===- SplitMergedBatchLoops.cpp - One batch loop per merged dim ----------===//
//
// See Passes.td (soap-split-merged-batch-loops).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SPLITMERGEDBATCHLOOPS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Marks the linalg ops this pass made (removed at the end).
constexpr StringLiteral kExpanded = "soap.split_merged_batch_loops";

/// The loops of `op` that the merged groups (those of more than one dim) of
/// a reshape index through `map` (the operand's or result's indexing map,
/// whose result r is group r); nothing if a group is not a plain loop.
std::optional<SmallVector<unsigned>>
mergedLoops(AffineMap map, ArrayRef<ReassociationIndices> groups) {
  if (map.getNumResults() != groups.size())
    return std::nullopt;
  SmallVector<unsigned> loops;
  for (auto [r, group] : llvm::enumerate(groups)) {
    if (group.size() < 2)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
    if (!dim)
      return std::nullopt;
    loops.push_back(dim.getPosition());
  }
  return loops;
}

/// Whether the reshape with `groups`, read or written by `op` through
/// `map`, may be folded into `op` by expanding its loops: the merged loops
/// are batch loops of a contraction, or parallel loops of another op that a
/// reshape joins to an op expanded already (`besideExpanded`).
bool mayExpand(linalg::LinalgOp op, AffineMap map,
               ArrayRef<ReassociationIndices> groups, bool besideExpanded) {
  std::optional<SmallVector<unsigned>> loops = mergedLoops(map, groups);
  if (!loops || loops->empty())
    return false;
  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    return succeeded(dims) && llvm::all_of(*loops, [&](unsigned loop) {
             return llvm::is_contained(dims->batch, loop);
           });
  }
  if (!besideExpanded)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  return llvm::all_of(*loops, [&](unsigned loop) {
    return iterators[loop] == utils::IteratorType::parallel;
  });
}

bool isExpanded(Operation *op) { return op && op->hasAttr(kExpanded); }

/// The control function of upstream's patterns: `fused` is a linalg op's
/// operand that a collapse_shape makes, or an expand_shape's source that a
/// linalg op makes.
bool controlFolding(OpOperand *fused) {
  Operation *owner = fused->getOwner();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(owner)) {
    auto result = dyn_cast<OpResult>(fused->get());
    auto producer = dyn_cast_if_present<linalg::LinalgOp>(
        result ? result.getOwner() : nullptr);
    // A result other ops read too would be computed twice.
    if (!producer || !result.hasOneUse())
      return false;
    bool besideExpanded = llvm::any_of(expand->getUsers(), isExpanded);
    return mayExpand(producer, producer.getIndexingMapMatchingResult(result),
                     expand.getReassociationIndices(), besideExpanded);
  }
  auto consumer = dyn_cast<linalg::LinalgOp>(owner);
  auto collapse = fused->get().getDefiningOp<tensor::CollapseShapeOp>();
  if (!consumer || !collapse)
    return false;
  return mayExpand(consumer, consumer.getMatchingIndexingMap(fused),
                   collapse.getReassociationIndices(),
                   isExpanded(collapse.getSrc().getDefiningOp()));
}

/// Gives each expanded op its original's attributes (its name) and the
/// marker that lets the ops beside it expand too.
struct CarryAttributes : public RewriterBase::Listener {
  void notifyOperationReplaced(Operation *op, ValueRange values) override {
    Operation *original = op;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      original = expand.getSrc().getDefiningOp();
    if (!isa_and_present<linalg::LinalgOp>(original))
      return;
    for (Value value : values) {
      if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>())
        value = collapse.getSrc();
      Operation *expanded = value.getDefiningOp();
      if (!isa_and_present<linalg::LinalgOp>(expanded) || expanded == original)
        continue;
      for (NamedAttribute attr : original->getDiscardableAttrs())
        expanded->setAttr(attr.getName(), attr.getValue());
      expanded->setAttr(kExpanded, UnitAttr::get(op->getContext()));
    }
  }
};

struct SplitMergedBatchLoopsPass
    : public mlir::soap::impl::SplitMergedBatchLoopsBase<
          SplitMergedBatchLoopsPass> {
  void runOnOperation() override {
    // Nothing to do (and nothing canonicalized) without a contraction that
    // a reshape starts an expansion of.
    bool any = false;
    getOperation()->walk([&](linalg::LinalgOp op) {
      for (OpOperand &operand : op->getOpOperands())
        any |= controlFolding(&operand);
      for (Operation *user : op->getUsers())
        if (isa<tensor::ExpandShapeOp>(user))
          any |= controlFolding(&user->getOpOperand(0));
    });
    if (!any)
      return;
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, controlFolding);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    linalg::FillOp::getCanonicalizationPatterns(patterns, context);
    CarryAttributes listener;
    GreedyRewriteConfig config;
    config.setListener(&listener);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config))) {
      getOperation()->emitError("soap-split-merged-batch-loops: the "
                                "expansion did not converge");
      return signalPassFailure();
    }
    getOperation()->walk([](Operation *op) { op->removeAttr(kExpanded); });
  }
};

} // namespace
