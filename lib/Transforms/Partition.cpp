//===- Partition.cpp - Annotated model -> SPMD program --------------------===//
//
// See Passes.td (soap-partition). The region arithmetic (which part of which
// tensor a tile reads and writes) is soap/Simulator/Region.h, shared with the
// simulator; this file only turns it into IR.
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/IterationSpace.h"
#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Dialect/SOAP/IR/SOAPOps.h"
#include "soap/Simulator/Region.h"
#include "soap/Simulator/Strategy.h"
#include "soap/Transforms/StrategyAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_PARTITION
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;
using ::soap::Box;

namespace {

/// Where the meaningful parts of a tensor live.
struct Layout {
  /// Valid on every device (inputs, parameters, constants).
  bool everywhere = false;
  /// Regions and the device that holds each.
  SmallVector<std::pair<Box, int32_t>, 4> pieces;
};

/// Whether `slice` (unit strides) of a pad reads the pad's source in every
/// dimension (true) or in some dimension only padding (false), from static
/// offsets, sizes and padding; nullopt where they are not static.
static std::optional<bool> readsPadSource(tensor::ExtractSliceOp slice,
                                          tensor::PadOp pad) {
  if (!pad.getSourceType().hasStaticShape() || !slice.hasUnitStride())
    return std::nullopt;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  ArrayRef<int64_t> low = pad.getStaticLow();
  ArrayRef<int64_t> shape = pad.getSourceType().getShape();
  if (ShapedType::isDynamicShape(offsets) || ShapedType::isDynamicShape(sizes) ||
      ShapedType::isDynamicShape(low) || offsets.size() != shape.size())
    return std::nullopt;
  for (size_t d = 0; d < shape.size(); ++d)
    if (offsets[d] + sizes[d] <= low[d] || offsets[d] >= low[d] + shape[d])
      return false;
  return true;
}

/// For upstream's extract_slice(pad) swap: apply it without a guard where
/// the slice reads the pad's source in every dimension, otherwise not at
/// all (a slice of padding alone is a fill: shrinkInitializersToTile).
static std::optional<bool> swapWithoutGuard(tensor::ExtractSliceOp slice) {
  auto pad = slice.getSource().getDefiningOp<tensor::PadOp>();
  std::optional<bool> reads = pad ? readsPadSource(slice, pad) : std::nullopt;
  if (reads && *reads)
    return false;
  return std::nullopt;
}

/// A tile's body clones the group's fills and pads whole, but its tiled ops
/// read only their part: each extract_slice of one becomes a fill / pad of
/// that part (upstream's swap patterns) and the whole-size op goes. Without
/// this, every device filled and padded whole tensors for each of its tiles
/// (data parallelism on N devices: N times the work and memory traffic).
static void shrinkInitializersToTile(Block *body) {
  SmallVector<Operation *> slices;
  for (Operation &op : *body) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
    if (slice && slice.getSource().getParentBlock() == body &&
        isa_and_nonnull<linalg::FillOp, tensor::PadOp>(
            slice.getSource().getDefiningOp()))
      slices.push_back(slice);
  }
  if (slices.empty())
    return;
  // A slice of a pad's padding alone (a tile of an update beside the part a
  // placed gradient holds) is a fill of the slice's shape: upstream's swap
  // would keep the whole pad there.
  for (Operation *&op : slices) {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    auto pad = slice.getSource().getDefiningOp<tensor::PadOp>();
    Value padValue = pad ? pad.getConstantPaddingValue() : Value();
    std::optional<bool> reads =
        padValue ? readsPadSource(slice, pad) : std::nullopt;
    if (!reads || *reads)
      continue;
    OpBuilder b(slice);
    Value empty =
        tensor::EmptyOp::create(b, slice.getLoc(), slice.getType().getShape(),
                                slice.getType().getElementType());
    Value fill =
        linalg::FillOp::create(b, slice.getLoc(), padValue, empty).getResult(0);
    slice.getResult().replaceAllUsesWith(fill);
    slice.erase();
    op = nullptr;
  }
  llvm::erase(slices, nullptr);
  MLIRContext *ctx = body->getParentOp()->getContext(); // the scf.if
  RewritePatternSet patterns(ctx);
  linalg::populateSwapExtractSliceWithFillPatterns(patterns);
  patterns.add<linalg::ExtractSliceOfPadTensorSwapPattern>(ctx,
                                                           swapWithoutGuard);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  (void)applyOpPatternsGreedily(slices, std::move(patterns), config);
  // The whole-size ops, and the swaps' unused zero-size checks.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

class Partitioner {
public:
  Partitioner(func::FuncOp func, int32_t numDevices)
      : func(func), numDevices(numDevices) {}

  LogicalResult run();

private:
  LogicalResult partitionNode(int32_t node);
  /// The output region of each tile of `node`'s anchor and the tile's device
  /// (where a split reduction leaves its partial results).
  SmallVector<std::pair<Box, int32_t>> partialPieces(int32_t node);
  /// Whether tile `t` of `node` is at the first coordinate of every
  /// reduction loop (the tile of a split reduction that starts from the
  /// init; the others start from the combiner's identity).
  bool firstReductionTile(int32_t node, int32_t t);
  /// The init of `node`'s anchor when nothing else in its group reads it
  /// (a tile starting from the identity then reads nothing of it); null
  /// otherwise.
  Value initReadOnlyAsInit(int32_t node);
  /// The node whose anchor sums onto `node`'s sum: `node`'s result is only
  /// that sum's init, both are sums, `node` has no epilogue and the next one
  /// only one whose result is the node's one output (then it ends the
  /// chain); -1 if none.
  int32_t nextSumOf(int32_t node);
  /// Whether `node`'s group has ops after its anchor (an elementwise
  /// epilogue).
  bool hasEpilogue(int32_t node);
  /// Whether `node` starts a chain of sums (nextSumOf) whose partial results
  /// can stay on their devices, and the devices whose partial sums start as
  /// a whole tensor of zeros: those with a tile that writes a region partly
  /// over what its earlier tiles wrote (it reads the sums so far there and
  /// zeros elsewhere). The others start each region from the identity. A
  /// chain with such devices must start from zeros (the training step's).
  std::optional<SmallVector<int32_t>> sumChainZeroedDevices(int32_t node);
  /// A sum of such a chain (a weight's gradient accumulated over the time
  /// steps that share it, an activation's over its readers:
  /// soap-training-step). Every device accumulates its
  /// own partial sums, each tile starting from what its device summed of
  /// its region so far (or from the identity where it summed nothing), and
  /// the last sum of the chain all-reduces each region over the devices
  /// that hold partial sums of it: the one synchronization per parameter
  /// the simulator charges, instead of one per sum.
  LogicalResult partitionChainedSum(int32_t node);
  /// An in-place update of argument `arg` (a node of its own): computed on
  /// every device that reads a part of `arg`, that part each.
  LogicalResult partitionUpdate(int32_t node, int64_t arg);
  /// The loops of an in-place update `node` that write `region` of its
  /// output: none unless its output is indexed by one loop per dimension.
  std::optional<Box> updateLoops(int32_t node, const Box &region);
  /// What each device will read of tensor `tensor` (the regions its
  /// readers' tiles, the in-place updates reading it and the gather of a
  /// result to rank 0 read), by device; none when an op outside the op
  /// graph reads it.
  std::optional<std::map<int32_t, SmallVector<Box>>>
  futureReads(int32_t tensor);
  /// The dimension along which a split reduction's partial sums of `region`
  /// held on `devices` are reduce-scattered instead of all-reduced, with
  /// `devices` put in chunk order (chunk i for devices[i]): Region.h's
  /// scatterDimension, shared with the simulator, over every read of
  /// futureReads by a device of the group, among the dimensions that the
  /// group's output and the anchor's result index by the same one loop (so
  /// that the epilogue runs on the chunk).
  std::optional<int32_t> scatterDimension(int32_t node, const Box &region,
                                          SmallVectorImpl<int64_t> &devices);
  /// Where sumAtReaders (Region.h, shared with the simulator) says that
  /// moves less than combining `region` of `node`'s one output over
  /// `devices` (which hold partial sums of it, combined with `kind`; a
  /// reduce-scatter where `scattered`): sends each device that will read
  /// part of the region the other devices' partial sums of what it reads,
  /// combined there, updating `partial` and appending what each reader then
  /// holds to `held`. Not for a node with an epilogue or a result of the
  /// program (the simulator leaves its gather out). Returns whether it did.
  FailureOr<bool>
  combineAtReaders(int32_t node, const Box &region, ArrayRef<int64_t> devices,
                   bool scattered, ReductionKind kind, Value &partial,
                   SmallVectorImpl<std::pair<Box, int32_t>> &held);
  /// The parts of argument `arg` each device reads, by device, disjoint:
  /// the bounding box of its tiles' reads and, apart, of their reads of
  /// each slice of it that only layers read.
  SmallVector<std::pair<int32_t, Box>> argumentReaders(int64_t arg);
  /// Marks result `result`, the in-place update whose parts are `parts`,
  /// with soap.held_parts where some device holds several (the elements
  /// between them are stale there, which a gather of each device's
  /// bounding box would take).
  void setHeldParts(unsigned result, ArrayRef<std::pair<int32_t, Box>> parts);
  /// Makes region `region` of (the current version of) `value` valid on
  /// `device`, emitting transfers from the devices that hold its parts.
  void ensureValid(Value value, const Box &region, int32_t device);
  /// Emits `scf.if (rank == device)` whose then-branch `body` computes new
  /// full-size values of `resultTypes`; the else-branch yields `current`.
  SmallVector<Value>
  emitOnDevice(int32_t device, ValueRange current,
               function_ref<FailureOr<SmallVector<Value>>(OpBuilder &)> body);
  /// Clones the group's ops (in program order) into `b`; the anchor (and,
  /// after it, the grouped elementwise ops) are tiled to `loopBox`. Returns
  /// the full-size values of the group's outputs.
  /// `identityInto`: with `identityInit`, the full-size value the anchor's
  /// tile is written into (default: a new one).
  FailureOr<SmallVector<Value>> emitTile(OpBuilder &b, int32_t node,
                                         const Box &loopBox, bool tiled,
                                         bool anchorOnly, bool identityInit,
                                         Value anchorResult,
                                         Value identityInto = {});
  Value current(Value original) {
    auto it = versions.find(original);
    return it == versions.end() ? original : it->second;
  }
  Layout &layoutOf(Value original) {
    auto it = layouts.find(original);
    if (it == layouts.end()) {
      Layout everywhere;
      everywhere.everywhere = true;
      it = layouts.insert({original, everywhere}).first;
    }
    return it->second;
  }

