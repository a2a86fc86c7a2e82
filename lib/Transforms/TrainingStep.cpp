//===- TrainingStep.cpp - Forward function -> one training step -----------===//
//
// See Passes.td (soap-training-step). Reverse-mode differentiation of the
// entry function's linalg / tensor ops, emitted as linalg / tensor ops after
// the forward ones, then the SGD update. The backward ops get #soap.configs
// derived from the forward strategy (TrainingConfigs below), so the
// partitioner splits them like any other layer.
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "PoolGradient.h"
#include "Recompute.h"
#include "StridedPlacement.h"

#include "soap/Analysis/IterationSpace.h"
#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Simulator/Region.h"
#include "soap/Simulator/Strategy.h"
#include "soap/Transforms/StrategyAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_TRAININGSTEP
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;
using ::soap::Box;

namespace {

//===----------------------------------------------------------------------===//
// Configs of the backward ops
//===----------------------------------------------------------------------===//

/// The config of an op with loops of `extents` whose loop j is loop
/// `loopMap[j]` (-1: none) of an op partitioned by `from`: each mapped loop
/// keeps its degree where it divides the extent, and a tile runs on the
/// device of the `from` tile it corresponds to (unmapped loops of `from` at
/// coordinate 0). Distinct tiles map to distinct `from` tiles, so the
/// devices stay distinct. A loop j with `reversed[j]` runs backwards over
/// its `from` loop (a flipped filter's window): block c of it is block
/// degree - 1 - c there. `at[l]`, if given: the coordinate of unmapped
/// loop l of `from` instead of 0.
static ParallelConfigAttr mapConfig(ParallelConfigAttr from,
                                    ArrayRef<int64_t> extents,
                                    ArrayRef<int32_t> loopMap,
                                    ArrayRef<bool> reversed = {},
                                    ArrayRef<int64_t> at = {}) {
  ArrayRef<int64_t> fromDegrees = from.getDegrees();
  ::soap::ParallelConfig config;
  config.degrees.assign(extents.size(), 1);
  for (auto [j, l] : llvm::enumerate(loopMap))
    if (l >= 0 && static_cast<size_t>(l) < fromDegrees.size() &&
        extents[j] > 0 && extents[j] % fromDegrees[l] == 0)
      config.degrees[j] = static_cast<int32_t>(fromDegrees[l]);
  std::array<int32_t, ::soap::kMaxRank> coords;
  for (int32_t t = 0; t < config.numTiles(); ++t) {
    ::soap::tileCoordinates(config.degrees, t, coords);
    // The `from` tile: row-major over its degrees.
    int64_t fromTile = 0;
    for (auto [l, degree] : llvm::enumerate(fromDegrees)) {
      int64_t coord = l < at.size() ? at[l] : 0;
      for (auto [j, mapped] : llvm::enumerate(loopMap))
        if (mapped == static_cast<int32_t>(l) && config.degrees[j] > 1)
          coord = j < reversed.size() && reversed[j]
                      ? config.degrees[j] - 1 - coords[j]
                      : coords[j];
      fromTile = fromTile * degree + coord;
    }
    config.devices.push_back(
        static_cast<int32_t>(from.getDeviceOfTile(fromTile)));
  }
  return configToAttr(from.getContext(), config);
}

/// The config of the slice [offsets, offsets + sizes) of a tensor of
/// `shape` that `from` partitions over its dims (a concatenation's, an
/// insert_slice's), for an op over the slice's dims (the slice's part of
/// the gradient): a dim the slice takes whole keeps its split; along one it
/// takes part of, its tiles run on those of the block that holds the part,
/// when one does. Null if `from` is not over `shape`'s dims.
static ParallelConfigAttr sliceConfig(ParallelConfigAttr from,
                                      ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> offsets,
                                      ArrayRef<int64_t> sizes) {
  if (!from || from.getDegrees().size() != shape.size() ||
      offsets.size() != shape.size() || sizes.size() != shape.size() ||
      ShapedType::isDynamicShape(offsets) || ShapedType::isDynamicShape(sizes))
    return {};
  SmallVector<int32_t> loopMap;
  SmallVector<int64_t> at(shape.size(), 0);
  for (auto [d, extent] : llvm::enumerate(shape)) {
    bool whole = offsets[d] == 0 && sizes[d] == extent;
    loopMap.push_back(whole ? static_cast<int32_t>(d) : -1);
    int64_t degree = from.getDegrees()[d];
    if (whole || degree <= 1 || sizes[d] < 1 || extent % degree != 0)
      continue;
    int64_t block = extent / degree;
    if (offsets[d] / block == (offsets[d] + sizes[d] - 1) / block)
      at[d] = offsets[d] / block;
  }
  return mapConfig(from, sizes, loopMap, {}, at);
}

/// The loop whose blocks are blocks of `dim`: the one loop that indexes it
/// with coefficient 1, or the outermost loop of several merged into it (a
/// reshape's collapsed dim, `a * |b| + b`: splitting `a` in d splits the dim
/// in d blocks); -1 otherwise. `extents`: the loops' extents.
static int32_t blockLoop(const ::soap::DimAccess &dim,
                         ArrayRef<int64_t> extents) {
  if (dim.whole || dim.terms.empty())
    return -1;
  if (dim.terms.size() == 1)
    return dim.terms[0].coefficient == 1 ? dim.terms[0].loop : -1;
  if (dim.constant != 0)
    return -1;
  SmallVector<::soap::LoopTerm> terms(dim.terms.begin(), dim.terms.end());
  llvm::sort(terms, [](const ::soap::LoopTerm &x, const ::soap::LoopTerm &y) {
    return x.coefficient > y.coefficient;
  });
  // Mixed radix: each coefficient the next one times the next loop's extent.
  if (terms.back().coefficient != 1)
    return -1;
  for (size_t t = 0; t + 1 < terms.size(); ++t)
    if (terms[t].coefficient !=
        terms[t + 1].coefficient * extents[terms[t + 1].loop])
      return -1;
  return terms.front().loop;
}

/// Loop j of a layer (loop extents `mine`) -> the loop of another layer
/// (`theirs`) over the same blocks of a tensor they both access (`in`:
/// this layer's access, `out`: the other's); -1 where a dim has no such
/// loop in both.
static SmallVector<int32_t> sharedLoops(const ::soap::Operand &in,
                                        ArrayRef<int64_t> mine,
                                        const ::soap::Operand &out,
                                        ArrayRef<int64_t> theirs) {
  SmallVector<int32_t> loopMap(mine.size(), -1);
  for (auto [a, b] : llvm::zip(in.dims, out.dims)) {
    int32_t j = blockLoop(a, mine), l = blockLoop(b, theirs);
    if (j >= 0 && l >= 0 && a.constant == b.constant && loopMap[j] < 0 &&
        !llvm::is_contained(loopMap, l))
      loopMap[j] = l;
  }
  return loopMap;
}

/// A padding read by several linalg ops (a convolution's padded input,
/// read again by its filter gradient) becomes one pad per reader. Each is
/// then grouped with its reader (OpGraphExtraction: isGroupedPadRead), so
/// every tile pads the part it reads,
/// as the simulator models the forward convolution, instead of one device
/// padding the whole tensor and sending the others their windows (which a
/// split the pad's own loops cannot follow, such as a convolution's output
/// width, left on one device).
static void untieSharedPads(func::FuncOp func) {
  SmallVector<tensor::PadOp> pads;
  func.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
  for (tensor::PadOp pad : pads) {
    if (pad->hasOneUse())
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : pad->getUses())
      uses.push_back(&use);
    if (!llvm::all_of(uses, [](OpOperand *use) {
          return isGroupedPadRead(*use);
        }))
      continue;
    pad->removeAttr(SOAPDialect::kConfigAttrName);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      OpBuilder b(use->getOwner());
      use->set(b.clone(*pad)->getResult(0));
    }
  }
}

