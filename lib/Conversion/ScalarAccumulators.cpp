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

/// One element a loop accumulates into: loaded before it is stored, both at
/// indices defined outside the loop.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// The accumulators of `loop` (a multi-output reduction has one per
/// output), or none if any store in its body is not one.
static SmallVector<Accumulator> findAccumulators(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto definedOutside = [&](Value v) {
    return loop.isDefinedOutsideOfLoop(v);
  };
  SmallVector<Accumulator> accumulators;
  for (Operation &op : body->without_terminator()) {
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store)
      continue;
    Value buffer = store.getMemRef();
    if (!definedOutside(buffer) ||
        !llvm::all_of(store.getIndices(), definedOutside) ||
        llvm::any_of(accumulators, [&](Accumulator &a) {
          return a.store.getMemRef() == buffer;
        }))
      return {};
    memref::LoadOp load;
    for (Operation &other : body->without_terminator())
      if (auto l = dyn_cast<memref::LoadOp>(other);
          l && l.getMemRef() == buffer &&
          l.getIndices() == store.getIndices()) {
        if (load)
          return {};
        load = l;
      }
    if (!load || !load->isBeforeInBlock(store))
      return {};
    accumulators.push_back({load, store});
  }
  // Nothing else may touch the buffers (views of them are other values: a
  // loop that makes one fails the check below, as it uses the buffer).
  SmallVector<Operation *> own;
  for (Accumulator &a : accumulators)
    own.append({a.load.getOperation(), a.store.getOperation()});
  for (Accumulator &a : accumulators)
    for (Operation &op : body->without_terminator())
      if (!llvm::is_contained(own, &op) &&
          touches(&op, a.store.getMemRef(), own))
        return {};
  return accumulators;
}

/// Rewrites `loop` if it accumulates into single elements (one per
/// output); returns whether it did.
static bool promote(scf::ForOp loop, RewriterBase &rewriter) {
  SmallVector<Accumulator> accumulators = findAccumulators(loop);
  if (accumulators.empty())
    return false;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (Accumulator &a : accumulators)
    inits.push_back(memref::LoadOp::create(rewriter, a.load.getLoc(),
                                           a.load.getMemRef(),
                                           a.load.getIndices()));
  auto newLoop = scf::ForOp::create(
      rewriter, loc, loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), inits, [&](OpBuilder &, Location, Value, ValueRange) {});
  Block *newBody = newLoop.getBody();
  // Move the old body (and its terminator) over: the body builder above
  // left the new block empty.
  for (auto [i, a] : llvm::enumerate(accumulators)) {
    rewriter.replaceAllUsesWith(a.load.getResult(),
                                newBody->getArgument(1 + i));
    rewriter.eraseOp(a.load);
  }
  // What each iteration stores, read after the loads became the iteration's
  // values (a store of a load's value as it is, or of another accumulator's,
  // stores that value).
  SmallVector<Value> stored;
  for (Accumulator &a : accumulators)
    stored.push_back(a.store.getValueToStore());
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [i, a] : llvm::enumerate(accumulators)) {
    memref::StoreOp::create(rewriter, loc, newLoop.getResult(i),
                            a.store.getMemRef(), a.store.getIndices());
    rewriter.eraseOp(a.store);
  }
  rewriter.mergeBlocks(loop.getBody(), newBody, {newBody->getArgument(0)});
  auto yield = cast<scf::YieldOp>(newBody->getTerminator());
  rewriter.setInsertionPoint(yield);
  rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, stored);
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