  func::FuncOp func;
  int32_t numDevices;
  ExtractedOpGraph extracted;
  ::soap::Strategy strategy;
  OpBuilder builder{func.getContext()};
  Value rank;
  llvm::DenseMap<Value, Value> versions;
  llvm::DenseMap<Value, Layout> layouts;
  /// The ops of the op graph's nodes (the original ones).
  llvm::DenseSet<Operation *> nodeOpSet;
  /// The node of each anchor op.
  llvm::DenseMap<Operation *, int32_t> nodeOfAnchor;
  /// The partial sums of a chain (partitionChainedSum) so far.
  struct PartialSums {
    /// On each device, its partial sums (full size, meaningful where the
    /// device wrote).
    Value partial;
    /// The regions written, and by which device.
    SmallVector<std::pair<Box, int32_t>, 8> written;
    /// The devices whose partial sums started as zeros, whole.
    SmallVector<int32_t> zeroed;
  };
  /// The result of each sum of a chain but the last (uncombined).
  llvm::DenseMap<Value, PartialSums> uncombined;
  /// Value -> device -> the bounding box of what the device reads of it
  /// (ensureValid's requests; absent: nothing).
  llvm::DenseMap<Value, std::map<int32_t, Box>> reads;
  /// Per argument updated in place, the parts partitionUpdate wrote, by
  /// device (argumentReaders before the update read the argument too).
  llvm::DenseMap<int64_t, SmallVector<std::pair<int32_t, Box>>> updatedParts;
};

/// The loop of a node that alone indexes a tensor dimension, one to one.
static std::optional<int32_t> plainLoop(const ::soap::DimAccess &dim) {
  if (dim.whole || dim.constant != 0 || dim.terms.size() != 1 ||
      dim.terms[0].coefficient != 1)
    return std::nullopt;
  return dim.terms[0].loop;
}

/// `x` and `y` (tensors of one type) combined element by element by `kind`.
static Value combineTensors(OpBuilder &b, Location loc, ReductionKind kind,
                            Value x, Value y) {
  auto type = cast<RankedTensorType>(x.getType());
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{x, y}, ValueRange{init},
             SmallVector<AffineMap>(3, identity), parallel,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l, combineScalars(nb, l, kind, args[0], args[1]));
             })
      .getResult(0);
}

} // namespace

void Partitioner::ensureValid(Value value, const Box &region,
                              int32_t device) {
  if (region.empty())
    return;
  auto [read, first] = reads[value].insert({device, region});
  if (!first)
    read->second = ::soap::hull(read->second, region);
  Layout &layout = layoutOf(value);
  if (layout.everywhere)
    return;
  // What the device holds already (its own pieces, earlier transfers to
  // it) is not moved again: of each owner's part, only the smallest box
  // covering what is missing (a later read of a whole tile after a halo of
  // it moves the rest of the tile).
  std::vector<Box> have;
  for (auto &[box, owner] : layout.pieces)
    if (owner == device)
      have.push_back(box);
  SmallVector<std::pair<Box, int32_t>, 4> sends;
  for (auto &[box, owner] : layout.pieces) {
    if (owner == device)
      continue;
    Box part = ::soap::intersect(box, region);
    if (part.empty())
      continue;
    std::optional<Box> missing = ::soap::missingHull(part, have);
    if (!missing)
      continue;
    part = *missing;
    sends.push_back({part, owner});
    have.push_back(part);
  }
  for (auto &[part, owner] : sends) {
    SmallVector<int64_t> offsets, sizes;
    for (int32_t d = 0; d < part.rank; ++d) {
      offsets.push_back(part.dims[d].lo);
      sizes.push_back(part.dims[d].size());
    }
    Value moved = TransferOp::create(builder, func.getLoc(), current(value),
                                     builder.getDenseI64ArrayAttr(offsets),
                                     builder.getDenseI64ArrayAttr(sizes),
                                     builder.getI64IntegerAttr(owner),
                                     builder.getI64IntegerAttr(device));
    versions[value] = moved;
    layout.pieces.push_back({part, device});
  }
}

SmallVector<Value> Partitioner::emitOnDevice(
    int32_t device, ValueRange currentValues,
    function_ref<FailureOr<SmallVector<Value>>(OpBuilder &)> body) {
  Location loc = func.getLoc();
  Value id = arith::ConstantIndexOp::create(builder, loc, device);
  Value mine = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                     rank, id);
  bool failedBody = false;
  auto ifOp = scf::IfOp::create(
      builder, loc, mine,
      [&](OpBuilder &b, Location l) {
        FailureOr<SmallVector<Value>> values = body(b);
        if (failed(values)) {
          failedBody = true;
          scf::YieldOp::create(b, l, currentValues);
          return;
        }
        scf::YieldOp::create(b, l, *values);
      },
      [&](OpBuilder &b, Location l) {
        scf::YieldOp::create(b, l, currentValues);
      });
  if (failedBody)
    return {};
  shrinkInitializersToTile(ifOp.thenBlock());
  return SmallVector<Value>(ifOp.getResults());
}