/// Gives every layer of `func` without a #soap.config one, so that layouts
/// flow along the tensors (same split, same devices: no transfer):
///  1. in order, a layer that reads a tensor a configured layer produces
///     takes that layer's split of it, or the config of an op fused after
///     its anchor over the same loops (a gradient that took its forward
///     op's; of several candidates, the one of most tiles);
///  2. in reverse order, a reshape or pad that one layer alone reads takes
///     that layer's split of what it writes (made where it is read, from
///     data the forward pass may have moved there already); a layer still
///     without one, or whose producers'
///     split leaves it whole on one device, takes the split its configured
///     readers take of what it writes if that has more tiles: the layers on
///     graph inputs only, such as the slices of the cotangent a
///     concatenation's gradient takes, and what they feed, and
///     the reshape of a split reduction's sums (a column-parallel layer's
///     input gradient, reshaped for the data-parallel convolutions before
///     it), so that each device makes its own part rather than one device
///     all of it for the others;
///  3. in order, what is left follows its producers again, else runs on
///     device 0.
///
/// With `groupOps` false every op is a layer of its own: run so on the
/// forward function, it gives the ops a layer's group fuses after its anchor
/// (a bias add, an activation) the anchor's layout, which their gradients
/// then take as they are (the last layer's bias gradient, reading only the
/// cotangent, would otherwise run whole on device 0 and be sent to the
/// others instead of being summed where each device's samples are). Such
/// an op follows only the ops of its group before it, and keeps that
/// layout: the simulator runs it on its layer's tiles (an embedding sum
/// fused after a lookup on one device, with layer norms split by columns
/// reading it, stays on that device instead of being sent there and back).
static LogicalResult fillMissingConfigs(func::FuncOp func,
                                        bool groupOps = true) {
  OpGraphExtractionOptions options;
  options.remarkReplicated = false;
  options.groupOps = groupOps;
  FailureOr<ExtractedOpGraph> extracted = extractOpGraph(func, options);
  if (failed(extracted))
    return failure();
  // Ungrouped: the ops a layer fuses after its anchor, and the layer (of
  // the grouped graph) of every op of such a layer.
  llvm::DenseSet<Operation *> fusedAfterAnchor;
  llvm::DenseMap<Operation *, int32_t> layerOf;
  if (!groupOps) {
    OpGraphExtractionOptions grouped;
    grouped.remarkReplicated = false;
    FailureOr<ExtractedOpGraph> layers = extractOpGraph(func, grouped);
    if (failed(layers))
      return failure();
    for (auto [n, ops] : llvm::enumerate(layers->nodeOps)) {
      // Not after a split reduction: its sums are combined (reduce-scattered,
      // or summed where they are read) before the epilogue runs, which then
      // runs where they end up, not on the anchor's tiles.
      auto config = ops.front()->getAttrOfType<ParallelConfigAttr>(
          SOAPDialect::kConfigAttrName);
      const ::soap::Node &layer = layers->graph.nodes[n];
      if (!config || config.getDegrees().size() != layer.loopKinds.size() ||
          ::soap::splitsReduction(layer, config.getDegrees()))
        continue;
      for (Operation *op : ops) {
        layerOf[op] = static_cast<int32_t>(n);
        if (ops.front()->isBeforeInBlock(op))
          fusedAfterAnchor.insert(op);
      }
    }
  }
  const ::soap::OpGraph &graph = extracted->graph;
  size_t numNodes = graph.nodes.size();
  SmallVector<ParallelConfigAttr> configs(numNodes);
  SmallVector<bool> missing(numNodes, false);
  // Readers of each tensor: (node, input).
  SmallVector<SmallVector<std::pair<size_t, size_t>>> readers(
      graph.tensors.size());
  for (auto [r, node] : llvm::enumerate(graph.nodes))
    for (auto [k, in] : llvm::enumerate(node.inputs))
      readers[in.tensor].push_back({r, k});

  // The candidate of most tiles (first on ties).
  auto consider = [](ParallelConfigAttr &best, ParallelConfigAttr candidate) {
    if (candidate && (!best || candidate.getNumTiles() > best.getNumTiles()))
      best = candidate;
  };
  auto fromProducers = [&](size_t i) {
    const ::soap::Node &node = graph.nodes[i];
    Operation *op = extracted->nodeOps[i].front();
    bool fused = fusedAfterAnchor.contains(op);
    ParallelConfigAttr best;
    for (const ::soap::Operand &in : node.inputs) {
      int32_t producer = graph.tensors[in.tensor].producer;
      if (producer < 0 || !configs[producer])
        continue;
      if (fused && layerOf.lookup(extracted->nodeOps[producer].front()) !=
                       layerOf.lookup(op))
        continue;
      for (const ::soap::Operand &out : graph.nodes[producer].outputs)
        if (out.tensor == in.tensor)
          consider(best, mapConfig(configs[producer], node.extents,
                                   sharedLoops(in, node.extents, out,
                                               graph.nodes[producer].extents)));
    }
    return best;
  };
  auto fromReaders = [&](size_t i) {
    const ::soap::Node &node = graph.nodes[i];
    ParallelConfigAttr best;
    for (const ::soap::Operand &out : node.outputs)
      for (auto [r, k] : readers[out.tensor])
        if (r != i && configs[r])
          consider(best, mapConfig(configs[r], node.extents,
                                   sharedLoops(out, node.extents,
                                               graph.nodes[r].inputs[k],
                                               graph.nodes[r].extents)));
    return best;
  };
  // The config of an op fused into the layer after its anchor (a gradient
  // that took its forward op's) over the same loops: its loops are the
  // layer's when it writes its result in loop order over the layer's
  // extents and the layer writes its output with dim p = loop p (a wrong
  // guess would only cost transfers: any config computes the same).
  auto fromFusedOps = [&](size_t i) {
    const ::soap::Node &node = graph.nodes[i];
    ParallelConfigAttr best;
    if (node.outputs.empty())
      return best;
    for (auto [p, dim] : llvm::enumerate(node.outputs.front().dims))
      if (dim.whole || dim.constant != 0 || dim.terms.size() != 1 ||
          dim.terms[0].coefficient != 1 ||
          dim.terms[0].loop != static_cast<int32_t>(p))
        return best;
    for (Operation *member : llvm::drop_begin(extracted->nodeOps[i])) {
      auto fused = dyn_cast<linalg::LinalgOp>(member);
      auto config = member->getAttrOfType<ParallelConfigAttr>(
          SOAPDialect::kConfigAttrName);
      if (fused && config && fused.getNumDpsInits() == 1 &&
          config.getDegrees().size() == node.extents.size() &&
          fused.getMatchingIndexingMap(fused.getDpsInitOperand(0))
              .isIdentity() &&
          ArrayRef<int64_t>(fused.getStaticLoopRanges()) ==
              ArrayRef<int64_t>(node.extents))
        consider(best, config);
    }
    return best;
  };

  for (auto [i, node] : llvm::enumerate(graph.nodes)) {
    if (node.extents.empty())
      continue;
    auto attr =
        extracted->nodeOps[i].front()->getAttrOfType<ParallelConfigAttr>(
            SOAPDialect::kConfigAttrName);
    if (attr && attr.getDegrees().size() == node.extents.size()) {
      configs[i] = attr;
      continue;
    }
    missing[i] = true;
    configs[i] = fromProducers(i);
    consider(configs[i], fromFusedOps(i));
  }
  // A reshape or pad only its one reader reads (the blocked view of a
  // max pooling's input its gradient reads, the padded cotangent a
  // convolution's input gradient reads) is made where that reader runs:
  // from data that may be there already (the forward pass moved the
  // pooling's input to the pooling's devices), and unpadded, where the
  // simulator counts it, instead of moved again in its new form.
  auto isMovedForOneReader = [&](size_t i) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::PadOp>(
            extracted->nodeOps[i].front()))
      return false;
    llvm::SmallSetVector<size_t, 2> readerNodes;
    for (const ::soap::Operand &out : graph.nodes[i].outputs)
      for (auto [r, k] : readers[out.tensor])
        readerNodes.insert(r);
    return readerNodes.size() == 1 && configs[readerNodes.front()];
  };
  // Elements that node i under `config` moves: what its tiles read that
  // their devices' producer tiles did not write, and what its configured
  // readers' tiles read of its outputs that no tile of it wrote on their
  // device. None where a producer splits a reduction (where its sums end
  // up is decided later).
  auto tilesOf = [&](size_t n, ParallelConfigAttr config) {
    std::vector<int32_t> degrees(config.getDegrees().begin(),
                                 config.getDegrees().end());
    SmallVector<std::pair<Box, int32_t>> tiles;
    for (int64_t t = 0; t < config.getNumTiles(); ++t)
      tiles.push_back({::soap::tileLoopBox(graph.nodes[n], degrees, t),
                       static_cast<int32_t>(config.getDeviceOfTile(t))});
    return tiles;
  };
  auto splitsReduction = [&](size_t n) {
    return ::soap::splitsReduction(graph.nodes[n], configs[n].getDegrees());
  };
  // Of `reads` (boxes of tensor t on devices), the elements not written by
  // a tile of node w (under `tiles`) on the same device.
  auto unheldElements = [&](int32_t t, ArrayRef<std::pair<Box, int32_t>> reads,
                            size_t w, ArrayRef<std::pair<Box, int32_t>> tiles) {
    int64_t absent = 0;
    for (auto &[region, device] : reads) {
      int64_t held = 0;
      for (auto &[loops, writer] : tiles)
        if (writer == device)
          for (const ::soap::Operand &out : graph.nodes[w].outputs)
            if (out.tensor == t)
              held += ::soap::intersect(
                          region,
                          ::soap::accessRegion(out, graph.tensors[t], loops))
                          .volume();
      absent += std::max<int64_t>(0, region.volume() - held);
    }
    return absent;
  };
  auto movedElements =
      [&](size_t i, ParallelConfigAttr config) -> std::optional<int64_t> {
    const ::soap::Node &node = graph.nodes[i];
    SmallVector<std::pair<Box, int32_t>> mine = tilesOf(i, config);
    int64_t moved = 0;
    for (const ::soap::Operand &in : node.inputs) {
      int32_t producer = graph.tensors[in.tensor].producer;
      if (producer < 0 || !configs[producer])
        continue;
      if (splitsReduction(producer))
        return std::nullopt;
      SmallVector<std::pair<Box, int32_t>> reads;
      for (auto &[loops, device] : mine)
        reads.push_back(
            {::soap::accessRegion(in, graph.tensors[in.tensor], loops),
             device});
      moved += unheldElements(in.tensor, reads, producer,
                              tilesOf(producer, configs[producer]));
    }
    for (const ::soap::Operand &out : node.outputs)
      for (auto [r, k] : readers[out.tensor]) {
        if (r == i || !configs[r])
          continue;
        SmallVector<std::pair<Box, int32_t>> reads;
        for (auto &[loops, device] : tilesOf(r, configs[r]))
          reads.push_back(
              {::soap::accessRegion(graph.nodes[r].inputs[k],
                                    graph.tensors[out.tensor], loops),
               device});
        moved += unheldElements(out.tensor, reads, i, mine);
      }
    return moved;
  };
  // An op fused after its layer's anchor that follows it keeps that.
  auto followsGroup = [&](size_t i) {
    return configs[i] &&
           fusedAfterAnchor.contains(extracted->nodeOps[i].front());
  };
  for (size_t i = numNodes; i-- > 0;) {
    if (followsGroup(i))
      continue;
    if (missing[i] && isMovedForOneReader(i)) {
      if (ParallelConfigAttr config = fromReaders(i))
        configs[i] = config;
      continue;
    }
    if (missing[i] && (!configs[i] || configs[i].getNumTiles() == 1)) {
      ParallelConfigAttr producers = configs[i];
      consider(configs[i], fromReaders(i));
      bool reshape = isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
          extracted->nodeOps[i].front());
      if (reshape && producers && configs[i] != producers) {
        std::optional<int64_t> stay = movedElements(i, producers);
        std::optional<int64_t> follow = movedElements(i, configs[i]);
        if (stay && follow && *stay < *follow)
          configs[i] = producers;
      }
    }
  }
  for (size_t i = 0; i < numNodes; ++i) {
    if (!missing[i])
      continue;
    if (!configs[i])
      configs[i] = fromProducers(i);
    if (!configs[i]) {
      ::soap::ParallelConfig single;
      single.degrees.assign(graph.nodes[i].extents.size(), 1);
      single.devices = {0};
      configs[i] = configToAttr(func.getContext(), single);
    }
    extracted->nodeOps[i].front()->setAttr(SOAPDialect::kConfigAttrName,
                                           configs[i]);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Differentiation
//===----------------------------------------------------------------------===//

/// Whether `value` (in a linalg body) is computed from the body's block
/// argument `arg` (only ops of the body are followed).
static bool dependsOn(Value value, BlockArgument arg) {
  SmallVector<Value> work = {value};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == arg)
      return true;
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == arg.getOwner())
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// How a convolution's input gradient is built. With Y = conv(X, W) of
/// strides S and dilations D, dX is the stride-1 convolution of the same
/// kind and dilations over dY spread by S and padded by the window's span
/// less one on each side (dilateAndPad), with the filter flipped in its
/// window and its input and output channel dims swapped (the flipped
/// filter's dim d is W's dim `filterDims[d]`, window dims reversed). Its
/// loops follow the forward loops `loopMap`.
struct ConvInputGradient {
  int64_t spatial;                 ///< X's and Y's first spatial dim
  SmallVector<int64_t> filterDims; ///< flipped dim -> W dim
  int64_t kernel;                  ///< W's first window dim
  SmallVector<int32_t> loopMap;    ///< dX conv loop -> forward loop
  int64_t numSpatial = 2;          ///< 1-D, 2-D or 3-D (dims consecutive)
};

