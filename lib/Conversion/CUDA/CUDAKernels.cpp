//===- CUDAKernels.cpp - linalg ops -> generated GPU kernels --------------===//
//
// The passes that shape linalg ops into kernels before upstream's
// convert-parallel-loops-to-gpu: elementwise fusion (one kernel per group),
// memref.copy as linalg.copy, parallel loops outermost, and the mapping of
// each loop nest (and of the host work between them) onto a 1-D grid of
// thread blocks.
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "CUDAPatterns.h"
#include "soap/Conversion/LoopOrder.h"
#include "soap/Conversion/LowerToCPU.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDAFUSEELEMENTWISE
#define GEN_PASS_DEF_CUDACOPIES
#define GEN_PASS_DEF_CUDACOLLAPSEDIMS
#define GEN_PASS_DEF_CUDALOOPORDER
#define GEN_PASS_DEF_CUDAMAPLOOPS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// soap-cuda-fuse-elementwise
//===----------------------------------------------------------------------===//

/// Ops that go to cuBLAS / cuDNN: nothing may be fused into them.
static bool isLibraryOp(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && (linalg::isaContractionOpInterface(linalgOp) ||
                      linalg::isaConvolutionOpInterface(linalgOp));
}

/// An elementwise producer whose value other ops read too, fused into its
/// first elementwise reader with the same loops: the fused op also yields
/// the producer's value, which the later readers take from it. (Upstream's
/// pattern, given a producer with several uses, leaves it for the other
/// readers and computes it again inside the fused op.) One kernel instead of
/// two, and the reader does not load what the producer stored.
struct FuseIntoFirstElementwiseReader
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!linalg::isElementwise(consumer))
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() ||
          producer.getNumLoops() != consumer.getNumLoops() ||
          !linalg::areElementwiseOpsFusable(operand))
        continue;
      // Every other use after the consumer (so that the fused op, in the
      // consumer's place, dominates it), and the value read once by it.
      bool usable = llvm::all_of(producer->getUses(), [&](OpOperand &use) {
        if (use.getOwner() == consumer.getOperation())
          return &use == operand;
        Operation *user =
            consumer->getBlock()->findAncestorOpInBlock(*use.getOwner());
        return user && user != consumer.getOperation() &&
               consumer->isBeforeInBlock(user);
      });
      if (!usable)
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        return failure();
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

struct CUDAFuseElementwise
    : public soap::impl::CUDAFuseElementwiseBase<CUDAFuseElementwise> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseIntoFirstElementwiseReader>(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          Operation *consumer = fused->getOwner();
          // Only one kernel may compute a value used more than once,
          // otherwise fusion duplicates the producer's work.
          return producer && producer->hasOneUse() &&
                 !isLibraryOp(consumer);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

//===----------------------------------------------------------------------===//
// soap-cuda-copies
//===----------------------------------------------------------------------===//

struct CUDACopies : public soap::impl::CUDACopiesBase<CUDACopies> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};

//===----------------------------------------------------------------------===//
// soap-cuda-loop-order
//===----------------------------------------------------------------------===//

struct CUDALoopOrder : public soap::impl::CUDALoopOrderBase<CUDALoopOrder> {
  /// Parallel loops first, then the reductions; empty if already so.
  static SmallVector<unsigned> desiredOrder(linalg::LinalgOp op) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order;
    for (auto [i, kind] : llvm::enumerate(iterators))
      if (kind == utils::IteratorType::parallel)
        order.push_back(i);
    for (auto [i, kind] : llvm::enumerate(iterators))
      if (kind != utils::IteratorType::parallel)
        order.push_back(i);
    for (auto [i, d] : llvm::enumerate(order))
      if (d != i)
        return order;
    return {};
  }

  void runOnOperation() override {
    soap::reorderLinalgLoops(getOperation(), desiredOrder);
  }
};

//===----------------------------------------------------------------------===//
// soap-cuda-collapse-dims
//===----------------------------------------------------------------------===//