FailureOr<SmallVector<Value>>
Partitioner::emitTile(OpBuilder &b, int32_t nodeIndex, const Box &loopBox,
                      bool tiled, bool anchorOnly, bool identityInit,
                      Value anchorResult, Value identityInto) {
  const ::soap::Node &node = extracted.graph.nodes[nodeIndex];
  SmallVector<Operation *> ops(extracted.nodeOps[nodeIndex]);
  Operation *anchor = ops.front();
  llvm::sort(ops, [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
  IRMapping mapping;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!mapping.contains(operand))
        mapping.map(operand, current(operand));
  Location loc = anchor->getLoc();
  // Loop box -> offsets/sizes of a tiling over `numLoops` loops.
  auto toOfr = [&](ArrayRef<int64_t> values) {
    SmallVector<OpFoldResult> result;
    for (int64_t v : values)
      result.push_back(b.getIndexAttr(v));
    return result;
  };
  // The anchor's output region for this tile, per output dimension.
  Box outRegion;
  if (!node.outputs.empty())
    outRegion = ::soap::accessRegion(node.outputs.front(),
                                     extracted.graph.tensors[node.outputs.front().tensor],
                                     loopBox);
  bool seenAnchor = false;
  for (Operation *op : ops) {
    if (anchorOnly && seenAnchor)
      break;
    if (op == anchor && anchorResult) {
      // Phase 3 of a split reduction: the anchor's combined result.
      mapping.map(anchor->getResult(0), anchorResult);
      seenAnchor = true;
      continue;
    }
    bool isTiledOp = tiled && isa<TilingInterface>(op) &&
                     isa<linalg::LinalgOp>(op) &&
                     (op == anchor || seenAnchor);
    Operation *clone = b.clone(*op, mapping);
    clone->removeAttr(SOAPDialect::kConfigAttrName);
    if (op == anchor)
      seenAnchor = true;
    if (!isTiledOp)
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(clone);
    SmallVector<int64_t> offsets, sizes;
    if (op == anchor) {
      for (int32_t l = 0; l < loopBox.rank; ++l) {
        offsets.push_back(loopBox.dims[l].lo);
        sizes.push_back(loopBox.dims[l].size());
      }
      if (identityInit) {
        // (Of the original op: a lookup's combiner depends on its init, a
        // zero fill, which the clone may read through a transfer.)
        FailureOr<ReductionKind> kind = getSplitCombiner(op);
        if (failed(kind))
          return op->emitError()
                 << "cannot split the reduction of '" << op->getName()
                 << "': its combiner is not a sum, max or min";
        OpOperand *init = linalgOp.getDpsInitOperand(0);
        auto type = cast<RankedTensorType>(init->get().getType());
        Value cst = arith::ConstantOp::create(
            b, loc, getReductionIdentity(b, *kind, type.getElementType()));
        // Only the tile's part of the fill stays (shrinkInitializersToTile)
        // and the tile is inserted into what the fill writes over.
        Value into = identityInto
                         ? identityInto
                         : tensor::EmptyOp::create(b, loc, type.getShape(),
                                                   type.getElementType())
                               .getResult();
        Value fill = linalg::FillOp::create(b, loc, cst, into).getResult(0);
        init->set(fill);
      }
    } else {
      // An elementwise op after the anchor: its loops index its output
      // through a permutation; they cover the tile's output region.
      AffineMap outMap =
          linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0));
      offsets.assign(linalgOp.getNumLoops(), 0);
      sizes.assign(linalgOp.getNumLoops(), 0);
      for (unsigned p = 0; p < outMap.getNumResults(); ++p) {
        unsigned loop = cast<AffineDimExpr>(outMap.getResult(p)).getPosition();
        offsets[loop] = outRegion.dims[p].lo;
        sizes[loop] = outRegion.dims[p].size();
      }
    }
    auto tiling = cast<TilingInterface>(clone);
    FailureOr<TilingResult> tiledResult =
        tiling.getTiledImplementation(b, toOfr(offsets), toOfr(sizes));
    if (failed(tiledResult))
      return op->emitError() << "cannot tile '" << op->getName() << "'";
    for (unsigned r = 0; r < clone->getNumResults(); ++r) {
      SmallVector<OpFoldResult> resultOffsets, resultSizes;
      if (failed(tiling.getResultTilePosition(b, r, toOfr(offsets),
                                              toOfr(sizes), resultOffsets,
                                              resultSizes)))
        return op->emitError() << "cannot place the tile of '"
                               << op->getName() << "'";
      Value full = linalgOp.getDpsInitOperand(r)->get();
      // Only the tile's region of the result means something on this
      // device (the layout records no more), so a whole-size fill needs
      // not be the background it is inserted into.
      // Nor need another op of the layer computed here for the whole
      // tensor (a bias broadcast into a convolution's accumulator): with an
      // empty background its only use is the tile's slice of it, which the
      // lowering moves above it (soap-bubble-up-slices), so each device
      // computes, and reads the parameters of, its tile only.
      if (auto fill = full.getDefiningOp<linalg::FillOp>();
          fill && fill->getBlock() == b.getBlock())
        full = fill.getDpsInitOperand(0)->get();
      else if (Operation *def = full.getDefiningOp();
               def && def->getBlock() == b.getBlock() &&
               !isa<tensor::EmptyOp>(def))
        full = tensor::EmptyOp::create(
                   b, loc, cast<RankedTensorType>(full.getType()).getShape(),
                   cast<RankedTensorType>(full.getType()).getElementType())
                   .getResult();
      auto fullType = cast<RankedTensorType>(full.getType());
      SmallVector<OpFoldResult> strides(fullType.getRank(), b.getIndexAttr(1));
      Value inserted = tensor::InsertSliceOp::create(
          b, loc, tiledResult->tiledValues[r], full, resultOffsets,
          resultSizes, strides);
      mapping.map(op->getResult(r), inserted);
    }
    clone->erase();
  }
  SmallVector<Value> outputs;
  for (const ::soap::Operand &out : node.outputs) {
    Value original = extracted.tensorValues[out.tensor];
    if (anchorOnly)
      original = anchor->getResult(outputs.size());
    outputs.push_back(mapping.lookupOrDefault(original));
  }
  return outputs;
}

SmallVector<std::pair<Box, int32_t>>
Partitioner::partialPieces(int32_t nodeIndex) {
  const ::soap::Node &node = extracted.graph.nodes[nodeIndex];
  const ::soap::ParallelConfig &config = strategy.configs[nodeIndex];
  auto anchor = cast<linalg::LinalgOp>(extracted.nodeOps[nodeIndex].front());
  ::soap::Operand access;
  for (const ::soap::DimAccess &dim : getDimAccesses(
           anchor.getMatchingIndexingMap(anchor.getDpsInitOperand(0))))
    access.dims.push_back(dim);
  ::soap::Tensor tensor;
  auto type = cast<RankedTensorType>(anchor->getResult(0).getType());
  tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  SmallVector<std::pair<Box, int32_t>> pieces;
  for (int32_t t = 0; t < ::soap::numTiles(config.degrees); ++t)
    pieces.push_back(
        {::soap::accessRegion(access, tensor,
                              ::soap::tileLoopBox(node, config.degrees, t)),
         config.devices[t]});
  return pieces;
}

bool Partitioner::firstReductionTile(int32_t nodeIndex, int32_t t) {
  const ::soap::Node &node = extracted.graph.nodes[nodeIndex];
  std::array<int32_t, ::soap::kMaxRank> coords;
  ::soap::tileCoordinates(strategy.configs[nodeIndex].degrees, t, coords);
  for (int32_t l = 0; l < node.numLoops(); ++l)
    if (node.loopKinds[l] == ::soap::LoopKind::Reduction && coords[l] != 0)
      return false;
  return true;
}

Value Partitioner::initReadOnlyAsInit(int32_t nodeIndex) {
  auto anchor =
      dyn_cast<linalg::LinalgOp>(extracted.nodeOps[nodeIndex].front());
  if (!anchor || anchor.getNumDpsInits() != 1)
    return {};
  OpOperand *init = anchor.getDpsInitOperand(0);
  for (Operation *op : extracted.nodeOps[nodeIndex])
    for (OpOperand &use : op->getOpOperands())
      if (use.get() == init->get() && &use != init)
        return {};
  return init->get();
}

bool Partitioner::hasEpilogue(int32_t nodeIndex) {
  Operation *anchor = extracted.nodeOps[nodeIndex].front();
  return llvm::any_of(extracted.nodeOps[nodeIndex], [&](Operation *op) {
    return anchor->isBeforeInBlock(op);
  });
}

int32_t Partitioner::nextSumOf(int32_t nodeIndex) {
  // A sum whose anchor is the whole node, or (the chain's last) whose one
  // output is its epilogue's, the anchor's sum read only there.
  auto isSum = [&](int32_t n, bool last) {
    const ::soap::Node &node = extracted.graph.nodes[n];
    ArrayRef<Operation *> ops = extracted.nodeOps[n];
    Operation *anchor = ops.front();
    if (!isa<linalg::LinalgOp>(anchor) || !isa<TilingInterface>(anchor) ||
        node.outputs.size() != 1 || anchor->getNumResults() != 1)
      return false;
    bool plain = extracted.tensorValues[node.outputs.front().tensor] ==
                     anchor->getResult(0) &&
                 !hasEpilogue(n);
    bool epilogue =
        last && llvm::all_of(anchor->getUsers(), [&](Operation *user) {
          return llvm::is_contained(ops, user);
        });
    if (!plain && !epilogue)
      return false;
    FailureOr<ReductionKind> kind = getReductionCombiner(anchor);
    return succeeded(kind) && *kind == ReductionKind::Sum;
  };
  if (!isSum(nodeIndex, /*last=*/false))
    return -1;
  Value result = extracted.nodeOps[nodeIndex].front()->getResult(0);
  if (!result.hasOneUse())
    return -1;
  OpOperand &use = *result.use_begin();
  auto next = dyn_cast<linalg::LinalgOp>(use.getOwner());
  auto it = nodeOfAnchor.find(use.getOwner());
  if (!next || it == nodeOfAnchor.end() || !next.isDpsInit(&use) ||
      !next.payloadUsesValueFromOperand(&use) ||
      !isSum(it->second, /*last=*/true))
    return -1;
  return it->second;
}