/// The forms of the convolutions the training step differentiates (loops
/// as upstream's named ops order them), null for others:
///   conv_2d_nchw_fchw      (n, f, oh, ow, c, kh, kw), W [F, C, KH, KW]
///   conv_2d_nhwc_hwcf      (n, oh, ow, f, kh, kw, c), W [KH, KW, C, F]
///   conv_2d_nhwc_fhwc      (n, oh, ow, f, kh, kw, c), W [F, KH, KW, C]
///   depthwise_conv_2d_nchw_chw (n, oh, ow, c, kh, kw), W [C, KH, KW]
///   depthwise_conv_2d_nhwc_hwc (n, oh, ow, c, kh, kw), W [KH, KW, C]
///   conv_2d_ngchw_gfchw    (n, g, f, oh, ow, c, kh, kw), W [G, F, C, KH, KW]
///   conv_1d_ncw_fcw        (n, f, ow, c, kw), W [F, C, KW]
///   conv_1d_nwc_wcf        (n, ow, f, kw, c), W [KW, C, F]
///   conv_3d_ncdhw_fcdhw    (n, f, od, oh, ow, c, kd, kh, kw),
///                          W [F, C, KD, KH, KW]
///   conv_3d_ndhwc_dhwcf    (n, od, oh, ow, f, kd, kh, kw, c),
///                          W [KD, KH, KW, C, F]
static std::optional<ConvInputGradient> convInputGradient(Operation *op) {
  if (isa<linalg::Conv2DNchwFchwOp>(op))
    return ConvInputGradient{2, {1, 0, 2, 3}, 2, {0, 4, 2, 3, 1, 5, 6}};
  if (isa<linalg::Conv2DNhwcHwcfOp>(op))
    return ConvInputGradient{1, {0, 1, 3, 2}, 0, {0, 1, 2, 6, 4, 5, 3}};
  if (isa<linalg::Conv2DNhwcFhwcOp>(op))
    return ConvInputGradient{1, {3, 1, 2, 0}, 1, {0, 1, 2, 6, 4, 5, 3}};
  if (isa<linalg::DepthwiseConv2DNchwChwOp>(op))
    return ConvInputGradient{2, {0, 1, 2}, 1, {0, 1, 2, 3, 4, 5}};
  if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(op))
    return ConvInputGradient{1, {0, 1, 2}, 0, {0, 1, 2, 3, 4, 5}};
  if (isa<linalg::Conv2DNgchwGfchwOp>(op))
    return ConvInputGradient{3, {0, 2, 1, 3, 4}, 3, {0, 1, 5, 3, 4, 2, 6, 7}};
  if (isa<linalg::Conv1DNcwFcwOp>(op))
    return ConvInputGradient{2, {1, 0, 2}, 2, {0, 3, 2, 1, 4}, 1};
  if (isa<linalg::Conv1DNwcWcfOp>(op))
    return ConvInputGradient{1, {0, 2, 1}, 0, {0, 1, 4, 3, 2}, 1};
  if (isa<linalg::Conv3DNcdhwFcdhwOp>(op))
    return ConvInputGradient{
        2, {1, 0, 2, 3, 4}, 2, {0, 5, 2, 3, 4, 1, 6, 7, 8}, 3};
  if (isa<linalg::Conv3DNdhwcDhwcfOp>(op))
    return ConvInputGradient{
        1, {0, 1, 2, 4, 3}, 0, {0, 1, 2, 3, 8, 5, 6, 7, 4}, 3};
  return std::nullopt;
}

class TrainingStepBuilder {
public:
  TrainingStepBuilder(func::FuncOp func, bool returnGradients,
                      double learningRate, bool inPlace)
      : func(func), returnGradients(returnGradients),
        learningRate(learningRate), inPlace(inPlace), b(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult differentiate(Operation *op);
  /// Names the ops differentiate(forward) made, from `last` (exclusive) to
  /// `end`, after `forward`'s layer: "<name>.grad", "<name>.grad.1", ...
  /// (soap.name: the partitioned program and the runtime's errors from its
  /// library calls then say which layer's backward an op belongs to).
  void nameGradientOps(Operation *forward, Operation *last, Operation *end);
  /// nameGradientOps: the names given so far per "<name>.grad".
  llvm::StringMap<unsigned> gradientNames;
  /// `grads`: the gradient of each result (null: none).
  LogicalResult differentiateLinalg(linalg::LinalgOp op,
                                    ArrayRef<Value> grads);
  /// d(result)/d(operand) over the op's own loops (see Passes.td).
  LogicalResult differentiateOperand(linalg::LinalgOp op, OpOperand *operand,
                                     ArrayRef<Value> grads);
  /// dX of a convolution (see ConvInputGradient above): the stride-1
  /// convolution of the same kind over dY spread and padded, with the
  /// filter flipped in its window and its channel roles swapped.
  template <typename ConvOp>
  LogicalResult differentiateConvInput(ConvOp op, Value grad,
                                       const ConvInputGradient &form);
  LogicalResult differentiatePoolInput(linalg::LinalgOp op, bool isMax,
                                       Value grad);
  /// The scalar adjoint of `target` in a cloned body, given `seed` as the
  /// adjoint of `root`. Null when `root` does not depend on `target`.
  FailureOr<Value> scalarAdjoint(OpBuilder &nb, ArrayRef<Operation *> ops,
                                 ArrayRef<std::pair<Value, Value>> seeds,
                                 Value target, Operation *forwardOp);

  /// `grad` (its spatial dims `spatial`, `spatial` + 1, ..., one per
  /// stride) with stride-1 zeros between its elements along each, K-1 - low
  /// zeros before and zeros up to `size` + K-1 after: the input of the
  /// stride-1 correlation that gives a strided convolution's input gradient
  /// (of an input padded by `low` before, the gradient of the unpadded
  /// input, `size` its extent).
  Value dilateAndPad(Location loc, Value grad, ArrayRef<int64_t> strides,
                     ArrayRef<int64_t> window, ArrayRef<int64_t> low,
                     ArrayRef<int64_t> size, int64_t spatial);

  /// One term of a value's gradient: the whole of it, or (`constantAt` not
  /// empty) the part at constant indices of some dims (`constantAt`: the
  /// index, or -1 for a dim the term keeps), which is zero elsewhere.
  struct Contribution {
    Contribution(Value value, ArrayRef<int64_t> at) : value(value) {
      if (llvm::any_of(at, [](int64_t i) { return i >= 0; }))
        constantAt.assign(at.begin(), at.end());
    }
    Value value;
    SmallVector<int64_t> constantAt;
  };
  void contribute(Value value, Value grad, ArrayRef<int64_t> constantAt = {}) {
    if (active.contains(value))
      contributions[value].emplace_back(grad, constantAt);
  }
  /// The terms of `value`'s gradient: its contributions so far, then its
  /// gradient chains (which end here).
  SmallVector<Contribution, 2> &takeContributions(Value value);
  /// The sum of the contributions to `value`'s gradient; null if none.
  Value gradient(Value value);
  /// One linalg.generic over `type` that adds `parts` up in order (a part
  /// at constant indices read through the dims it keeps and added only
  /// there: no zeros to place it in, no op of its own) and yields
  /// `finish(sum, leading block arguments, init's block argument)`.
  /// `leading`: inputs read with the identity map before the parts.
  Value sumContributions(
      Location loc, RankedTensorType type, ArrayRef<Contribution> parts,
      ValueRange leading, Value init,
      function_ref<Value(OpBuilder &, Location, Value, ValueRange, Value)>
          finish);
  Value zeros(Location loc, Type type);
  Value floatConstant(OpBuilder &nb, Location loc, Type type, double v) {
    return arith::ConstantOp::create(nb, loc, nb.getFloatAttr(type, v));
  }
  /// Gives `op` the forward op's config mapped through `loopMap` (for each
  /// of `op`'s loops, the forward loop it follows; -1: none).
  void mapForwardConfig(Operation *op, Operation *forward,
                        ArrayRef<int32_t> loopMap,
                        ArrayRef<bool> reversed = {}) {
    auto from = forward->getAttrOfType<ParallelConfigAttr>(
        SOAPDialect::kConfigAttrName);
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!from || !linalgOp || linalgOp.getNumLoops() != loopMap.size())
      return;
    SmallVector<int64_t> extents = linalgOp.getStaticLoopRanges();
    op->setAttr(SOAPDialect::kConfigAttrName,
                mapConfig(from, extents, loopMap, reversed));
  }

  func::FuncOp func;
  bool returnGradients;
  double learningRate;
  bool inPlace;
  OpBuilder b;
  llvm::DenseSet<Value> active;
  /// The operand-gradient ops, to drop the inputs they do not read.
  SmallVector<Operation *> created;
  llvm::DenseMap<Value, SmallVector<Contribution, 2>> contributions;
  /// The sum so far of a value's gradient over its readers whose gradient
  /// reduces, per set of constant indices it is read at
  /// (differentiateOperand).
  struct GradientChain {
    SmallVector<int64_t> constantAt;
    Value sum;
    /// A sum in f32 of a bf16 or f16 value's gradient (differentiateOperand):
    /// the last reader that added to it and, for each dim of the sum, the
    /// reader's loop it is, for the config of its rounding.
    Operation *lastReader = nullptr;
    SmallVector<int32_t> loopMap;
  };
  /// `sum` (f32) rounded to `type`'s elements, with `reader`'s config mapped
  /// through `loopMap` (for each dim, the reader's loop).
  Value roundSum(Location loc, Value sum, RankedTensorType type,
                 Operation *reader, ArrayRef<int32_t> loopMap);
  llvm::DenseMap<Value, SmallVector<GradientChain>> reductionChains;
};

