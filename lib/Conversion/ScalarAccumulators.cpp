//===- ScalarAccumulators.cpp - soap-scalar-accumulators ------------------===//
//
// Reduction loops keep their accumulator in a register (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SCALARACCUMULATORS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `op` (or an op nested in it) may read or write `buffer`'s data
/// other than through `except`.
static bool touches(Operation *op, Value buffer,
                    ArrayRef<Operation *> except) {
  WalkResult walk = op->walk([&](Operation *nested) {
    if (llvm::is_contained(except, nested))
      return WalkResult::advance();
    if (llvm::is_contained(nested->getOperands(), buffer))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Rewrites `loop` if it accumulates into one element; returns whether it
/// did.
static bool promote(scf::ForOp loop, RewriterBase &rewriter) {
  Block *body = loop.getBody();
  memref::StoreOp store;
  for (Operation &op : body->without_terminator())
    if (auto s = dyn_cast<memref::StoreOp>(op)) {
      if (store)
        return false; // one accumulator per loop
      store = s;
    }
  if (!store)
    return false;
  Value buffer = store.getMemRef();
  auto definedOutside = [&](Value v) {
    return loop.isDefinedOutsideOfLoop(v);
  };
  if (!definedOutside(buffer) ||
      !llvm::all_of(store.getIndices(), definedOutside))
    return false;
  memref::LoadOp load;
  for (Operation &op : body->without_terminator())
    if (auto l = dyn_cast<memref::LoadOp>(op);
        l && l.getMemRef() == buffer && l.getIndices() == store.getIndices()) {
      if (load)
        return false;
      load = l;
    }
  if (!load || !load->isBeforeInBlock(store))
    return false;
  // Nothing else may touch the buffer (views of it are other values: a loop
  // that makes one fails the check below, as it uses `buffer`).
  for (Operation &op : body->without_terminator())
    if (&op != load && &op != store &&
        touches(&op, buffer, {load.getOperation(), store.getOperation()}))
      return false;

  SmallVector<Value> indices(store.getIndices());
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value init = memref::LoadOp::create(rewriter, load.getLoc(), buffer, indices);
  auto newLoop = scf::ForOp::create(
      rewriter, loc, loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), ValueRange{init},
      [&](OpBuilder &, Location, Value, ValueRange) {});
  Block *newBody = newLoop.getBody();
  // Move the old body (and its terminator) over: the body builder above
  // left the new block empty.
  Value stored = store.getValueToStore();
  rewriter.replaceAllUsesWith(load.getResult(), newBody->getArgument(1));
  rewriter.eraseOp(load);
  rewriter.eraseOp(store);
  rewriter.mergeBlocks(body, newBody, {newBody->getArgument(0)});
  auto yield = cast<scf::YieldOp>(newBody->getTerminator());
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, ValueRange{stored});
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, loc, newLoop.getResult(0), buffer,
                          indices);
  rewriter.eraseOp(loop);
  return true;
}

struct ScalarAccumulators
    : public soap::impl::ScalarAccumulatorsBase<ScalarAccumulators> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Post-order: inner loops first; an outer loop then sees the hoisted
    // load and store of the inner one.
    SmallVector<scf::ForOp> loops;
    getOperation().walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      if (loop.getNumRegionIterArgs() == 0)
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      (void)promote(loop, rewriter);
  }
};

} // namespace