std::optional<SmallVector<int32_t>>
Partitioner::sumChainZeroedDevices(int32_t nodeIndex) {
  if (nextSumOf(nodeIndex) < 0)
    return std::nullopt;
  SmallVector<int32_t> zeroed;
  SmallVector<std::pair<Box, int32_t>> written = partialPieces(nodeIndex);
  for (int32_t n = nextSumOf(nodeIndex); n >= 0; n = nextSumOf(n)) {
    SmallVector<std::pair<Box, int32_t>> pieces = partialPieces(n);
    for (const std::pair<Box, int32_t> &piece : pieces) {
      bool inside = false, outside = true;
      for (const std::pair<Box, int32_t> &w : written)
        if (w.second == piece.second) {
          inside |= covers(w.first, piece.first);
          outside &= ::soap::intersect(w.first, piece.first).empty();
        }
      if (!inside && !outside && !llvm::is_contained(zeroed, piece.second))
        zeroed.push_back(piece.second);
    }
    llvm::append_range(written, pieces);
  }
  if (!zeroed.empty()) {
    auto anchor = cast<linalg::LinalgOp>(extracted.nodeOps[nodeIndex].front());
    auto fill =
        anchor.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
      return std::nullopt;
  }
  return zeroed;
}

FailureOr<bool>
Partitioner::combineAtReaders(int32_t nodeIndex, const Box &region,
                              ArrayRef<int64_t> devices, bool scattered,
                              ReductionKind kind, Value &partial,
                              SmallVectorImpl<std::pair<Box, int32_t>> &held) {
  const ::soap::Node &node = extracted.graph.nodes[nodeIndex];
  Location loc = extracted.nodeOps[nodeIndex].front()->getLoc();
  SmallVector<int64_t> sorted(devices.begin(), devices.end());
  llvm::sort(sorted);
  if (node.outputs.size() != 1 || devices.size() < 2 ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ||
      hasEpilogue(nodeIndex) ||
      llvm::any_of(
          extracted.tensorValues[node.outputs.front().tensor].getUsers(),
          [](Operation *user) { return isa<func::ReturnOp>(user); }))
    return false;
  std::optional<std::map<int32_t, SmallVector<Box>>> reads =
      futureReads(node.outputs.front().tensor);
  if (!reads)
    return false;
  std::vector<::soap::DeviceRead> deviceReads, boxes;
  for (auto &[device, list] : *reads)
    for (const Box &box : list)
      deviceReads.push_back({device, box});
  std::vector<int32_t> group(devices.begin(), devices.end());
  if (!::soap::sumAtReaders(region, group, scattered, deviceReads, &boxes) ||
      boxes.empty())
    return false;
  Value source = partial;
  for (const ::soap::DeviceRead &read : boxes) {
    SmallVector<int64_t> at, extent, unit(read.region.rank, 1);
    for (int32_t d = 0; d < read.region.rank; ++d) {
      at.push_back(read.region.dims[d].lo);
      extent.push_back(read.region.dims[d].size());
    }
    // The others' partial sums of the box, moved to the reader.
    SmallVector<Value> parts;
    if (llvm::is_contained(devices, read.device))
      parts.push_back(source);
    for (int64_t member : devices)
      if (member != read.device)
        parts.push_back(TransferOp::create(
            builder, loc, source, builder.getDenseI64ArrayAttr(at),
            builder.getDenseI64ArrayAttr(extent),
            builder.getI64IntegerAttr(member),
            builder.getI64IntegerAttr(read.device)));
    Value into = partial;
    SmallVector<Value> next = emitOnDevice(
        read.device, partial,
        [&](OpBuilder &b) -> FailureOr<SmallVector<Value>> {
          SmallVector<OpFoldResult> offsets =
              getAsIndexOpFoldResult(b.getContext(), at);
          SmallVector<OpFoldResult> sizes =
              getAsIndexOpFoldResult(b.getContext(), extent);
          SmallVector<OpFoldResult> strides =
              getAsIndexOpFoldResult(b.getContext(), unit);
          Value sum;
          for (Value part : parts) {
            Value slice = tensor::ExtractSliceOp::create(b, loc, part, offsets,
                                                         sizes, strides);
            sum = sum ? combineTensors(b, loc, kind, sum, slice) : slice;
          }
          return SmallVector<Value>{tensor::InsertSliceOp::create(
              b, loc, sum, into, offsets, sizes, strides)};
        });
    if (next.empty())
      return failure();
    partial = next.front();
    held.push_back({read.region, read.device});
  }
  return true;
}

LogicalResult Partitioner::partitionChainedSum(int32_t nodeIndex) {
  const ::soap::OpGraph &graph = extracted.graph;
  const ::soap::Node &node = graph.nodes[nodeIndex];
  const ::soap::ParallelConfig &config = strategy.configs[nodeIndex];
  auto anchor = cast<linalg::LinalgOp>(extracted.nodeOps[nodeIndex].front());
  Value init = anchor.getDpsInitOperand(0)->get();
  Value result = anchor->getResult(0);
  SmallVector<std::pair<Box, int32_t>> pieces = partialPieces(nodeIndex);
  PartialSums sums;
  auto found = uncombined.find(init);
  bool continues = found != uncombined.end();
  if (continues) {
    sums = std::move(found->second);
    uncombined.erase(found);
  } else {
    auto type = cast<RankedTensorType>(result.getType());
    sums.partial = tensor::EmptyOp::create(builder, anchor.getLoc(),
                                           type.getShape(),
                                           type.getElementType());
    sums.zeroed = *sumChainZeroedDevices(nodeIndex);
    for (int32_t device : sums.zeroed)
      sums.partial =
          emitOnDevice(device, sums.partial, [&](OpBuilder &b) {
            Value zero = arith::ConstantOp::create(
                b, anchor.getLoc(), b.getZeroAttr(type.getElementType()));
            return SmallVector<Value>{
                linalg::FillOp::create(b, anchor.getLoc(), zero, sums.partial)
                    .getResult(0)};
          }).front();
  }
  // The chain's first sum starts from its init like any split reduction
  // (from zeros on the devices whose partial sums start as zeros); the
  // others from their device's partial sums, or from the identity where the
  // device summed nothing of the region yet.
  SmallVector<bool> identity;
  for (int32_t t = 0; t < static_cast<int32_t>(pieces.size()); ++t) {
    const std::pair<Box, int32_t> &piece = pieces[t];
    bool zeroed = llvm::is_contained(sums.zeroed, piece.second);
    if (!continues)
      identity.push_back(zeroed || !firstReductionTile(nodeIndex, t));
    else
      identity.push_back(
          !zeroed && llvm::none_of(sums.written, [&](const auto &w) {
            return w.second == piece.second && covers(w.first, piece.first);
          }));
  }
  Value initOnly = initReadOnlyAsInit(nodeIndex);
  for (int32_t t = 0; t < static_cast<int32_t>(pieces.size()); ++t) {
    Box loops = ::soap::tileLoopBox(node, config.degrees, t);
    for (const ::soap::Operand &in : node.inputs) {
      Value value = extracted.tensorValues[in.tensor];
      if (value == init && (continues || (value == initOnly && identity[t])))
        continue;
      ensureValid(value,
                  ::soap::accessRegion(in, graph.tensors[in.tensor], loops),
                  config.devices[t]);
    }
  }
  for (auto [t, piece] : llvm::enumerate(pieces)) {
    Box loops = ::soap::tileLoopBox(node, config.degrees, t);
    if (continues)
      versions[init] = sums.partial;
    Value into = sums.partial;
    bool fromIdentity = identity[t];
    SmallVector<Value> next = emitOnDevice(
        piece.second, sums.partial, [&](OpBuilder &b) {
          return emitTile(b, nodeIndex, loops, true, true, fromIdentity, {},
                          into);
        });
    if (next.empty())
      return failure();
    sums.partial = next.front();
    sums.written.push_back(piece);
  }
  versions[result] = sums.partial;
  if (nextSumOf(nodeIndex) >= 0) {
    layouts[result] = Layout();
    uncombined[result] = std::move(sums);
    return success();
  }

  // The last sum: each region summed on several devices is all-reduced over
  // them, region by region as the simulator synchronizes a shared
  // parameter (combinationRegions: where the devices' regions overlap, the
  // cells of their grid).
  std::vector<Box> distinct, regions;
  for (auto &[region, device] : sums.written)
    if (llvm::find(distinct, region) == distinct.end())
      distinct.push_back(region);
  std::vector<int64_t> bounds;
  ::soap::combinationRegions(distinct, SIZE_MAX, regions, bounds);
  Layout layout;
  FailureOr<ReductionKind> kind = getSplitCombiner(anchor);
  for (const Box &region : regions) {
    SmallVector<int64_t> devices;
    for (auto &[written, device] : sums.written)
      if (covers(written, region) && !llvm::is_contained(devices, device))
        devices.push_back(device);
    llvm::sort(devices); // one communicator per device set
    // Or summed where it is read (the gates x W + h U of an RNN step, the
    // two products on different devices and the gates on one of them).
    FailureOr<bool> atReaders =
        combineAtReaders(nodeIndex, region, devices, /*scattered=*/false, *kind,
                         sums.partial, layout.pieces);
    if (failed(atReaders))
      return failure();
    if (*atReaders)
      continue;
    for (int64_t device : devices)
      layout.pieces.push_back({region, static_cast<int32_t>(device)});
    if (devices.size() < 2)
      continue;
    SmallVector<int64_t> offsets, sizes;
    for (int32_t d = 0; d < region.rank; ++d) {
      offsets.push_back(region.dims[d].lo);
      sizes.push_back(region.dims[d].size());
    }
    sums.partial = AllReduceOp::create(
        builder, anchor.getLoc(), sums.partial,
        builder.getDenseI64ArrayAttr(offsets),
        builder.getDenseI64ArrayAttr(sizes),
        ReductionKindAttr::get(builder.getContext(), *kind),
        builder.getDenseI64ArrayAttr(devices));
  }
  versions[result] = sums.partial;
  layouts[result] = layout;
  if (!hasEpilogue(nodeIndex))
    return success();

  // The epilogue, on each tile's device over the tile's region (all its
  // cells were combined there: the device summed all of the region).
  Value output = extracted.tensorValues[node.outputs.front().tensor];
  auto outputType = cast<RankedTensorType>(output.getType());
  SmallVector<Value> outputs{tensor::EmptyOp::create(
      builder, anchor.getLoc(), outputType.getShape(),
      outputType.getElementType())};
  Layout outputLayout;
  for (int32_t t = 0; t < static_cast<int32_t>(pieces.size()); ++t) {
    Box loops = ::soap::tileLoopBox(node, config.degrees, t);
    Value combined = sums.partial;
    outputs = emitOnDevice(pieces[t].second, outputs, [&](OpBuilder &b) {
      return emitTile(b, nodeIndex, loops, true, false, false, combined);
    });
    if (outputs.empty())
      return failure();
    for (const Box &box : ::soap::exactAccessRegions(
             node.outputs.front(),
             graph.tensors[node.outputs.front().tensor], loops))
      outputLayout.pieces.push_back({box, pieces[t].second});
  }
  versions[output] = outputs.front();
  layouts[output] = outputLayout;
  return success();
}