Value TrainingStepBuilder::roundSum(Location loc, Value sum,
                                    RankedTensorType type, Operation *reader,
                                    ArrayRef<int32_t> loopMap) {
  Type element = type.getElementType();
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  SmallVector<AffineMap> identity(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  auto round = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{sum}, ValueRange{empty}, identity,
      parallel, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value rounded = arith::TruncFOp::create(nb, l, element, args[0]);
        linalg::YieldOp::create(nb, l, rounded);
      });
  if (reader)
    mapForwardConfig(round, reader, loopMap);
  return round.getResult(0);
}

Value TrainingStepBuilder::zeros(Location loc, Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  Value empty = tensor::EmptyOp::create(b, loc, tensorType.getShape(),
                                        tensorType.getElementType());
  Value zero = floatConstant(b, loc, tensorType.getElementType(), 0.0);
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

SmallVector<TrainingStepBuilder::Contribution, 2> &
TrainingStepBuilder::takeContributions(Value value) {
  SmallVector<Contribution, 2> &parts = contributions[value];
  if (auto chains = reductionChains.find(value);
      chains != reductionChains.end()) {
    for (GradientChain &chain : chains->second) {
      Value sum = chain.sum;
      auto sumType = cast<RankedTensorType>(sum.getType());
      Type element = getElementTypeOrSelf(value.getType());
      if (sumType.getElementType() != element)
        sum = roundSum(value.getLoc(), sum,
                       RankedTensorType::get(sumType.getShape(), element),
                       chain.lastReader, chain.loopMap);
      parts.emplace_back(sum, chain.constantAt);
    }
    reductionChains.erase(chains);
  }
  return parts;
}

Value TrainingStepBuilder::sumContributions(
    Location loc, RankedTensorType type, ArrayRef<Contribution> parts,
    ValueRange leading, Value init,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange, Value)>
        finish) {
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(leading.size(), id);
  SmallVector<Value> inputs(leading.begin(), leading.end());
  for (const Contribution &part : parts) {
    inputs.push_back(part.value);
    if (part.constantAt.empty()) {
      maps.push_back(id);
      continue;
    }
    SmallVector<AffineExpr> kept;
    for (auto [d, at] : llvm::enumerate(part.constantAt))
      if (at < 0)
        kept.push_back(b.getAffineDimExpr(d));
    maps.push_back(AffineMap::get(rank, 0, kept, b.getContext()));
  }
  maps.push_back(id);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc;
        for (auto [k, part] : llvm::enumerate(parts)) {
          Value term = args[leading.size() + k];
          if (!part.constantAt.empty()) {
            // Zero off its indices: exactly what adding the part placed in
            // zeros gave.
            Value here;
            for (auto [d, at] : llvm::enumerate(part.constantAt)) {
              if (at < 0)
                continue;
              Value eq = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::eq,
                  linalg::IndexOp::create(nb, l, d),
                  arith::ConstantIndexOp::create(nb, l, at));
              here = here ? arith::AndIOp::create(nb, l, here, eq).getResult()
                          : eq;
            }
            term = arith::SelectOp::create(
                nb, l, here, term,
                floatConstant(nb, l, type.getElementType(), 0.0));
          }
          acc = acc ? arith::AddFOp::create(nb, l, acc, term).getResult()
                    : term;
        }
        linalg::YieldOp::create(
            nb, l,
            finish(nb, l, acc, args.take_front(leading.size()), args.back()));
      });
  return generic.getResult(0);
}

Value TrainingStepBuilder::gradient(Value value) {
  SmallVector<Contribution, 2> &parts = takeContributions(value);
  if (parts.empty())
    return nullptr;
  if (parts.size() == 1 && parts.front().constantAt.empty())
    return parts.front().value;
  auto type = cast<RankedTensorType>(value.getType());
  Value empty = tensor::EmptyOp::create(b, value.getLoc(), type.getShape(),
                                        type.getElementType());
  Value sum = sumContributions(
      value.getLoc(), type, parts, {}, empty,
      [](OpBuilder &, Location, Value sum, ValueRange, Value) { return sum; });
  // Summed where the op that wrote `value` ran, which reads the sum (its
  // backward ops take its layout), as the simulator sends each reader's
  // part there: not where one of the parts was made (an RNN layer's
  // output, read by its next step and by the next layer on other devices).
  if (auto producer = value.getDefiningOp<linalg::LinalgOp>()) {
    AffineMap written =
        producer.getIndexingMapMatchingResult(cast<OpResult>(value));
    SmallVector<int32_t> loopMap;
    for (AffineExpr e : written.getResults())
      loopMap.push_back(
          isa<AffineDimExpr>(e)
              ? static_cast<int32_t>(cast<AffineDimExpr>(e).getPosition())
              : -1);
    mapForwardConfig(sum.getDefiningOp(), producer, loopMap);
  }
  parts.assign({Contribution(sum, {})});
  return sum;
}

FailureOr<Value> TrainingStepBuilder::scalarAdjoint(
    OpBuilder &nb, ArrayRef<Operation *> ops,
    ArrayRef<std::pair<Value, Value>> seeds, Value target,
    Operation *forwardOp) {
  llvm::DenseMap<Value, Value> adjoint;
  auto add = [&](Value v, Value delta) {
    if (!isa<FloatType>(v.getType()))
      return;
    Value &slot = adjoint[v];
    slot = slot ? arith::AddFOp::create(nb, delta.getLoc(), slot, delta)
                      .getResult()
                : delta;
  };
  for (auto [root, seed] : seeds)
    add(root, seed);
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1) {
      if (llvm::any_of(op->getResults(),
                       [&](Value r) { return adjoint.count(r); }))
        return forwardOp->emitError()
               << "training step: cannot differentiate '" << op->getName()
               << "' (" << op->getNumResults() << " results) in the body of '"
               << forwardOp->getName() << "'";
      continue;
    }
    Value a = adjoint.lookup(op->getResult(0));
    if (!a)
      continue;
    Location loc = op->getLoc();
    Value r = op->getResult(0);
    auto mul = [&](Value x, Value y) {
      return arith::MulFOp::create(nb, loc, x, y).getResult();
    };
    auto div = [&](Value x, Value y) {
      return arith::DivFOp::create(nb, loc, x, y).getResult();
    };
    auto neg = [&](Value x) { return arith::NegFOp::create(nb, loc, x).getResult(); };
    auto select = [&](arith::CmpFPredicate pred, Value x, Value y, Value t,
                      Value f) {
      Value c = arith::CmpFOp::create(nb, loc, pred, x, y);
      return arith::SelectOp::create(nb, loc, c, t, f).getResult();
    };
    Value zero = floatConstant(nb, loc, a.getType(), 0.0);
    if (isa<arith::AddFOp>(op)) {
      add(op->getOperand(0), a);
      add(op->getOperand(1), a);
    } else if (isa<arith::SubFOp>(op)) {
      add(op->getOperand(0), a);
      add(op->getOperand(1), neg(a));
    } else if (isa<arith::MulFOp>(op)) {
      add(op->getOperand(0), mul(a, op->getOperand(1)));
      add(op->getOperand(1), mul(a, op->getOperand(0)));
    } else if (isa<arith::DivFOp>(op)) {
      Value y = op->getOperand(1);
      add(op->getOperand(0), div(a, y));
      add(y, neg(div(mul(a, r), y)));
    } else if (isa<arith::NegFOp>(op)) {
      add(op->getOperand(0), neg(a));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
      Value x = op->getOperand(0), y = op->getOperand(1);
      add(x, select(arith::CmpFPredicate::OGE, x, y, a, zero));
      add(y, select(arith::CmpFPredicate::OGE, x, y, zero, a));
    } else if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) {
      Value x = op->getOperand(0), y = op->getOperand(1);
      add(x, select(arith::CmpFPredicate::OLE, x, y, a, zero));
      add(y, select(arith::CmpFPredicate::OLE, x, y, zero, a));
    } else if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      add(sel.getTrueValue(),
          arith::SelectOp::create(nb, loc, sel.getCondition(), a, zero));
      add(sel.getFalseValue(),
          arith::SelectOp::create(nb, loc, sel.getCondition(), zero, a));
    } else if (isa<math::ExpOp>(op)) {
      add(op->getOperand(0), mul(a, r));
    } else if (isa<math::LogOp>(op)) {
      add(op->getOperand(0), div(a, op->getOperand(0)));
    } else if (isa<math::TanhOp>(op)) {
      Value one = floatConstant(nb, loc, a.getType(), 1.0);
      Value d = arith::SubFOp::create(nb, loc, one, mul(r, r));
      add(op->getOperand(0), mul(a, d));
    } else if (isa<math::ErfOp>(op)) {
      // d erf(x) = 2 / sqrt(pi) * exp(-x^2) (GELU).
      Value x = op->getOperand(0);
      Value twoOverSqrtPi =
          floatConstant(nb, loc, a.getType(), 1.1283791670955126);
      Value e = math::ExpOp::create(nb, loc, neg(mul(x, x)));
      add(x, mul(a, mul(twoOverSqrtPi, e)));
    } else if (isa<math::PowFOp>(op)) {
      // d x^y = y x^(y-1) dx + x^y log(x) dy.
      Value x = op->getOperand(0), y = op->getOperand(1);
      Value one = floatConstant(nb, loc, a.getType(), 1.0);
      Value lower = math::PowFOp::create(
          nb, loc, x, arith::SubFOp::create(nb, loc, y, one));
      add(x, mul(a, mul(y, lower)));
      // Unused (and folded away) when y is a constant exponent.
      add(y, mul(a, mul(r, math::LogOp::create(nb, loc, x))));
    } else if (isa<math::SqrtOp>(op)) {
      Value half = floatConstant(nb, loc, a.getType(), 0.5);
      add(op->getOperand(0), div(mul(a, half), r));
    } else if (isa<math::RsqrtOp>(op)) {
      // d(x^-1/2) = -1/2 x^-3/2 = -1/2 r^3.
      Value minusHalf = floatConstant(nb, loc, a.getType(), -0.5);
      add(op->getOperand(0), mul(a, mul(minusHalf, mul(r, mul(r, r)))));
    } else if (isa<math::AbsFOp>(op)) {
      Value x = op->getOperand(0);
      add(x, select(arith::CmpFPredicate::OGE, x, zero, a, neg(a)));
    } else if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      add(ext.getIn(),
          arith::TruncFOp::create(nb, loc, ext.getIn().getType(), a));
    } else if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
      add(trunc.getIn(),
          arith::ExtFOp::create(nb, loc, trunc.getIn().getType(), a));
    } else if (isa<arith::ConstantOp, linalg::IndexOp>(op) ||
               !isa<FloatType>(r.getType())) {
      continue;
    } else {
      return forwardOp->emitError()
             << "training step: cannot differentiate '" << op->getName()
             << "' in the body of '" << forwardOp->getName() << "'";
    }
  }
  return adjoint.lookup(target);
}