struct CUDACollapseDims
    : public soap::impl::CUDACollapseDimsBase<CUDACollapseDims> {
  /// True if, in every operand, the loops `dims` index adjacent dimensions
  /// that are one contiguous run of memory (or do not index it at all).
  static bool contiguousInEveryOperand(linalg::LinalgOp op,
                                       ArrayRef<int64_t> dims) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue; // a scalar
      AffineMap map = op.getMatchingIndexingMap(&operand);
      std::optional<unsigned> first =
          map.getResultPosition(getAffineDimExpr(dims.front(), op.getContext()));
      if (!first)
        continue; // not indexed (the sequence is preserved: all or none)
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)))
        return false;
      ArrayRef<int64_t> shape = type.getShape();
      for (unsigned i = *first; i + 1 < *first + dims.size(); ++i)
        if (ShapedType::isDynamic(strides[i]) ||
            ShapedType::isDynamic(strides[i + 1]) ||
            ShapedType::isDynamic(shape[i + 1]) ||
            strides[i] != strides[i + 1] * shape[i + 1])
          return false;
    }
    return true;
  }

  /// Maximal runs of adjacent loops that can be merged, each of two or more.
  static SmallVector<ReassociationIndices> groups(linalg::LinalgOp op) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    unsigned n = op.getNumLoops();
    SmallVector<ReassociationIndices> result;
    for (unsigned i = 0; i < n;) {
      ReassociationIndices group = {static_cast<int64_t>(i)};
      unsigned j = i + 1;
      for (; j < n; ++j) {
        ReassociationIndices longer = group;
        longer.push_back(j);
        if (!linalg::areDimSequencesPreserved(maps, longer) ||
            !contiguousInEveryOperand(op, longer))
          break;
        group = std::move(longer);
      }
      if (group.size() > 1)
        result.push_back(group);
      i = j;
    }
    return result;
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Projected permutations only, as upstream's own collapsing patterns
      // select: for a map with constant results (a unit-dimension broadcast,
      // (d0, d1, d2) -> (0, d1, 0)) collapseOpIterationDims builds an
      // invalid memref.collapse_shape.
      if (isa<linalg::GenericOp, linalg::CopyOp>(op) &&
          op.hasPureBufferSemantics() &&
          op.getNumLoops() == op.getNumParallelLoops() &&
          !op.hasIndexSemantics() &&
          llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
            return map.isProjectedPermutation(/*allowZeroInResults=*/false);
          }))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<ReassociationIndices> merged = groups(op);
      if (merged.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, merged, rewriter);
      if (failed(collapsed))
        continue; // keep the op as it is
      rewriter.eraseOp(op); // buffers: no results to replace
    }
  }
};

//===----------------------------------------------------------------------===//
// soap-cuda-map-loops
//===----------------------------------------------------------------------===//

struct CUDAMapLoops : public soap::impl::CUDAMapLoopsBase<CUDAMapLoops> {
  using CUDAMapLoopsBase::CUDAMapLoopsBase;