LogicalResult Partitioner::partitionNode(int32_t nodeIndex) {
  const ::soap::OpGraph &graph = extracted.graph;
  const ::soap::Node &node = graph.nodes[nodeIndex];
  const ::soap::ParallelConfig &config = strategy.configs[nodeIndex];
  Operation *anchor = extracted.nodeOps[nodeIndex].front();
  Location loc = anchor->getLoc();
  int32_t tiles = ::soap::numTiles(config.degrees);
  bool tileable = isa<linalg::LinalgOp>(anchor) && isa<TilingInterface>(anchor);
  bool splitsReduction = ::soap::splitsReduction(node, config.degrees);
  if (splitsReduction && !tileable)
    return anchor->emitError() << "layer '" << node.name
                               << "' splits a reduction loop but its op "
                                  "cannot be tiled";

  if (!node.outputs.empty())
    if (std::optional<int64_t> arg = getUpdatedArgument(
            extracted.tensorValues[node.outputs.front().tensor]))
      return partitionUpdate(nodeIndex, *arg);

  // Sums accumulated one onto the other.
  if (tileable) {
    auto linalgOp = cast<linalg::LinalgOp>(anchor);
    if (linalgOp.getNumDpsInits() == 1 &&
        (uncombined.count(linalgOp.getDpsInitOperand(0)->get()) ||
         sumChainZeroedDevices(nodeIndex)))
      return partitionChainedSum(nodeIndex);
  }

  // A split reduction's tiles start from the combiner's identity, except
  // those of the first reduction coordinates, which start from the init.
  auto startsFromIdentity = [&](int32_t t) {
    return splitsReduction && !firstReductionTile(nodeIndex, t);
  };
  Value initOnly = splitsReduction ? initReadOnlyAsInit(nodeIndex) : Value();

  // Inputs each tile reads, moved to the tile's device.
  for (int32_t t = 0; t < tiles; ++t) {
    Box loops = ::soap::tileLoopBox(node, config.degrees, t);
    for (const ::soap::Operand &in : node.inputs) {
      Value value = extracted.tensorValues[in.tensor];
      if (value == initOnly && startsFromIdentity(t))
        continue;
      const ::soap::Tensor &tensor = graph.tensors[in.tensor];
      ensureValid(value, ::soap::accessRegion(in, tensor, loops),
                  config.devices[t]);
    }
  }

  // Full-size starting values of the outputs (meaningless until written).
  auto emptyLike = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    return tensor::EmptyOp::create(builder, loc, type.getShape(),
                                   type.getElementType());
  };
  SmallVector<Value> outputs;
  for (const ::soap::Operand &out : node.outputs)
    outputs.push_back(emptyLike(extracted.tensorValues[out.tensor]));

  // The loop box of each tile whose outputs are meaningful, and its device.
  SmallVector<std::pair<Box, int32_t>, 4> owned;
  // Regions of the output (not loop boxes) that devices hold: where a
  // split reduction's sums were combined at their readers.
  SmallVector<std::pair<Box, int32_t>> ownedRegions;
  if (!splitsReduction) {
    for (int32_t t = 0; t < tiles; ++t) {
      Box loops = ::soap::tileLoopBox(node, config.degrees, t);
      SmallVector<Value> next = emitOnDevice(
          config.devices[t], outputs, [&](OpBuilder &b) {
            return emitTile(b, nodeIndex, loops, tileable, false, false, {});
          });
      if (next.empty())
        return failure();
      outputs = next;
      owned.push_back({loops, config.devices[t]});
    }
  } else {
    // Phase 1: partial results of the anchor, tile by tile.
    Value anchorOut = anchor->getResult(0);
    SmallVector<Value> partial{emptyLike(anchorOut)};
    for (int32_t t = 0; t < tiles; ++t) {
      Box loops = ::soap::tileLoopBox(node, config.degrees, t);
      bool identity = startsFromIdentity(t);
      SmallVector<Value> next = emitOnDevice(
          config.devices[t], partial, [&](OpBuilder &b) {
            return emitTile(b, nodeIndex, loops, true, true, identity, {});
          });
      if (next.empty())
        return failure();
      partial = next;
    }
    // Phase 2: combine each output region over the devices that share it.
    FailureOr<ReductionKind> kind = getSplitCombiner(anchor);
    if (failed(kind))
      return anchor->emitError()
             << "cannot split the reduction of '" << anchor->getName()
             << "': its combiner is not a sum, max or min";
    SmallVector<std::pair<Box, SmallVector<int64_t>>, 4> groups;
    SmallVector<size_t> groupOf; // per tile
    for (const std::pair<Box, int32_t> &piece : partialPieces(nodeIndex)) {
      auto it = llvm::find_if(
          groups, [&](auto &g) { return g.first == piece.first; });
      groupOf.push_back(it - groups.begin());
      if (it == groups.end())
        groups.push_back({piece.first, {piece.second}});
      else
        it->second.push_back(piece.second);
    }
    // A group whose devices each read only their chunk of the region
    // afterwards reduce-scatters it (half the traffic), and each device
    // then holds (and runs the epilogue on) its chunk only. Without an
    // epilogue, the partial sums may instead go to the devices that read
    // them, each combining what it reads (combineAtReaders): a group whose
    // readers are split otherwise than it.
    bool epilogue = hasEpilogue(nodeIndex);
    SmallVector<bool> atReaders;
    SmallVector<std::optional<int32_t>> scatterDims;
    for (auto &[region, devices] : groups) {
      SmallVector<int64_t> offsets, sizes;
      for (int32_t d = 0; d < region.rank; ++d) {
        offsets.push_back(region.dims[d].lo);
        sizes.push_back(region.dims[d].size());
      }
      auto kindAttr = ReductionKindAttr::get(builder.getContext(), *kind);
      scatterDims.push_back(devices.size() > 1
                                ? scatterDimension(nodeIndex, region, devices)
                                : std::nullopt);
      FailureOr<bool> combined = combineAtReaders(
          nodeIndex, region, devices, scatterDims.back().has_value(), *kind,
          partial[0], ownedRegions);
      if (failed(combined))
        return failure();
      atReaders.push_back(*combined);
      if (*combined) {
        scatterDims.back() = std::nullopt;
        continue;
      }
      if (scatterDims.back())
        partial[0] = ReduceScatterOp::create(
            builder, loc, partial[0], builder.getDenseI64ArrayAttr(offsets),
            builder.getDenseI64ArrayAttr(sizes), kindAttr,
            builder.getI64IntegerAttr(*scatterDims.back()),
            builder.getDenseI64ArrayAttr(devices));
      else
        partial[0] = AllReduceOp::create(
            builder, loc, partial[0], builder.getDenseI64ArrayAttr(offsets),
            builder.getDenseI64ArrayAttr(sizes), kindAttr,
            builder.getDenseI64ArrayAttr(devices));
    }
    // The loops of chunk i of a scattered group (its first tile's loops,
    // the loop that indexes the scattered dimension cut to the chunk).
    auto chunkLoops = [&](size_t group, int64_t i) {
      auto &[region, devices] = groups[group];
      int32_t d = *scatterDims[group];
      int32_t first =
          static_cast<int32_t>(llvm::find(groupOf, group) - groupOf.begin());
      Box loops = ::soap::tileLoopBox(node, config.degrees, first);
      int32_t loop = *plainLoop(node.outputs.front().dims[d]);
      int64_t chunk = region.dims[d].size() / devices.size();
      loops.dims[loop] = {region.dims[d].lo + i * chunk,
                          region.dims[d].lo + (i + 1) * chunk};
      return loops;
    };
    // Phase 3: the rest of the group (its elementwise epilogue) on every
    // device of each group (on each device's chunk where scattered).
    for (size_t g = 0; g < groups.size(); ++g) {
      if (!scatterDims[g])
        continue;
      for (auto [i, device] : llvm::enumerate(groups[g].second)) {
        Box loops = chunkLoops(g, i);
        owned.push_back({loops, static_cast<int32_t>(device)});
        if (!epilogue)
          continue;
        Value combined = partial[0];
        SmallVector<Value> next =
            emitOnDevice(device, outputs, [&](OpBuilder &b) {
              return emitTile(b, nodeIndex, loops, true, false, false,
                              combined);
            });
        if (next.empty())
          return failure();
        outputs = next;
      }
    }
    if (!epilogue) {
      outputs = partial;
      for (int32_t t = 0; t < tiles; ++t)
        if (!scatterDims[groupOf[t]] && !atReaders[groupOf[t]])
          owned.push_back({::soap::tileLoopBox(node, config.degrees, t),
                           config.devices[t]});
    } else {
      // On every device of each group: the all-reduce left the combined
      // result on all of them, so the consumers read the epilogue's output
      // where they are (as the simulator assumes) instead of from the
      // group's first tile. Once per device and group.
      SmallVector<std::pair<int32_t, size_t>> done;
      for (int32_t t = 0; t < tiles; ++t) {
        Box loops = ::soap::tileLoopBox(node, config.degrees, t);
        std::pair<int32_t, size_t> key(config.devices[t], groupOf[t]);
        if (scatterDims[groupOf[t]] || llvm::is_contained(done, key))
          continue;
        done.push_back(key);
        Value combined = partial[0];
        SmallVector<Value> next = emitOnDevice(
            config.devices[t], outputs, [&](OpBuilder &b) {
              return emitTile(b, nodeIndex, loops, true, false, false,
                              combined);
            });
        if (next.empty())
          return failure();
        outputs = next;
        owned.push_back({loops, config.devices[t]});
      }
    }
  }

  // Each device owns exactly what its tiles wrote.
  for (auto [i, out] : llvm::enumerate(node.outputs)) {
    Value original = extracted.tensorValues[out.tensor];
    versions[original] = outputs[i];
    Layout layout;
    for (auto &[loops, device] : owned)
      for (const Box &box :
           ::soap::exactAccessRegions(out, graph.tensors[out.tensor], loops))
        layout.pieces.push_back({box, device});
    if (i == 0)
      layout.pieces.append(ownedRegions.begin(), ownedRegions.end());
    layouts[original] = layout;
  }
  return success();
}