LogicalResult TrainingStepBuilder::differentiateOperand(
    linalg::LinalgOp op, OpOperand *operand, ArrayRef<Value> grads) {
  Block &body = *op.getBlock();
  Value y = body.getTerminator()->getOperand(0);
  BlockArgument acc = body.getArgument(op.getNumDpsInputs());
  bool hasReduction = op.getNumReductionLoops() > 0;
  if (hasReduction && op.getNumDpsInits() != 1)
    return op->emitError() << "training step: cannot differentiate '"
                           << op->getName() << "': a reduction with "
                           << op.getNumDpsInits() << " outputs";
  Value root = y;
  // Max and min reductions route the gradient to their extrema.
  bool isMax = false;
  // A gather written as a reduction (an embedding: `select(token == v,
  // table[v], acc)` over the vocabulary): the selected element gets the
  // gradient. Exact when one element per reduction is selected, as a
  // one-hot comparison with the loop index selects.
  Value selectedIf;
  Operation *combiner = nullptr;
  if (hasReduction) {
    Operation *def = y.getDefiningOp();
    if (FailureOr<ReductionKind> kind = getReductionCombiner(op);
        succeeded(kind) && isa<FloatType>(y.getType())) {
      root = def->getOperand(0) == acc ? def->getOperand(1) : def->getOperand(0);
      isMax = *kind != ReductionKind::Sum;
      combiner = def;
    } else if (auto sel = dyn_cast_or_null<arith::SelectOp>(def);
               sel && sel.getFalseValue() == acc &&
               !dependsOn(sel.getCondition(), acc)) {
      root = sel.getTrueValue();
      selectedIf = sel.getCondition();
      combiner = def;
    }
    if (!combiner || dependsOn(root, acc))
      return op->emitError()
             << "training step: cannot differentiate '" << op->getName()
             << "': its reduction is not a sum, max or one-hot selection of "
                "its inputs";
  }
  // The values whose adjoints are given: each yielded value with a
  // gradient (a reduction: the combined value).
  SmallVector<std::pair<Value, unsigned>> roots; // value, result
  if (hasReduction) {
    if (grads[0])
      roots.push_back({root, 0});
  } else {
    for (auto [r, g] : llvm::enumerate(grads))
      if (g)
        roots.push_back({body.getTerminator()->getOperand(r), r});
  }
  BlockArgument forwardArg = body.getArgument(operand->getOperandNumber());
  if (llvm::none_of(roots,
                    [&](auto &rt) { return dependsOn(rt.first, forwardArg); }))
    return success();
  auto type = cast<RankedTensorType>(operand->get().getType());
  if (!isa<FloatType>(type.getElementType()))
    return success();
  // Dimensions read at a constant index (one gate of a stacked LSTM gate
  // tensor: (b, 2, j)) are left out of the gradient op's output, which is
  // added in at that index only where the gradient is summed
  // (sumContributions).
  AffineMap fullMap = op.getMatchingIndexingMap(operand);
  SmallVector<AffineExpr> dimResults;
  SmallVector<int64_t> reducedShape, constantAt;
  for (auto [d, e] : llvm::enumerate(fullMap.getResults())) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      constantAt.push_back(c.getValue());
      continue;
    }
    dimResults.push_back(e);
    reducedShape.push_back(type.getDimSize(d));
    constantAt.push_back(-1);
  }
  AffineMap map = AffineMap::get(fullMap.getNumDims(), 0, dimResults,
                                 op.getContext());
  type = RankedTensorType::get(reducedShape, type.getElementType());
  // (No dimension at all: a scalar, whose gradient sums over every loop.)
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
    return op->emitError()
           << "training step: cannot differentiate '" << op->getName()
           << "' with respect to operand " << operand->getOperandNumber()
           << ": it is read through a map that is not a projection of the "
              "loops";

  Location loc = op.getLoc();
  auto outMapOf = [&](unsigned r) {
    return op.getMatchingIndexingMap(op.getDpsInitOperand(r));
  };
  // Inputs: the forward inputs, the forward init when the body reads it
  // (elementwise ops only), the result's gradient, and for a max reduction
  // the result itself.
  // The body ops the gradient needs: those `root` (and the selection's
  // condition) are computed from, in order.
  llvm::SetVector<Operation *> needed;
  {
    SmallVector<Value> work;
    for (auto &rt : roots)
      work.push_back(rt.first);
    if (selectedIf)
      work.push_back(selectedIf);
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != &body || !needed.insert(def))
        continue;
      llvm::append_range(work, def->getOperands());
    }
  }
  auto isUsed = [&](BlockArgument arg) {
    return arg == selectedIf ||
           llvm::any_of(roots, [&](auto &rt) { return rt.first == arg; }) ||
           llvm::any_of(arg.getUsers(), [&](Operation *user) {
             return needed.contains(user);
           });
  };
  // Inputs: the forward inputs the body reads, the forward init when an
  // elementwise body reads it, the result's gradient, for a max reduction
  // the result itself, and more forward inputs where a loop's extent would
  // be unknown without them.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<BlockArgument> mapped;
  llvm::SmallBitVector covered(op.getNumLoops());
  auto addInput = [&](Value value, AffineMap m, BlockArgument arg) {
    inputs.push_back(value);
    maps.push_back(m);
    mapped.push_back(arg);
    for (AffineExpr e : m.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        covered.set(d.getPosition());
  };
  for (OpOperand *in : op.getDpsInputOperands())
    if (isUsed(body.getArgument(in->getOperandNumber())))
      addInput(in->get(), op.getMatchingIndexingMap(in),
               body.getArgument(in->getOperandNumber()));
  if (!hasReduction)
    for (unsigned r = 0; r < op.getNumDpsInits(); ++r) {
      BlockArgument initArg = body.getArgument(op.getNumDpsInputs() + r);
      if (isUsed(initArg))
        addInput(op.getDpsInitOperand(r)->get(), outMapOf(r), initArg);
    }
  unsigned seedIndex = inputs.size();
  for (auto &rt : roots)
    addInput(grads[rt.second], outMapOf(rt.second), BlockArgument());
  if (isMax)
    addInput(op->getResult(0), outMapOf(0), BlockArgument());
  for (AffineExpr e : map.getResults())
    covered.set(cast<AffineDimExpr>(e).getPosition());
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (covered.all())
      break;
    AffineMap m = op.getMatchingIndexingMap(in);
    bool helps = llvm::any_of(m.getResults(), [&](AffineExpr e) {
      auto d = dyn_cast<AffineDimExpr>(e);
      return d && !covered.test(d.getPosition());
    });
    if (helps && !llvm::is_contained(inputs, in->get()))
      addInput(in->get(), m, BlockArgument());
  }
  maps.push_back(map);
  SmallVector<utils::IteratorType> iterators;
  bool reduces = false;
  for (unsigned l = 0; l < op.getNumLoops(); ++l) {
    bool indexes = map.isFunctionOfDim(l);
    iterators.push_back(indexes ? utils::IteratorType::parallel
                                : utils::IteratorType::reduction);
    reduces |= !indexes;
  }
  // A value read by several ops whose gradients reduce (a weight shared by
  // an RNN's time steps; an RNN layer's output, read by its next step and by
  // the next layer): the sums over its readers' loops accumulate in one
  // chain (one per constant index it is read at: an LSTM's gate biases),
  // each starting from the sum so far, instead of separate sums added at
  // the end. Split over the batch (a weight's) or over the readers' output
  // columns (an activation's), the partial sums then stay where they are
  // along the chain and are combined once (soap-partition): a shared
  // parameter synchronized once, not once per reader, and an activation
  // whose readers hold partial sums of the same rows on the same devices
  // reduced once, not once per reader.
  Value read = operand->get();
  // A contraction's bf16 or f16 operand: its gradient accumulates in f32
  // and is rounded once, after the sum (as cuBLAS computes a 16-bit
  // product: the CUDA target makes it one f32 or mixed-precision GEMM),
  // not at every product and partial sum; along a chain of readers the sum
  // stays f32 until the gradient is taken (takeContributions). (A
  // convolution's filter gradient stays in the operand's type: cuDNN's
  // call for it, with fp32 compute, wants X, dY and dW of one type.)
  Type element = type.getElementType();
  bool wideSum = reduces && (element.isBF16() || element.isF16()) &&
                 linalg::isaContractionOpInterface(op);
  RankedTensorType sumType =
      wideSum ? RankedTensorType::get(type.getShape(), b.getF32Type()) : type;
  GradientChain *chain = nullptr;
  if (reduces && active.contains(read)) {
    SmallVector<GradientChain> &chains = reductionChains[read];
    auto it = llvm::find_if(chains, [&](const GradientChain &c) {
      return c.constantAt == constantAt && c.sum.getType() == sumType;
    });
    if (it == chains.end()) {
      chains.emplace_back();
      chains.back().constantAt.assign(constantAt.begin(), constantAt.end());
      it = std::prev(chains.end());
    }
    chain = &*it;
  }
  Value init = chain && chain->sum ? chain->sum
               : reduces           ? zeros(loc, sumType)
                         : tensor::EmptyOp::create(b, loc, type.getShape(),
                                                   type.getElementType())
                               .getResult();
  LogicalResult status = success();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{sumType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping mapping;
        for (auto [arg, value] : llvm::zip(mapped, args))
          if (arg)
            mapping.map(arg, value);
        Value result = isMax ? args[seedIndex + roots.size()] : Value();
        Value out = args.back();
        SmallVector<Operation *> cloned;
        for (Operation &bodyOp : body.without_terminator())
          if (needed.contains(&bodyOp))
            cloned.push_back(nb.clone(bodyOp, mapping));
        SmallVector<std::pair<Value, Value>> seeds;
        for (auto [i, rt] : llvm::enumerate(roots))
          seeds.push_back({mapping.lookupOrDefault(rt.first),
                           args[seedIndex + i]});
        if (isMax || selectedIf) {
          // A reduction (one root): only the extrema, or the selected
          // element, take the gradient.
          Value seed = seeds[0].second;
          Value zero = floatConstant(nb, l, seed.getType(), 0.0);
          Value hit =
              isMax ? arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                            seeds[0].first, result)
                          .getResult()
                    : mapping.lookupOrDefault(selectedIf);
          seeds[0].second = arith::SelectOp::create(nb, l, hit, seed, zero);
        }
        FailureOr<Value> adj =
            scalarAdjoint(nb, cloned, seeds, mapping.lookup(forwardArg), op);
        Value value = succeeded(adj) && *adj
                          ? *adj
                          : floatConstant(nb, l, type.getElementType(), 0.0);
        if (failed(adj))
          status = failure();
        if (wideSum) {
          // The product before its rounding to the operand's type (an
          // operand extended in the forward body), else the value widened.
          auto trunc = value.getDefiningOp<arith::TruncFOp>();
          value = trunc && trunc.getIn().getType().isF32()
                      ? trunc.getIn()
                      : arith::ExtFOp::create(nb, l, nb.getF32Type(), value)
                            .getResult();
        }
        if (reduces)
          value = arith::AddFOp::create(nb, l, out, value);
        linalg::YieldOp::create(nb, l, value);
      });
  if (failed(status)) {
    generic->erase();
    return failure();
  }
  // The primal values the adjoint did not need, then the inputs only they
  // read (upstream's pattern keeps what the loop extents need).
  Block *newBody = generic.getBody();
  SmallVector<Operation *> bodyOps;
  for (Operation &bodyOp : newBody->without_terminator())
    bodyOps.push_back(&bodyOp);
  for (Operation *bodyOp : llvm::reverse(bodyOps))
    if (isOpTriviallyDead(bodyOp))
      bodyOp->erase();
  created.push_back(generic);
  // Same loops as the forward op: its config as it is.
  if (Attribute config = op->getAttr(SOAPDialect::kConfigAttrName))
    generic->setAttr(SOAPDialect::kConfigAttrName, config);
  Value result = generic.getResult(0);
  SmallVector<int32_t> loopMap; // dim of the gradient -> loop of `op`
  for (AffineExpr e : map.getResults())
    loopMap.push_back(
        static_cast<int32_t>(cast<AffineDimExpr>(e).getPosition()));
  if (chain) {
    // Placed at its constant indices when the argument's gradient is asked
    // for (gradient()).
    chain->sum = result;
    chain->lastReader = op;
    chain->loopMap = loopMap;
    return success();
  }
  if (wideSum)
    result = roundSum(loc, result, type, op, loopMap);
  contribute(operand->get(), result, constantAt);
  return success();
}

