//===- CUDAFuseSiblingReductions.cpp - One pass over a shared input -------===//
//
// See Passes.td (soap-cuda-fuse-sibling-reductions).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "CUDAPatterns.h"

#include "soap/Analysis/IterationSpace.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDAFUSESIBLINGREDUCTIONS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// A reduction this pass may merge: on tensors, static loops, and one that
/// soap-cuda-split-reductions takes (it splits the merged op as one).
static bool isCandidate(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() &&
         llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
         cuda::isSplittableReduction(op);
}

/// Whether `later` (after `earlier` in the same block) computes from
/// `earlier`'s results, directly or through ops between the two.
static bool dependsOn(linalg::GenericOp later, linalg::GenericOp earlier) {
  Block *block = earlier->getBlock();
  SmallVector<Operation *> work = {later};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (op == earlier)
      return true;
    if (!seen.insert(op).second)
      continue;
    // Operands of `op` and of the ops nested in it.
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def)
          continue;
        def = block->findAncestorOpInBlock(*def);
        if (def && (def == earlier || earlier->isBeforeInBlock(def)))
          work.push_back(def);
      }
    });
  }
  return false;
}

/// Whether `a` and `b` run over the same loops, write through the same
/// output map and read one tensor through the same map.
static bool areSiblings(linalg::GenericOp a, linalg::GenericOp b) {
  if (a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
      a.getIteratorTypesArray() != b.getIteratorTypesArray() ||
      a.getMatchingIndexingMap(a.getDpsInitOperand(0)) !=
          b.getMatchingIndexingMap(b.getDpsInitOperand(0)))
    return false;
  return llvm::any_of(a.getDpsInputOperands(), [&](OpOperand *x) {
    return llvm::any_of(b.getDpsInputOperands(), [&](OpOperand *y) {
      return x->get() == y->get() &&
             a.getMatchingIndexingMap(x) == b.getMatchingIndexingMap(y);
    });
  });
}

/// The ops between `earlier` and `later` (same block) that compute from
/// `earlier`'s results, in order: they move after the merged op in
/// `later`'s place. Failure if that would reorder ops with effects (the
/// communication of a data-parallel step: `earlier`'s all-reduce may move
/// after `later`, but not past another rank-visible operation).
static FailureOr<SmallVector<Operation *>>
opsToMoveAfter(linalg::GenericOp earlier, linalg::GenericOp later) {
  Block *block = earlier->getBlock();
  llvm::SmallPtrSet<Operation *, 16> dependent = {earlier};
  SmallVector<Operation *> moved;
  bool movedEffects = false, stayingEffects = false;
  for (Operation *op = earlier->getNextNode(); op != later.getOperation();
       op = op->getNextNode()) {
    bool reads = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (Operation *inBlock = block->findAncestorOpInBlock(*def);
              inBlock && dependent.contains(inBlock))
            reads = true;
    });
    bool effects = !isMemoryEffectFree(op);
    if (reads) {
      dependent.insert(op);
      moved.push_back(op);
      movedEffects |= effects;
    } else {
      stayingEffects |= effects;
    }
  }
  if (movedEffects && stayingEffects)
    return failure();
  return moved;
}

/// One op computing `a`'s and `b`'s outputs (in that order), built in
/// `b`'s place; `a`'s and `b`'s results replaced.
static linalg::GenericOp merge(IRRewriter &rewriter, linalg::GenericOp a,
                               linalg::GenericOp b) {
  // Inputs: a's, then b's that a does not read through the same map.
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps;
  auto inputIndex = [&](Value value, AffineMap map) -> unsigned {
    for (auto [i, existing] : llvm::enumerate(inputs))
      if (existing == value && maps[i] == map)
        return i;
    inputs.push_back(value);
    maps.push_back(map);
    return inputs.size() - 1;
  };
  SmallVector<unsigned> aInputs, bInputs;
  for (OpOperand *in : a.getDpsInputOperands())
    aInputs.push_back(inputIndex(in->get(), a.getMatchingIndexingMap(in)));
  for (OpOperand *in : b.getDpsInputOperands())
    bInputs.push_back(inputIndex(in->get(), b.getMatchingIndexingMap(in)));
  SmallVector<Type> resultTypes;
  for (linalg::GenericOp op : {a, b})
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      maps.push_back(op.getMatchingIndexingMap(&init));
      resultTypes.push_back(init.get().getType());
    }

  rewriter.setInsertionPoint(b);
  Location loc = rewriter.getFusedLoc({a.getLoc(), b.getLoc()});
  auto merged = linalg::GenericOp::create(
      rewriter, loc, resultTypes, inputs, inits, maps,
      b.getIteratorTypesArray(),
      [&](OpBuilder &builder, Location, ValueRange args) {
        IRMapping mapping;
        SmallVector<Value> yielded;
        unsigned numInputs = inputs.size(), firstInit = numInputs;
        auto cloneBody = [&](linalg::GenericOp op, ArrayRef<unsigned> ins) {
          Block *body = op.getBlock();
          for (auto [i, index] : llvm::enumerate(ins))
            mapping.map(body->getArgument(i), args[index]);
          for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
            mapping.map(body->getArgument(ins.size() + i),
                        args[firstInit++]);
          for (Operation &nested : body->without_terminator())
            builder.clone(nested, mapping);
          for (Value v : body->getTerminator()->getOperands())
            yielded.push_back(mapping.lookupOrDefault(v));
        };
        cloneBody(a, aInputs);
        cloneBody(b, bInputs);
        linalg::YieldOp::create(builder, loc, yielded);
      });
  unsigned numA = a.getNumResults();
  rewriter.replaceOp(a, merged.getResults().take_front(numA));
  rewriter.replaceOp(b, merged.getResults().drop_front(numA));
  return merged;
}

struct CUDAFuseSiblingReductions
    : public mlir::soap::impl::CUDAFuseSiblingReductionsBase<
          CUDAFuseSiblingReductions> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    IRRewriter rewriter(&getContext());
    for (Block *block : blocks) {
      // The candidates seen so far in this block; a merged op replaces the
      // later of its two and may take a third sibling.
      SmallVector<linalg::GenericOp> seen;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        auto generic = dyn_cast<linalg::GenericOp>(op);
        if (!generic || !isCandidate(generic))
          continue;
        for (auto *it = seen.begin(); it != seen.end(); ++it) {
          linalg::GenericOp earlier = *it;
          if (!areSiblings(earlier, generic) || dependsOn(generic, earlier))
            continue;
          // The merged op sits in `generic`'s place; what reads `earlier`'s
          // results before it (its all-reduce, under data parallelism)
          // moves after it.
          FailureOr<SmallVector<Operation *>> moved =
              opsToMoveAfter(earlier, generic);
          if (failed(moved))
            continue;
          seen.erase(it);
          generic = merge(rewriter, earlier, generic);
          Operation *last = generic;
          for (Operation *op : *moved) {
            op->moveAfter(last);
            last = op;
          }
          break;
        }
        seen.push_back(generic);
      }
    }
  }
};

} // namespace