SmallVector<std::pair<int32_t, Box>>
Partitioner::argumentReaders(int64_t arg) {
  SmallVector<std::pair<int32_t, Box>> readers;
  // Ops outside the op graph (left as they are: say, a transposition of a
  // weight) run on every device whose tiles read what they make (on the
  // others they are dead code) and read all of the argument there.
  BlockArgument value = func.getArgument(arg);
  Block *body = value.getOwner();
  auto outside = [&](Operation *user) {
    return user->getBlock() == body && !isa<func::ReturnOp>(user) &&
           !nodeOpSet.contains(user);
  };
  llvm::SmallDenseSet<int32_t, 8> wholeOn;
  // A slice of the argument that only layers read is held where they read
  // it (q, k and v's parts of GPT-2's fused projection, each split by its
  // columns: every device holds a piece of each).
  std::map<int32_t, std::vector<Box>> sliced;
  auto readOnlyByLayers = [&](Operation *op) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
    if (!slice || slice.getSource() != value || !slice.hasUnitStride() ||
        slice.getType().getRank() != slice.getSourceType().getRank() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticSizes()))
      return false;
    // (Its readers' tiles, emitted already, are in their scf.if.)
    if (llvm::any_of(slice->getUsers(), [&](Operation *user) {
          return outside(user) || isa<func::ReturnOp>(user);
        }))
      return false;
    auto it = reads.find(slice.getResult());
    if (it == reads.end())
      return true;
    for (auto &[device, box] : it->second) {
      Box in = box;
      for (int32_t d = 0; d < in.rank; ++d) {
        in.dims[d].lo += slice.getStaticOffsets()[d];
        in.dims[d].hi += slice.getStaticOffsets()[d];
      }
      sliced[device].push_back(in);
    }
    return true;
  };
  SmallVector<Operation *> work;
  llvm::DenseSet<Operation *> seen;
  for (Operation *user : value.getUsers())
    if (outside(user) && seen.insert(user).second && !readOnlyByLayers(user))
      work.push_back(user);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value result : op->getResults()) {
      auto it = reads.find(result);
      if (it != reads.end())
        for (auto &[device, box] : it->second)
          wholeOn.insert(device);
      for (Operation *user : result.getUsers()) {
        if (isa<func::ReturnOp>(user))
          wholeOn.insert(0); // gathered to rank 0
        else if (outside(user) && seen.insert(user).second)
          work.push_back(user);
      }
    }
  }
  ::soap::Tensor tensor;
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  tensor.shape.assign(shape.begin(), shape.end());
  const std::map<int32_t, Box> &direct = reads[value];
  for (int32_t d = 0; d < numDevices; ++d) {
    if (wholeOn.contains(d)) {
      readers.push_back({d, ::soap::wholeTensor(tensor)});
      continue;
    }
    std::vector<Box> boxes = sliced[d];
    if (auto it = direct.find(d); it != direct.end())
      boxes.push_back(it->second);
    // Disjoint, so that the update writes each element once: overlapping
    // pieces become their hull, and so do abutting ones that fill it (the
    // slices of a data-parallel weight: one update over the whole).
    for (bool merged = true; merged;) {
      merged = false;
      for (size_t i = 0; i < boxes.size() && !merged; ++i)
        for (size_t j = i + 1; j < boxes.size() && !merged; ++j)
          if (!::soap::intersect(boxes[i], boxes[j]).empty() ||
              (::soap::hull(boxes[i], boxes[j]).volume() ==
               boxes[i].volume() + boxes[j].volume())) {
            boxes[i] = ::soap::hull(boxes[i], boxes[j]);
            boxes.erase(boxes.begin() + j);
            merged = true;
          }
    }
    for (const Box &box : boxes)
      readers.push_back({d, box});
  }
  return readers;
}