Value TrainingStepBuilder::dilateAndPad(Location loc, Value grad,
                                        ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> window,
                                        ArrayRef<int64_t> low,
                                        ArrayRef<int64_t> size,
                                        int64_t spatial) {
  // grad spread by the strides at offset K-1 - low in zeros of extent
  // size + K-1 (what lies past size holds only zeros).
  auto type = cast<RankedTensorType>(grad.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> offsets(rank, 0), allStrides(rank, 1),
      shape(type.getShape());
  for (auto [d, stride] : llvm::enumerate(strides)) {
    offsets[spatial + d] = window[d] - 1 - low[d];
    allStrides[spatial + d] = stride;
    shape[spatial + d] = size[d] + window[d] - 1;
  }
  Type elem = type.getElementType();
  return buildStridedPlacement(b, loc, grad, offsets, allStrides,
                               RankedTensorType::get(shape, elem),
                               b.getFloatAttr(elem, 0.0));
}

/// The tensor.pad that makes `x`, when it pads the `count` dims from
/// `first` on only, by static amounts and with a constant (whatever the
/// constant, the unpadded elements' gradient is the same).
static tensor::PadOp padOfSpatialDims(Value x, int64_t first, int64_t count) {
  auto pad = x.getDefiningOp<tensor::PadOp>();
  if (!pad || !pad.getConstantPaddingValue() ||
      !pad.getSourceType().hasStaticShape())
    return {};
  for (auto amounts : {pad.getStaticLow(), pad.getStaticHigh()})
    for (auto [d, amount] : llvm::enumerate(amounts))
      if (ShapedType::isDynamic(amount) ||
          (amount != 0 && (static_cast<int64_t>(d) < first ||
                           static_cast<int64_t>(d) >= first + count)))
        return {};
  return pad;
}

template <typename ConvOp>
LogicalResult
TrainingStepBuilder::differentiateConvInput(ConvOp op, Value grad,
                                            const ConvInputGradient &form) {
  Location loc = op.getLoc();
  Value x = op.getDpsInputOperand(0)->get();
  Value w = op.getDpsInputOperand(1)->get();
  auto wType = cast<RankedTensorType>(w.getType());
  auto yType = cast<RankedTensorType>(grad.getType());
  SmallVector<int64_t> strides(op.getStrides().template getValues<int64_t>());
  SmallVector<int64_t> dilations(
      op.getDilations().template getValues<int64_t>());
  // The window's span: a dilated filter reaches (K - 1) D + 1 elements.
  SmallVector<int64_t> spans;
  for (int64_t d = 0; d < form.numSpatial; ++d)
    spans.push_back((wType.getDimSize(form.kernel + d) - 1) * dilations[d] + 1);
  // Of an input zero-padded along its spatial dims (a "same" convolution),
  // the gradient of the unpadded input, which the pad's slice would take
  // of the padded one's: a tile of it is a tile of the forward's split of
  // the unpadded rows and columns, and none is computed for the padding.
  SmallVector<int64_t> low(form.numSpatial, 0);
  if (auto pad = padOfSpatialDims(x, form.spatial, form.numSpatial)) {
    auto sourceType = pad.getSourceType();
    bool fits = true;
    for (int64_t d = 0; d < form.numSpatial; ++d) {
      // The shifted spread must start in, and fit, the smaller extent.
      int64_t l = pad.getStaticLow()[form.spatial + d];
      int64_t size = sourceType.getDimSize(form.spatial + d);
      fits &=
          l <= spans[d] - 1 &&
          (yType.getDimSize(form.spatial + d) - 1) * strides[d] <= size + l - 1;
    }
    if (fits) {
      for (int64_t d = 0; d < form.numSpatial; ++d)
        low[d] = pad.getStaticLow()[form.spatial + d];
      x = pad.getSource();
    }
  }
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> sizes;
  for (int64_t d = 0; d < form.numSpatial; ++d)
    sizes.push_back(xType.getDimSize(form.spatial + d));
  Value dilated =
      dilateAndPad(loc, grad, strides, spans, low, sizes, form.spatial);
  // The flipped filter: flipped[d] = W[filterDims[d]], window reversed.
  MLIRContext *ctx = b.getContext();
  int64_t rank = wType.getRank();
  SmallVector<AffineExpr> reads(rank);
  SmallVector<int64_t> flippedShape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t from = form.filterDims[d];
    AffineExpr e = getAffineDimExpr(d, ctx);
    if (from >= form.kernel && from < form.kernel + form.numSpatial)
      e = wType.getDimSize(from) - 1 - e;
    reads[from] = e;
    flippedShape.push_back(wType.getDimSize(from));
  }
  AffineMap flip = AffineMap::get(rank, 0, reads, ctx);
  auto flippedType = RankedTensorType::get(flippedShape, wType.getElementType());
  Value flippedInit = tensor::EmptyOp::create(b, loc, flippedType.getShape(),
                                              flippedType.getElementType());
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  Value flipped =
      linalg::GenericOp::create(
          b, loc, TypeRange{flippedType}, ValueRange{w}, ValueRange{flippedInit},
          {flip, b.getMultiDimIdentityMap(rank)}, parallel,
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, args[0]);
          })
          .getResult(0);
  auto conv = ConvOp::create(
      b, loc, TypeRange{xType}, ValueRange{dilated, flipped},
      ValueRange{zeros(loc, xType)},
      b.getI64TensorAttr(SmallVector<int64_t>(form.numSpatial, 1)),
      b.getI64TensorAttr(dilations));
  // The flipped filter's window loops run backwards over the forward's:
  // each tile then reads the part of W its forward tile read, on its device.
  AffineMap wMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  SmallVector<bool> reversed;
  for (int32_t l : form.loopMap) {
    std::optional<unsigned> at =
        l >= 0 ? wMap.getResultPosition(getAffineDimExpr(l, ctx))
               : std::nullopt;
    reversed.push_back(at && *at >= form.kernel &&
                       *at < form.kernel + form.numSpatial);
  }
  mapForwardConfig(conv, op, form.loopMap, reversed);
  contribute(x, conv->getResult(0));
  return success();
}

LogicalResult TrainingStepBuilder::differentiatePoolInput(linalg::LinalgOp op,
                                                          bool isMax,
                                                          Value grad) {
  PoolGradient gradient = buildPoolInputGradient(b, op, isMax, grad);
  mapForwardConfig(gradient.op, op, gradient.forwardLoops);
  contribute(op.getDpsInputOperand(0)->get(), gradient.value);
  return success();
}