  static gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *ctx,
                                               gpu::Processor processor) {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    return gpu::ParallelLoopDimMappingAttr::get(ctx, processor, identity,
                                                identity);
  }

  LogicalResult mapNest(scf::ParallelOp loop) {
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    if (loop.getNumLoops() > 1) {
      std::vector<unsigned> all;
      for (unsigned i = 0; i < loop.getNumLoops(); ++i)
        all.push_back(i);
      // The collapsed loop replaces `loop` right before its successor.
      Operation *next = loop->getNextNode();
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
      loop = dyn_cast_or_null<scf::ParallelOp>(next->getPrevNode());
      if (!loop || loop.getNumLoops() != 1)
        return failure();
    }
    auto [blocks, threads] =
        scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
    if (failed(gpu::setMappingAttr(blocks,
                                   {mapTo(ctx, gpu::Processor::BlockX)})) ||
        failed(gpu::setMappingAttr(threads,
                                   {mapTo(ctx, gpu::Processor::ThreadX)})))
      return failure();
    // Parallel loops inside a thread run sequentially.
    threads.getBody()->walk([&](scf::ParallelOp inner) {
      SmallVector<gpu::ParallelLoopDimMappingAttr> seq(
          inner.getNumLoops(), mapTo(ctx, gpu::Processor::Sequential));
      (void)gpu::setMappingAttr(inner, seq);
    });
    return success();
  }

  /// Whether `op` can run in a one-thread kernel among host work: a buffer
  /// access, a pure computation, or a sequential loop of those.
  static bool isKernelWork(Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp>(op))
      return true;
    if (op->hasTrait<OpTrait::IsTerminator>())
      return false;
    if (isa<scf::ForOp>(op)) {
      WalkResult walk = op->walk([&](Operation *inner) {
        if (inner == op || isa<scf::YieldOp>(inner) || isKernelWork(inner))
          return WalkResult::advance();
        return WalkResult::interrupt();
      });
      return !walk.wasInterrupted();
    }
    return op->getNumRegions() == 0 && isPure(op);
  }

  static bool accessesMemory(Operation *op) {
    WalkResult walk = op->walk([](Operation *inner) {
      return isa<memref::LoadOp, memref::StoreOp>(inner)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return walk.wasInterrupted();
  }

  /// A buffer the host itself keeps (a list of `index` elements, or one
  /// handed to a function other than libsoaprt's, such as the deallocation
  /// helper), which must stay on the host. (By the callee's name: a
  /// function pass does not look at other functions.)
  static bool isHostList(Operation *op) {
    bool host = false;
    op->walk([&](Operation *inner) {
      Value buffer;
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        buffer = load.getMemRef();
      else if (auto store = dyn_cast<memref::StoreOp>(inner))
        buffer = store.getMemRef();
      else
        return;
      Value root = soap::rootBuffer(buffer);
      if (isa<IndexType>(cast<BaseMemRefType>(root.getType()).getElementType()))
        host = true;
      SmallVector<Value> work = {root};
      DenseSet<Value> seen;
      while (!work.empty() && !host) {
        Value v = work.pop_back_val();
        if (!seen.insert(v).second)
          continue;
        for (Operation *user : v.getUsers()) {
          if (auto call = dyn_cast<func::CallOp>(user)) {
            StringRef callee = call.getCallee();
            host |= !callee.starts_with("soaprt_") &&
                    !callee.starts_with("mgpu");
          } else if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
            llvm::append_range(work, user->getResults());
          }
        }
      }
    });
    return host;
  }

  /// Work left on the host between kernels: loops of one iteration that
  /// canonicalization folded away (a one-element tile's update), ops with
  /// no parallel loop (a rank-0 elementwise op, the last level of a
  /// reduction to one element). Its buffers live on the GPU: each maximal
  /// run of such ops becomes a one-iteration scf.parallel mapped to one
  /// block of one thread. Pure ops the host reads after the run are copied
  /// into it; a run whose loaded value the host reads stays
  /// (soap-cuda-device-memory reports it).
  void wrapHostWork(Block &block) {
    SmallVector<SmallVector<Operation *>> runs(1);
    bool access = false;
    for (Operation &op : block) {
      if (isKernelWork(&op) && !isHostList(&op)) {
        runs.back().push_back(&op);
        access |= accessesMemory(&op);
        continue;
      }
      if (!access)
        runs.back().clear();
      else
        runs.emplace_back();
      access = false;
    }
    if (!access)
      runs.back().clear();
    for (ArrayRef<Operation *> run : runs) {
      if (run.empty())
        continue;
      llvm::SmallPtrSet<Operation *, 16> inRun(run.begin(), run.end());
      auto usedAfter = [&](Operation *op) {
        return llvm::any_of(op->getUsers(), [&](Operation *user) {
          Operation *top = block.findAncestorOpInBlock(*user);
          return !top || !inRun.contains(top);
        });
      };
      // What the host reads after the run stays there too (copied into
      // the run), with everything it is computed from: a loaded value
      // among that keeps the run on the host.
      llvm::SmallPtrSet<Operation *, 16> keep;
      SmallVector<Operation *> work;
      for (Operation *op : run)
        if (usedAfter(op))
          work.push_back(op);
      bool hostReads = false;
      while (!work.empty() && !hostReads) {
        Operation *op = work.pop_back_val();
        if (!keep.insert(op).second)
          continue;
        hostReads = accessesMemory(op);
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && inRun.contains(def))
            work.push_back(def);
      }
      if (hostReads)
        continue;
      OpBuilder b(run.front());
      Location loc = run.front()->getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto wrapper = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                             ValueRange{one}, ValueRange{one});
      // One block of one thread (not tiled by the block size below).
      (void)gpu::setMappingAttr(wrapper,
                                {mapTo(&getContext(), gpu::Processor::BlockX)});
      Operation *yield = wrapper.getBody()->getTerminator();
      SmallVector<std::pair<Operation *, Operation *>> copies;
      for (Operation *op : run) {
        if (!keep.contains(op)) {
          op->moveBefore(yield);
          continue;
        }
        b.setInsertionPoint(yield);
        copies.push_back({op, b.clone(*op)});
      }
      for (auto [op, copy] : copies)
        for (auto [from, to] :
             llvm::zip(op->getResults(), copy->getResults()))
          from.replaceUsesWithIf(to, [&, wrapper = wrapper](OpOperand &use) {
            return wrapper->isProperAncestor(use.getOwner());
          });
    }
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func->hasAttr(soap::kModelFunctionAttrName))
      wrapHostWork(func.getBody().front());
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation().emitError()
          << "soap-cuda-map-loops: block size "
          << static_cast<int64_t>(blockSize)
          << " is not in 1..1024";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> nests;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->hasAttr(gpu::getMappingAttrName()))
        nests.push_back(loop);
    });
    for (scf::ParallelOp loop : nests)
      if (failed(mapNest(loop))) {
        loop.emitError("soap-cuda-map-loops: cannot map this loop nest onto "
                       "GPU blocks and threads");
        return signalPassFailure();
      }
  }
};

} // namespace