std::optional<Box> Partitioner::updateLoops(int32_t nodeIndex,
                                            const Box &region) {
  const ::soap::Node &node = extracted.graph.nodes[nodeIndex];
  Operation *anchor = extracted.nodeOps[nodeIndex].front();
  if (node.outputs.size() != 1 || !isa<linalg::LinalgOp>(anchor) ||
      !isa<TilingInterface>(anchor) ||
      static_cast<int32_t>(node.outputs.front().dims.size()) != region.rank)
    return std::nullopt;
  Box loops;
  loops.rank = node.numLoops();
  for (int32_t l = 0; l < loops.rank; ++l)
    loops.dims[l] = {0, node.extents[l]};
  for (int32_t p = 0; p < region.rank; ++p) {
    std::optional<int32_t> loop = plainLoop(node.outputs.front().dims[p]);
    if (!loop)
      return std::nullopt;
    loops.dims[*loop] = region.dims[p];
  }
  return loops;
}

std::optional<std::map<int32_t, SmallVector<Box>>>
Partitioner::futureReads(int32_t tensorIndex) {
  const ::soap::OpGraph &graph = extracted.graph;
  const ::soap::Tensor &tensor = graph.tensors[tensorIndex];
  Value value = extracted.tensorValues[tensorIndex];
  std::map<int32_t, SmallVector<Box>> result;
  auto add = [&](int32_t device, const Box &box) {
    if (!box.empty())
      result[device].push_back(box);
  };
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (nodeOpSet.contains(user))
      continue;
    if (!isa<func::ReturnOp>(user) ||
        func.getResultAttr(use.getOperandNumber(),
                           SOAPDialect::kUpdatesInputAttrName))
      return std::nullopt;
    add(0, ::soap::wholeTensor(tensor)); // gathered to rank 0
  }
  for (auto [n, node] : llvm::enumerate(graph.nodes)) {
    const ::soap::ParallelConfig &config = strategy.configs[n];
    std::optional<int64_t> updated;
    if (!node.outputs.empty())
      updated = getUpdatedArgument(
          extracted.tensorValues[node.outputs.front().tensor]);
    for (const ::soap::Operand &in : node.inputs) {
      if (in.tensor != tensorIndex)
        continue;
      if (!updated) {
        for (int32_t t = 0; t < ::soap::numTiles(config.degrees); ++t)
          add(config.devices[t],
              ::soap::accessRegion(
                  in, tensor, ::soap::tileLoopBox(node, config.degrees, t)));
        continue;
      }
      for (auto &[device, region] : argumentReaders(*updated)) {
        std::optional<Box> loops = updateLoops(n, region);
        if (!loops)
          return std::nullopt;
        add(device, ::soap::accessRegion(in, tensor, *loops));
      }
    }
  }
  return result;
}

std::optional<int32_t>
Partitioner::scatterDimension(int32_t nodeIndex, const Box &region,
                              SmallVectorImpl<int64_t> &devices) {
  const ::soap::Node &node = extracted.graph.nodes[nodeIndex];
  auto anchor = cast<linalg::LinalgOp>(extracted.nodeOps[nodeIndex].front());
  if (node.outputs.size() != 1 || anchor->getNumResults() != 1)
    return std::nullopt;
  const ::soap::Operand &out = node.outputs.front();
  auto anchorType = cast<RankedTensorType>(anchor->getResult(0).getType());
  if (extracted.graph.tensors[out.tensor].shape !=
      std::vector<int64_t>(anchorType.getShape().begin(),
                           anchorType.getShape().end()))
    return std::nullopt;
  auto anchorDims = getDimAccesses(
      anchor.getMatchingIndexingMap(anchor.getDpsInitOperand(0)));
  std::optional<std::map<int32_t, SmallVector<Box>>> reads =
      futureReads(out.tensor);
  if (!reads)
    return std::nullopt;
  std::vector<::soap::ChunkRead> chunkReads;
  for (auto [i, device] : llvm::enumerate(devices)) {
    auto it = reads->find(static_cast<int32_t>(device));
    if (it != reads->end())
      for (const Box &read : it->second)
        chunkReads.push_back({static_cast<int32_t>(i), read});
  }
  // The epilogue runs on a chunk of the anchor's result: the dimension
  // must be the same loop's there.
  uint32_t sameLoop = 0;
  for (int32_t d = 0; d < region.rank; ++d)
    if (plainLoop(anchorDims[d]) &&
        plainLoop(anchorDims[d]) == plainLoop(out.dims[d]))
      sameLoop |= 1u << d;
  std::vector<int32_t> holders;
  int32_t d = ::soap::scatterDimension(out, region,
                                       static_cast<int32_t>(devices.size()),
                                       chunkReads, holders, sameLoop);
  if (d < 0)
    return std::nullopt;
  SmallVector<int64_t> inGroupOrder(devices.begin(), devices.end());
  for (auto [c, member] : llvm::enumerate(holders))
    devices[c] = inGroupOrder[member];
  return d;
}

void Partitioner::setHeldParts(unsigned result,
                               ArrayRef<std::pair<int32_t, Box>> parts) {
  // Needed where a rank's buffer holds elements it did not update that
  // another rank did: a device with pieces apart (stale between them), or
  // devices with different pieces, since a rank's buffer covers whatever it
  // touches (an op that reads the whole argument on every device, such as
  // a concatenation that runs whole, while the update is split): the exit
  // gather then places each rank's pieces, not its whole buffer. Not for
  // the same piece everywhere (data parallelism's replicated update).
  llvm::SmallDenseMap<int32_t, int> perDevice;
  for (auto &[device, box] : parts)
    ++perDevice[device];
  bool apart =
      llvm::any_of(perDevice, [](auto &entry) { return entry.second > 1; });
  bool different = llvm::any_of(parts, [&](auto &part) {
    return !(part.second == parts.front().second);
  });
  if (!apart && !different)
    return;
  SmallVector<int64_t> values;
  for (auto &[device, box] : parts) {
    values.push_back(device);
    for (int32_t d = 0; d < box.rank; ++d)
      values.push_back(box.dims[d].lo);
    for (int32_t d = 0; d < box.rank; ++d)
      values.push_back(box.dims[d].size());
  }
  func.setResultAttr(result, SOAPDialect::kHeldPartsAttrName,
                     builder.getDenseI64ArrayAttr(values));
}

/// Upstream tiling (TilingInterface) sizes an operand's slice from its map
/// at a tile's first and last iterations, which a map that decreases in a
/// loop (a flip, x[-d1 + 3]) gets wrong: the slice of a flipped read came
/// out one element long, even for one tile. The simulator's regions handle
/// such maps; the partitioner refuses them.
static LogicalResult checkIncreasingMaps(linalg::LinalgOp op) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    for (AffineExpr result : op.getMatchingIndexingMap(&operand).getResults()) {
      bool decreasing = false;
      result.walk([&](AffineExpr e) {
        auto mul = dyn_cast<AffineBinaryOpExpr>(e);
        auto c = mul && mul.getKind() == AffineExprKind::Mul
                     ? dyn_cast<AffineConstantExpr>(mul.getRHS())
                     : AffineConstantExpr();
        decreasing |= c && c.getValue() < 0;
      });
      if (!decreasing)
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      result.print(os);
      return op->emitError()
             << "'" << op->getName() << "' reads operand #"
             << operand.getOperandNumber() << " at decreasing indices (" << text
             << "); SOAP tiles ops whose indices grow with their loops";
    }
  }
  return success();
}

LogicalResult Partitioner::partitionUpdate(int32_t nodeIndex, int64_t arg) {
  const ::soap::OpGraph &graph = extracted.graph;
  const ::soap::Node &node = graph.nodes[nodeIndex];
  Operation *anchor = extracted.nodeOps[nodeIndex].front();
  const ::soap::Operand &out = node.outputs.front();
  SmallVector<std::pair<int32_t, Box>> &readers = updatedParts[arg];
  readers = argumentReaders(arg);
  if (readers.empty()) // read nowhere: where its config says
    readers.push_back({strategy.configs[nodeIndex].devices.front(),
                       ::soap::wholeTensor(graph.tensors[out.tensor])});
  Value original = extracted.tensorValues[out.tensor];
  auto type = cast<RankedTensorType>(original.getType());
  SmallVector<Value> outputs{tensor::EmptyOp::create(
      builder, anchor->getLoc(), type.getShape(), type.getElementType())};
  Layout layout;
  // A device's second part is written into its first's result: the op
  // that makes the new value writes into that (its destination, the
  // argument itself where the update is in place).
  Value into;
  if (auto writer = original.getDefiningOp<DestinationStyleOpInterface>())
    into = writer.getTiedOpOperand(cast<OpResult>(original))->get();
  llvm::SmallDenseSet<int32_t, 8> written;
  for (auto &[device, region] : readers) {
    std::optional<Box> loops = updateLoops(nodeIndex, region);
    if (!loops)
      return anchor->emitError()
             << "cannot compute the in-place update of argument #" << arg
             << " where its parts are held: the update must be an "
                "elementwise linalg op whose loops index its result one to "
                "one";
    for (const ::soap::Operand &in : node.inputs)
      ensureValid(extracted.tensorValues[in.tensor],
                  ::soap::accessRegion(in, graph.tensors[in.tensor], *loops),
                  device);
    Box where = *loops;
    bool again = !written.insert(device).second;
    assert((!again || into) && "updateLoops takes linalg ops only");
    Value before = into ? current(into) : Value();
    if (again)
      versions[into] = outputs.front();
    SmallVector<Value> next =
        emitOnDevice(device, outputs, [&](OpBuilder &b) {
          return emitTile(b, nodeIndex, where, true, false, false, {});
        });
    if (again)
      versions[into] = before;
    if (next.empty())
      return failure();
    outputs = next;
    layout.pieces.push_back({region, device});
  }
  versions[original] = outputs.front();
  layouts[original] = layout;
  return success();
}