LogicalResult
TrainingStepBuilder::differentiateLinalg(linalg::LinalgOp op,
                                         ArrayRef<Value> grads) {
  if (isa<linalg::FillOp>(op))
    return success();
  if (op.getNumDpsInits() != 1 &&
      (op.getNumReductionLoops() > 0 || !isa<linalg::GenericOp>(op)))
    return op->emitError() << "training step: cannot differentiate '"
                           << op->getName() << "' with "
                           << op.getNumDpsInits()
                           << " outputs (only elementwise ones)";
  Value grad = grads[0];
  // Values captured by the body (a gather from a table) get no gradient.
  bool capturesActive = false;
  op->walk([&](Operation *inner) {
    if (inner == op.getOperation())
      return;
    for (Value v : inner->getOperands())
      if (active.contains(v) && !op->isAncestor(v.getParentRegion()->getParentOp()))
        capturesActive = true;
  });
  if (capturesActive)
    return op->emitError()
           << "training step: cannot differentiate '" << op->getName()
           << "': its body reads a tensor that needs a gradient (a gather)";

  auto checkUnitDilation = [&](DenseIntElementsAttr dilations) {
    return llvm::all_of(dilations.getValues<int64_t>(),
                        [](int64_t d) { return d == 1; });
  };
  if (std::optional<ConvInputGradient> form = convInputGradient(op)) {
    if (active.contains(op.getDpsInputOperand(0)->get())) {
      LogicalResult status =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp,
                    linalg::Conv2DNhwcFhwcOp, linalg::DepthwiseConv2DNchwChwOp,
                    linalg::DepthwiseConv2DNhwcHwcOp,
                    linalg::Conv2DNgchwGfchwOp, linalg::Conv1DNcwFcwOp,
                    linalg::Conv1DNwcWcfOp, linalg::Conv3DNcdhwFcdhwOp,
                    linalg::Conv3DNdhwcDhwcfOp>([&](auto conv) {
                return differentiateConvInput(conv, grad, *form);
              })
              .Default([](Operation *) { return failure(); });
      if (failed(status))
        return failure();
    }
    if (active.contains(op.getDpsInputOperand(1)->get()) &&
        failed(differentiateOperand(op, op.getDpsInputOperand(1), grads)))
      return failure();
  } else if (isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
                 linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op)) {
    auto dilations = op->getAttrOfType<DenseIntElementsAttr>("dilations");
    if (!checkUnitDilation(dilations))
      return op->emitError() << "training step: dilated poolings are not "
                                "differentiated yet";
    if (active.contains(op.getDpsInputOperand(0)->get()) &&
        failed(differentiatePoolInput(
            op, isa<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp>(op),
            grad)))
      return failure();
  } else if (isa<linalg::ConvolutionOpInterface>(op.getOperation()) &&
             !isa<linalg::GenericOp>(op)) {
    return op->emitError()
           << "training step: cannot differentiate '" << op->getName()
           << "' (the convolutions it differentiates: "
              "conv_2d_nchw_fchw, conv_2d_nhwc_hwcf, "
              "conv_2d_nhwc_fhwc, depthwise_conv_2d_nchw_chw, "
              "depthwise_conv_2d_nhwc_hwc, conv_2d_ngchw_gfchw, "
              "conv_1d_ncw_fcw, conv_1d_nwc_wcf, conv_3d_ncdhw_fcdhw, "
              "conv_3d_ndhwc_dhwcf; "
              "poolings: pooling_nchw_max, pooling_nchw_sum, "
              "pooling_nhwc_max, pooling_nhwc_sum)";
  } else {
    for (OpOperand *in : op.getDpsInputOperands())
      if (active.contains(in->get()) &&
          failed(differentiateOperand(op, in, grads)))
        return failure();
  }
  // The accumulators' start values: a sum passes the gradient through; an
  // elementwise body that reads one is differentiated like an input.
  if (op.getNumReductionLoops() == 0) {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (active.contains(init.get()) && op.payloadUsesValueFromOperand(&init) &&
          failed(differentiateOperand(op, &init, grads)))
        return failure();
    return success();
  }
  OpOperand *init = op.getDpsInitOperand(0);
  if (!grad || !active.contains(init->get()) ||
      !op.payloadUsesValueFromOperand(init))
    return success();
  Block &body = *op.getBlock();
  Operation *combiner = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || !isa<arith::AddFOp>(combiner))
    return op->emitError() << "training step: cannot differentiate '"
                           << op->getName()
                           << "' with respect to the start value of its "
                              "non-sum reduction";
  contribute(init->get(), grad);
  return success();
}

LogicalResult TrainingStepBuilder::differentiate(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      linalgOp && op->getNumResults() > 0) {
    SmallVector<Value> grads;
    for (Value r : op->getResults())
      grads.push_back(gradient(r));
    if (llvm::all_of(grads, [](Value g) { return !g; }))
      return success();
    return differentiateLinalg(linalgOp, grads);
  }
  if (op->getNumResults() != 1) {
    if (llvm::any_of(op->getResults(),
                     [&](Value r) { return contributions.count(r); }))
      return op->emitError() << "training step: cannot differentiate '"
                             << op->getName() << "' with "
                             << op->getNumResults() << " results";
    return success();
  }
  Value grad = gradient(op->getResult(0));
  if (!grad)
    return success();
  Location loc = op->getLoc();
  if (isa<tensor::EmptyOp, arith::ConstantOp>(op))
    return success();
  auto unitStrides = [&](size_t rank) {
    return SmallVector<OpFoldResult>(rank, b.getIndexAttr(1));
  };
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (!pad.getConstantPaddingValue() ||
        llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic))
      return op->emitError() << "training step: cannot differentiate a "
                                "'tensor.pad' with dynamic or non-constant "
                                "padding";
    auto sourceType = pad.getSourceType();
    SmallVector<OpFoldResult> offsets, sizes;
    for (int64_t d = 0; d < sourceType.getRank(); ++d) {
      offsets.push_back(b.getIndexAttr(pad.getStaticLow()[d]));
      sizes.push_back(b.getIndexAttr(sourceType.getDimSize(d)));
    }
    contribute(pad.getSource(),
               tensor::ExtractSliceOp::create(b, loc, grad, offsets, sizes,
                                              unitStrides(sourceType.getRank())));
    return success();
  }
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto sourceType = extract.getSourceType();
    Value part = grad;
    // A rank-reducing slice: the gradient gets the dropped unit dims back.
    if (extract.getType().getRank() < sourceType.getRank()) {
      SmallVector<int64_t> sizes(extract.getStaticSizes());
      auto reassociation = getReassociationIndicesForReshape(
          extract.getType(),
          RankedTensorType::get(sizes, sourceType.getElementType()));
      if (!reassociation)
        return op->emitError() << "training step: cannot differentiate this "
                                  "rank-reducing 'tensor.extract_slice'";
      part = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(sizes, sourceType.getElementType()),
          grad, *reassociation);
    }
    if (!ShapedType::isDynamicShape(extract.getStaticOffsets()) &&
        !ShapedType::isDynamicShape(extract.getStaticStrides())) {
      // At its offsets (and strides) in zeros, from ops SOAP partitions.
      contribute(extract.getSource(),
                 buildStridedPlacement(
                     b, loc, part, extract.getStaticOffsets(),
                     extract.getStaticStrides(), sourceType,
                     b.getFloatAttr(sourceType.getElementType(), 0.0)));
      return success();
    }
    contribute(extract.getSource(),
               tensor::InsertSliceOp::create(
                   b, loc, part, zeros(loc, sourceType),
                   extract.getMixedOffsets(), extract.getMixedSizes(),
                   extract.getMixedStrides()));
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    if (active.contains(insert.getSource())) {
      auto slice = tensor::ExtractSliceOp::create(
          b, loc, insert.getSourceType(), grad, insert.getMixedOffsets(),
          insert.getMixedSizes(), insert.getMixedStrides());
      // The inserted part's gradient where the insertion held that part.
      if (insert.hasUnitStride() &&
          insert.getSourceType().getRank() == insert.getType().getRank())
        if (ParallelConfigAttr config =
                sliceConfig(insert->getAttrOfType<ParallelConfigAttr>(
                                SOAPDialect::kConfigAttrName),
                            insert.getType().getShape(),
                            insert.getStaticOffsets(), insert.getStaticSizes()))
          slice->setAttr(SOAPDialect::kConfigAttrName, config);
      contribute(insert.getSource(), slice);
    }
    if (active.contains(insert.getDest()))
      contribute(insert.getDest(),
                 tensor::InsertSliceOp::create(
                     b, loc, zeros(loc, insert.getSourceType()), grad,
                     insert.getMixedOffsets(), insert.getMixedSizes(),
                     insert.getMixedStrides()));
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    int64_t offset = 0;
    uint64_t axis = concat.getDim();
    for (Value input : concat.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets, sizes;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        offsets.push_back(
            b.getIndexAttr(static_cast<uint64_t>(d) == axis ? offset : 0));
        sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      }
      if (active.contains(input)) {
        auto slice = tensor::ExtractSliceOp::create(
            b, loc, grad, offsets, sizes, unitStrides(type.getRank()));
        // Each input's part of the gradient where the concatenation held
        // that part of its result.
        SmallVector<int64_t> at(type.getRank(), 0), whole(type.getShape());
        at[axis] = offset;
        if (ParallelConfigAttr config =
                sliceConfig(concat->getAttrOfType<ParallelConfigAttr>(
                                SOAPDialect::kConfigAttrName),
                            concat.getType().getShape(), at, whole))
          slice->setAttr(SOAPDialect::kConfigAttrName, config);
        contribute(input, slice);
      }
      offset += type.getDimSize(axis);
    }
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    contribute(collapse.getSrc(),
               tensor::ExpandShapeOp::create(
                   b, loc, collapse.getSrcType(), grad,
                   collapse.getReassociationIndices()));
    return success();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    contribute(expand.getSrc(),
               tensor::CollapseShapeOp::create(
                   b, loc, grad, expand.getReassociationIndices()));
    return success();
  }
  return op->emitError() << "training step: cannot differentiate '"
                         << op->getName() << "'";
}

