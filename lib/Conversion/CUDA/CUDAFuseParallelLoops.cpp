//===- CUDAFuseParallelLoops.cpp - One kernel past the frees --------------===//
//
// See Passes.td (soap-cuda-fuse-parallel-loops).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "CUDAPatterns.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDAFUSEPARALLELLOOPS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Ops upstream's fusion lets stand between two loops it fuses.
static bool isTransparent(Operation &op) {
  return op.getNumRegions() == 0 && isMemoryEffectFree(&op);
}

/// The scf.parallel next to `op` in direction `forward`, past transparent
/// ops and other frees; null if something else comes first.
static scf::ParallelOp adjacentLoop(Operation *op, bool forward) {
  for (Operation *next = forward ? op->getNextNode() : op->getPrevNode(); next;
       next = forward ? next->getNextNode() : next->getPrevNode()) {
    if (auto loop = dyn_cast<scf::ParallelOp>(next))
      return loop;
    if (!isa<memref::DeallocOp>(next) && !isTransparent(*next))
      return nullptr;
  }
  return nullptr;
}

/// The same loop bounds as upstream's fusion compares them (the same
/// values).
static bool sameBounds(scf::ParallelOp a, scf::ParallelOp b) {
  return llvm::equal(a.getLowerBound(), b.getLowerBound()) &&
         llvm::equal(a.getUpperBound(), b.getUpperBound()) &&
         llvm::equal(a.getStep(), b.getStep());
}

/// Moves each free that separates two loops with the same bounds after the
/// second one (again, while the next loop has the same bounds too).
static void sinkFreesBetweenLoops(Block &block) {
  SmallVector<memref::DeallocOp> frees;
  for (Operation &op : block)
    if (auto free = dyn_cast<memref::DeallocOp>(op))
      frees.push_back(free);
  for (memref::DeallocOp free : frees)
    while (true) {
      scf::ParallelOp before = adjacentLoop(free, /*forward=*/false);
      scf::ParallelOp after = adjacentLoop(free, /*forward=*/true);
      if (!before || !after || !sameBounds(before, after))
        break;
      free->moveAfter(after);
    }
}

/// Whether `a` and `b` view two different arguments of their function
/// that are marked `llvm.noalias`.
static bool viewDistinctArguments(Value a, Value b) {
  Value x = soap::rootBuffer(a), y = soap::rootBuffer(b);
  return x != y && soap::isNoAliasArgument(x) && soap::isNoAliasArgument(y);
}

struct CUDAFuseParallelLoops
    : public mlir::soap::impl::CUDAFuseParallelLoopsBase<
          CUDAFuseParallelLoops> {
  void runOnOperation() override {
    auto &aliases = getAnalysis<AliasAnalysis>();
    auto mayAlias = [&](Value a, Value b) {
      return !aliases.alias(a, b).isNo() && !viewDistinctArguments(a, b);
    };
    getOperation()->walk([&](Operation *op) {
      for (Region &region : op->getRegions()) {
        for (Block &block : region)
          sinkFreesBetweenLoops(block);
        scf::naivelyFuseParallelOps(region, mayAlias);
      }
    });
  }
};

} // namespace