LogicalResult Partitioner::run() {
  FailureOr<ExtractedOpGraph> graph = extractOpGraph(func);
  if (failed(graph))
    return failure();
  extracted = std::move(*graph);
  for (auto [n, ops] : llvm::enumerate(extracted.nodeOps)) {
    nodeOpSet.insert(ops.begin(), ops.end());
    nodeOfAnchor[ops.front()] = n;
  }
  FailureOr<::soap::Strategy> read = readStrategyFromIR(extracted);
  if (failed(read))
    return failure();
  strategy = std::move(*read);
  for (auto [node, ops, config] : llvm::zip(
           extracted.graph.nodes, extracted.nodeOps, strategy.configs)) {
    std::string invalid = ::soap::validateConfig(node, config, numDevices);
    if (!invalid.empty())
      return ops.front()->emitError()
             << "config of layer '" << node.name << "' on " << numDevices
             << " devices " << invalid;
  }
  std::string untileable = ::soap::validateForTiling(extracted.graph);
  if (!untileable.empty())
    return func.emitError() << untileable;
  // Each layer's anchor (the views of weights a node folds in, such as a
  // training step's flipped filter, run whole and are not tiled).
  for (ArrayRef<Operation *> ops : extracted.nodeOps)
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(ops.front());
        linalgOp && failed(checkIncreasingMaps(linalgOp)))
      return failure();

  // Each node is emitted where its last op stood (all its inputs exist).
  Block &body = func.getBody().front();
  builder.setInsertionPointToStart(&body);
  rank = RankOp::create(builder, func.getLoc(), builder.getIndexType());
  size_t numNodes = extracted.nodeOps.size();
  SmallVector<Operation *> lastOf(numNodes);
  for (auto [n, ops] : llvm::enumerate(extracted.nodeOps)) {
    Operation *last = ops.front();
    for (Operation *op : ops)
      if (last->isBeforeInBlock(op))
        last = op;
    lastOf[n] = last;
  }
  // A layer that writes into an argument in place and whose results only
  // the function returns (a parameter's update) comes after every layer
  // that reads the argument or a view of it (a slice, a reshape), which it
  // would otherwise overwrite first: those may stand later than the
  // update's own ops (a convolution's input gradient reads the filter,
  // transposed, in an op grouped with a later one).
  {
    llvm::DenseMap<Operation *, int32_t> nodeOf;
    for (auto [n, ops] : llvm::enumerate(extracted.nodeOps))
      for (Operation *op : ops)
        nodeOf[op] = static_cast<int32_t>(n);
    Operation *terminator = body.getTerminator();
    for (const auto &[n, layerOps] : llvm::enumerate(extracted.nodeOps)) {
      ArrayRef<Operation *> ops = layerOps;
      // Only a layer whose results only the function returns moves (no
      // later layer reads them before where it goes).
      bool onlyReturned = llvm::all_of(ops, [&](Operation *op) {
        return llvm::all_of(op->getUsers(), [&](Operation *user) {
          Operation *top = body.findAncestorOpInBlock(*user);
          return top == terminator || llvm::is_contained(ops, top);
        });
      });
      if (!onlyReturned)
        continue;
      for (Operation *op : ops) {
        auto dps = dyn_cast<DestinationStyleOpInterface>(op);
        if (!dps)
          continue;
        for (Value init : dps.getDpsInits()) {
          auto arg = dyn_cast<BlockArgument>(init);
          if (!arg || arg.getOwner() != &body)
            continue;
          for (Operation *reader : readersOfViews(arg)) {
            Operation *top = body.findAncestorOpInBlock(*reader);
            auto it = top ? nodeOf.find(top) : nodeOf.end();
            if (it != nodeOf.end() && it->second != static_cast<int32_t>(n) &&
                lastOf[n]->isBeforeInBlock(lastOf[it->second]))
              lastOf[n] = lastOf[it->second];
          }
        }
      }
    }
  }
  // Each op's layers: its own first, then those moved there (an update
  // after the reader it waits for), in node order.
  llvm::DenseMap<Operation *, SmallVector<int32_t, 1>> nodesAt;
  for (size_t n = 0; n < numNodes; ++n)
    nodesAt[lastOf[n]].push_back(static_cast<int32_t>(n));
  auto moved = [&](int32_t n) {
    return !llvm::is_contained(extracted.nodeOps[n], lastOf[n]);
  };
  // The unmoved first, each part in node order (as a stable sort of the
  // ascending nodes would leave them).
  for (auto &entry : nodesAt)
    llvm::sort(entry.second, [&](int32_t a, int32_t b) {
      return std::make_pair(moved(a), a) < std::make_pair(moved(b), b);
    });
  SmallVector<Operation *> order;
  for (Operation &op : body)
    order.push_back(&op);
  for (Operation *op : order) {
    auto it = nodesAt.find(op);
    if (it == nodesAt.end())
      continue;
    builder.setInsertionPointAfter(op);
    for (int32_t n : it->second)
      if (failed(partitionNode(n)))
        return failure();
  }

  // Results are gathered to rank 0; an in-place update of an argument is
  // made valid where the argument's parts are read instead.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  builder.setInsertionPoint(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Value original = operand.get();
    auto type = dyn_cast<RankedTensorType>(original.getType());
    auto updated = func.getResultAttrOfType<IntegerAttr>(
        operand.getOperandNumber(), SOAPDialect::kUpdatesInputAttrName);
    if (type && updated) {
      auto it = updatedParts.find(updated.getInt());
      for (auto &[device, region] : it != updatedParts.end()
                                        ? it->second
                                        : argumentReaders(updated.getInt()))
        ensureValid(original, region, device);
      if (it != updatedParts.end())
        setHeldParts(operand.getOperandNumber(), it->second);
    } else if (type) {
      auto it = llvm::find(extracted.tensorValues, original);
      ::soap::Tensor tensor;
      if (it != extracted.tensorValues.end())
        tensor = extracted.graph.tensors[it - extracted.tensorValues.begin()];
      else
        tensor.shape.assign(type.getShape().begin(), type.getShape().end());
      ensureValid(original, ::soap::wholeTensor(tensor), 0);
    }
    operand.set(current(original));
  }

  // The original layers are dead now.
  SmallVector<Operation *> dead;
  for (auto &ops : extracted.nodeOps)
    dead.append(ops.begin(), ops.end());
  llvm::sort(dead, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  dead.erase(std::unique(dead.begin(), dead.end()), dead.end());
  bool erased = true;
  llvm::DenseSet<Operation *> gone;
  while (erased) {
    erased = false;
    for (Operation *op : dead)
      if (!gone.contains(op) && op->use_empty()) {
        gone.insert(op);
        op->erase();
        erased = true;
      }
  }
  return success();
}

namespace {
struct PartitionPass : public mlir::soap::impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t numDevices = devices;
    if (numDevices == 0) {
      auto machine =
          module->getAttrOfType<MachineAttr>(SOAPDialect::kMachineAttrName);
      if (!machine) {
        module.emitError() << "soap-partition needs the number of devices: "
                              "give devices=N or a 'soap.machine' attribute "
                              "on the module";
        return signalPassFailure();
      }
      numDevices = machine.getNumDevices();
    }
    FailureOr<func::FuncOp> func = findEntryFunction(module, entry);
    if (failed(func))
      return signalPassFailure();
    Partitioner partitioner(*func, static_cast<int32_t>(numDevices));
    if (failed(partitioner.run()))
      return signalPassFailure();
  }
};
} // namespace