/// Moves `update`, the SGD update of `parameter` made at the end of the
/// step, up to just after the last op it waits for: the ops that make its
/// operands and the other readers of the parameter and of its views (so
/// that an update in place still comes after them). The backward pass then
/// frees a layer's activations and gradients as it goes (the partitioner emits
/// each layer where its last op stands: a weight's gradient is grouped with its
/// update, and would wait with it for the end of the step) and its
/// gradient's all-reduce overlaps the layers after it.
static void scheduleUpdate(Operation *update, Value parameter) {
  Block *block = update->getBlock();
  Operation *after = nullptr;
  auto waitFor = [&](Operation *op) {
    op = op ? block->findAncestorOpInBlock(*op) : nullptr;
    if (op && op != update && (!after || after->isBeforeInBlock(op)))
      after = op;
  };
  SmallVector<Operation *> starts; // empty tensors made for it alone
  for (Value operand : update->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (isa_and_nonnull<tensor::EmptyOp>(def) && def->hasOneUse() &&
        def->getBlock() == block) {
      starts.push_back(def);
      continue;
    }
    waitFor(def);
  }
  for (Operation *reader : readersOfViews(parameter))
    waitFor(reader);
  if (!after || !after->isBeforeInBlock(update))
    return;
  update->moveAfter(after);
  for (Operation *start : starts)
    start->moveBefore(update);
}

/// Upstream's cleanup of linalg ops' unused operands and results, on `ops`
/// only (their soap.config and soap.name are kept).
static void eraseUnusedOperandsAndResults(ArrayRef<Operation *> ops) {
  if (ops.empty())
    return;
  RewritePatternSet patterns(ops.front()->getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}

void TrainingStepBuilder::nameGradientOps(Operation *forward, Operation *last,
                                          Operation *end) {
  // An op without a name of its own (a bias add or an activation a layer
  // fuses after its anchor, a concatenation's later inserts) is part of
  // the layer of the first named op it writes into (its destination) or,
  // failing that, reads.
  // Ops that only start a value are named by none.
  auto isMade = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && !isValueStart(def);
  };
  std::string base;
  for (Operation *op = forward; op && base.empty();) {
    base = getStableName(op);
    SmallVector<Value> operands;
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      llvm::append_range(operands, dps.getDpsInits());
    llvm::append_range(operands, op->getOperands());
    auto made = llvm::find_if(operands, isMade);
    op = made == operands.end() ? nullptr : made->getDefiningOp();
  }
  if (base.empty())
    return;
  base += ".grad";
  for (Operation *op = last->getNextNode(); op && op != end;
       op = op->getNextNode()) {
    if (isValueStart(op) || op->hasAttr(SOAPDialect::kNameAttrName))
      continue;
    unsigned count = gradientNames[base]++;
    std::string name = base;
    if (count)
      name += "." + std::to_string(count);
    op->setAttr(SOAPDialect::kNameAttrName, b.getStringAttr(name));
  }
}

LogicalResult TrainingStepBuilder::run() {
  Block &body = func.getBody().front();
  // Results nothing reads go first: an exporter's max reduction that also
  // computes the argmax nobody uses (torch.max(dim) in a softmax) is then a
  // plain max.
  {
    SmallVector<Operation *> generics;
    for (Operation &op : body.without_terminator())
      if (isa<linalg::GenericOp>(op))
        generics.push_back(&op);
    eraseUnusedOperandsAndResults(generics);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numArgs = func.getNumArguments();
  unsigned numResults = func.getNumResults();
  llvm::SmallBitVector parameters = getParameterArguments(func);
  bool anyConfig = false;
  func.walk([&](Operation *op) {
    anyConfig |= op->hasAttr(SOAPDialect::kConfigAttrName);
  });

  // What needs a gradient: the parameters (every float tensor argument for
  // `returns=gradients`), and what is computed from them.
  SmallVector<unsigned> wanted;
  std::optional<unsigned> nonFloatParameter;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type || !isa<FloatType>(type.getElementType())) {
      if (parameters.test(i) && !nonFloatParameter)
        nonFloatParameter = i;
      continue;
    }
    if (returnGradients || parameters.test(i)) {
      wanted.push_back(i);
      active.insert(func.getArgument(i));
    }
  }
  if (wanted.empty() && nonFloatParameter)
    return func.emitError()
           << "training step: '" << func.getSymName()
           << "' has no floating-point parameters to train: argument #"
           << *nonFloatParameter << " ("
           << func.getArgument(*nonFloatParameter).getType()
           << ") is marked 'soap.parameter', but only floating-point "
              "tensors have gradients";
  if (wanted.empty())
    return func.emitError() << "training step: '" << func.getSymName()
                            << "' has no parameters to train (mark them "
                               "with 'soap.parameter')";
  auto isDynamic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && !shaped.hasStaticShape();
  };
  for (unsigned i : wanted)
    if (isDynamic(func.getArgument(i).getType()))
      return func.emitError()
             << "training step: argument " << i << " has a dynamic shape ("
             << func.getArgument(i).getType()
             << "); the gradients need static shapes";
  // A partitioned program writes each device's part of an updated
  // parameter where it is held; a scalar has no part to leave out on the
  // devices that do not hold it, so which copy is the new value is unknown.
  if (inPlace && SOAPDialect::getNumDevices(func) > 1)
    for (unsigned i : wanted)
      if (cast<RankedTensorType>(func.getArgument(i).getType()).getRank() == 0)
        return func.emitError()
               << "training step: parameter argument " << i
               << " is a scalar (rank 0), which a program for several "
                  "devices cannot update in place; return the updated "
                  "parameters (returns=parameters) or make it a tensor of "
                  "one element";
  for (Operation &op : body.without_terminator()) {
    bool isActive = false;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        isActive |= active.contains(v);
    });
    if (!isActive)
      continue;
    for (Value r : op.getResults()) {
      if (isDynamic(r.getType()))
        return op.emitError()
               << "training step: '" << op.getName()
               << "' has a result of dynamic shape (" << r.getType()
               << ") on the path from a parameter; the gradients need "
                  "static shapes";
      active.insert(r);
    }
  }
  // Explicit parameter marks: the new arguments must not look like weights.
  for (unsigned i = 0; i < numArgs; ++i)
    if (parameters.test(i))
      func.setArgAttr(i, SOAPDialect::kParameterAttrName,
                      UnitAttr::get(func.getContext()));

  // One cotangent argument per result: the seed of the backward pass.
  for (unsigned r = 0; r < numResults; ++r) {
    Value result = ret.getOperand(r);
    if (failed(func.insertArgument(func.getNumArguments(), result.getType(),
                                   {}, result.getLoc())))
      return failure();
    contribute(result, func.getArgument(func.getNumArguments() - 1));
  }

  if (anyConfig && failed(fillMissingConfigs(func, /*groupOps=*/false)))
    return failure();
  b.setInsertionPoint(ret);
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    Operation *last = ret->getPrevNode();
    if (failed(differentiate(op)))
      return failure();
    nameGradientOps(op, last, ret);
  }

  // The step's extra results (and, for parameters, the argument each is the
  // new value of: in place, the result's soap.updates_input).
  SmallVector<Value> extra;
  SmallVector<int64_t> updates;
  SmallVector<std::pair<Operation *, Value>> updateOps;
  for (unsigned i : wanted) {
    Value arg = func.getArgument(i);
    Location loc = arg.getLoc();
    if (returnGradients) {
      Value grad = gradient(arg);
      extra.push_back(grad ? grad : zeros(loc, arg.getType()));
      continue;
    }
    SmallVector<Contribution, 2> &parts = takeContributions(arg);
    if (parts.empty()) {
      if (!inPlace) { // unchanged: nothing to write over it
        extra.push_back(arg);
        updates.push_back(i);
      }
      continue;
    }
    // p - lr * dL/dp, summing dL/dp's terms in the same op: each is where
    // its last op left it (a shared weight's chain sums all-reduced on every
    // device that holds the weight), so an update in place on those devices
    // reads it there instead of from one device that summed them. In place,
    // written over p (its destination), which bufferization can then do in
    // the parameter's own buffer.
    auto type = cast<RankedTensorType>(arg.getType());
    auto sgd = [&](OpBuilder &nb, Location l, Value p, Value g) -> Value {
      Value lr = floatConstant(nb, l, type.getElementType(), learningRate);
      Value step = arith::MulFOp::create(nb, l, lr, g);
      return arith::SubFOp::create(nb, l, p, step);
    };
    Value updated;
    if (inPlace) {
      updated = sumContributions(
          loc, type, parts, {}, arg,
          [&](OpBuilder &nb, Location l, Value g, ValueRange, Value p) {
            return sgd(nb, l, p, g);
          });
    } else {
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      updated = sumContributions(
          loc, type, parts, {arg}, empty,
          [&](OpBuilder &nb, Location l, Value g, ValueRange p, Value) {
            return sgd(nb, l, p[0], g);
          });
    }
    extra.push_back(updated);
    updates.push_back(i);
    updateOps.push_back({updated.getDefiningOp(), arg});
  }
  for (auto [k, v] : llvm::enumerate(extra)) {
    DictionaryAttr attrs;
    if (inPlace)
      attrs = b.getDictionaryAttr(
          b.getNamedAttr(SOAPDialect::kUpdatesInputAttrName,
                         b.getI64IntegerAttr(updates[k])));
    if (failed(func.insertResult(func.getNumResults(), v.getType(), attrs)))
      return failure();
    ret->insertOperands(ret.getNumOperands(), v);
  }
  eraseUnusedOperandsAndResults(created);
  // Forward ops marked soap.recompute: computed again where the backward
  // pass reads them (once the backward ops read only what they use).
  recomputeForBackward(forward);
  for (auto [update, parameter] : updateOps)
    scheduleUpdate(update, parameter);
  untieSharedPads(func);
  if (anyConfig)
    return fillMissingConfigs(func);
  return success();
}

struct TrainingStep
    : public mlir::soap::impl::TrainingStepBase<TrainingStep> {
  using TrainingStepBase::TrainingStepBase;

  void runOnOperation() override {
    if (returns != "parameters" && returns != "gradients" &&
        returns != "outputs") {
      getOperation().emitError()
          << "soap-training-step: returns must be 'parameters', 'gradients' "
             "or 'outputs', not '"
          << returns << "'";
      return signalPassFailure();
    }
    if (!std::isfinite(learningRate.getValue()) || learningRate < 0) {
      getOperation().emitError() << "soap-training-step: learning-rate must "
                                    "be a finite number, not negative: "
                                 << learningRate.getValue();
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = findEntryFunction(getOperation(), entry);
    if (failed(func))
      return signalPassFailure();
    TrainingStepBuilder builder(*func, returns == "gradients", learningRate,
                                /*inPlace=*/returns == "outputs");
    if (failed(builder.run()))
      return signalPassFailure();
  }
};

} // namespace
