//===- Simulator.cpp - Execution simulator (FlexFlow §5) ------------------===//
//
// See Simulator.h for the model. Implementation outline:
//
// Blocks. The task graph is cut into blocks whose order is fixed by the
// graph alone (never by the strategy):
//   forward:  for n = 0..N-1: for each input edge e of n: FT(e); F(n)
//   backward: for n = N-1..0: for each output edge e of n: GT(e); B(n);
//             S(p) for each shared parameter p whose first reader is n
//   updates:  for n = N-1..0: U(n); SU(p) for the same p
// FT/GT hold an edge's forward / gradient transfers (what each consumer /
// producer tile waits for is kept per edge and read when F / B is built), F
// the forward tasks, partial sums and combines, B the backward tasks and
// all-reduces, U the updates, S(p) / SU(p) the all-reduces / updates of a
// parameter read by several nodes (rebuilt when any reader changes). The
// static priority of a task is (block,
// index in block); every dependency goes to a strictly smaller priority,
// and every block depends only on earlier blocks.
//
// Storage. Tasks live in flat struct-of-arrays pools; each block owns a
// range [begin, begin + cap] of the task pool (one slot for the sentinel of
// the CSR predecessor lists) and a range of the predecessor pool, which
// also holds the resource lists of its multi-resource tasks (all-reduces).
// A block is rebuilt in place when it fits, else moved to the end of the
// pool with a doubled capacity; simulateFull() lays all blocks out afresh in
// priority order. Nothing is allocated once capacities have settled.
//
// Sweep. With static per-resource order a schedule is one pass in priority
// order keeping the last end per resource (`cur`). A delta simulation
// rebuilds the changed node's blocks and its edges' blocks (relinking the
// neighbours' F / B blocks) and re-sweeps from a checkpoint of `cur` (saved
// every kCheckpoint blocks) at or before the first rebuilt block: the
// blocks before that one only replay their stored ends into `cur`, every
// block from it on is recomputed (a config change usually shifts everything
// after it, so looking for what did not move costs more than it saves). A
// block that changed an end time marks the blocks reading it ("input
// dirty"). At each later checkpoint the old schedule's `cur` is still
// stored: once past the last rebuilt block, with no input-dirty block
// pending and `cur` equal to it, the rest of the schedule is the old one and
// the sweep stops. The sweep's inner loop, recomputeRange(), is what a delta
// costs.
//
// Undo. While a delta runs, every writer first saves what it overwrites in
// the UndoLog: a part that its writer rewrites whole (a node's shape, an
// edge's pairs or delivery lists) is swapped into the log's slot for it,
// which costs nothing; smaller parts and block headers are copied; a
// rebuilt block's old task range and the old ends of every re-swept task
// (written by the sweep itself) and of every overwritten checkpoint are
// appended to flat logs. undoDelta() swaps and copies them back in
// reverse. A rejected proposal used to cost a second delta; now it costs
// the log (a few percent of a delta) and its replay.
//
//===----------------------------------------------------------------------===//

#include "soap/Simulator/Simulator.h"

#include "MemoryTimeline.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

#include "llvm/ADT/ArrayRef.h"

using namespace soap;

const char *soap::taskKindName(TaskKind kind) {
  switch (kind) {
  case TaskKind::Forward:
    return "forward";
  case TaskKind::Backward:
    return "backward";
  case TaskKind::Transfer:
    return "transfer";
  case TaskKind::GradientTransfer:
    return "gradient transfer";
  case TaskKind::PartialSum:
    return "partial-sum all-reduce";
  case TaskKind::Combine:
    return "combine";
  case TaskKind::Join:
    return "join";
  case TaskKind::AllReduce:
    return "all-reduce";
  case TaskKind::Update:
    return "update";
  case TaskKind::Gather:
    return "all-gather";
  case TaskKind::GradientScatter:
    return "gradient reduce-scatter";
  }
  return "unknown";
}

namespace {

constexpr int32_t kCheckpoint = 16;
/// buildForwardEdge: a pair that moves point to point or in a gather
/// (decided once all pairs are classified).
constexpr int32_t kPending = std::numeric_limits<int32_t>::min();
/// buildGradientEdge: a pair of a consumer group whose partial input
/// gradients are all-reduced (decided once the group's ring is built).
constexpr int32_t kGrouped = std::numeric_limits<int32_t>::min() + 1;
/// Most runs kept per dimension of an output tile (beyond: its bounding
/// range, an over-approximation).
constexpr size_t kMaxRuns = 4096;

enum BlockKind : uint8_t {
  FwdTransfers,
  ForwardBlock,
  GradTransfers,
  BackwardBlock,
  UpdateBlock,
  SyncBlock,       ///< all-reduces of one shared parameter
  SharedUpdBlock,  ///< updates of one shared parameter
};

/// Delta flags of a block.
enum : uint8_t { Keep = 0, Relink = 1, Rebuild = 2 };

struct Edge {
  int32_t producer, consumer, input, output;
};

/// NodeGeom::scatterDim of a reduction group whose partial sums go to their
/// readers (Region.h, sumAtReaders).
constexpr int8_t kSumAtReaders = -2;

/// Per node, everything that depends on its config (recomputed when the
/// config changes), plus the local task indices its blocks publish.
struct NodeGeom {
  int32_t tiles = 0;
  int32_t reduction = 1; ///< product of the degrees of Reduction loops
  std::vector<int32_t> devices;
  /// Regions per operand (inputs, then outputs), tile, tensor dimension.
  std::vector<Range> regions;
  std::vector<int32_t> opOffset;
  std::vector<double> fwd, bwd;
  /// Memory per tile kept through the iteration: parameters, graph-input
  /// regions.
  std::vector<int64_t> kept;
  /// Per tile: the gradients of the parameters it reads (not shared ones:
  /// their sync block keeps theirs), alive while B(n) runs (the training
  /// step updates each parameter right after its gradient).
  std::vector<int64_t> paramGrad;
  std::vector<int64_t> outBytes; ///< output bytes per tile (partial sums)
  /// Memory per tile kept from the forward to the backward pass: the output
  /// regions and their share of the values saved inside the node.
  std::vector<int64_t> act;
  std::vector<int32_t> owner;    ///< first tile of the tile's reduction group
  /// Split reductions (buildForward): the tiles grouped by owner, in tile
  /// order (members[groupBegin[o], + groupSize[o]) for owner o), and per
  /// owner the output dimension its group's sums are reduce-scattered
  /// along, or -1 (all-reduced, or summed on one device), or kSumAtReaders
  /// (sent to the readers, which sum them: sumAtReaders), and which member
  /// gets which chunk (chunkHolder[groupBegin[o] + c]: the index in the
  /// group of chunk c's holder).
  std::vector<int32_t> members, groupBegin, groupSize, chunkHolder;
  std::vector<int8_t> scatterDim;
  std::vector<uint8_t> outDisjoint; ///< per output: tiles' regions disjoint
  /// Per output: whether a dimension is indexed by several loops (a
  /// collapsed reshape), where a tile writes runs its bounding range
  /// over-approximates (`8*d0 + d1` with d1 split). Then the runs of tile t,
  /// dimension d are runs[runBegin[i], + runCount[i]) with
  /// i = runOffset[o] + t * rank + d, and transfers from the tile move only
  /// what it wrote (soap-partition's owners: exactAccessRegions).
  std::vector<uint8_t> outExact;
  std::vector<int32_t> runOffset, runBegin, runCount;
  std::vector<Range> runs;
  /// Local index in F(n) of the task providing tile t's final output.
  std::vector<int32_t> srcLocal;
  /// Updates (built with B(n), emitted in U(n)): one per tile, after the
  /// all-reduces of its replica groups (pred local indices in B(n)).
  std::vector<int32_t> updPredStart, updPreds;
  std::vector<double> updDur;
  /// Degrees the geometry was computed for, and a version bumped whenever it
  /// changes (edges cache their pairs per pair of versions).
  std::vector<int32_t> degrees;
  uint64_t version = 0;

  const Range *region(int32_t operand, int32_t tile, int32_t rank) const {
    return regions.data() + opOffset[operand] + size_t(tile) * rank;
  }

  // The parts of a geometry, each written whole by one writer (UndoLog
  // moves the old contents aside before it writes, and back on undo). A
  // field a writer gains belongs in its part's swap (DeltaSimulationTest's
  // undo checks catch one left out).
  /// computeGeometry: the tile devices.
  void swapDevices(NodeGeom &o) { devices.swap(o.devices); }
  /// computeGeometry when the degrees change: everything they determine.
  void swapShape(NodeGeom &o) {
    std::swap(tiles, o.tiles);
    std::swap(reduction, o.reduction);
    regions.swap(o.regions);
    opOffset.swap(o.opOffset);
    fwd.swap(o.fwd);
    bwd.swap(o.bwd);
    kept.swap(o.kept);
    outBytes.swap(o.outBytes);
    act.swap(o.act);
    paramGrad.swap(o.paramGrad);
    owner.swap(o.owner);
    outDisjoint.swap(o.outDisjoint);
    outExact.swap(o.outExact);
    runOffset.swap(o.runOffset);
    runBegin.swap(o.runBegin);
    runCount.swap(o.runCount);
    runs.swap(o.runs);
    degrees.swap(o.degrees);
    std::swap(version, o.version);
  }
  /// buildForward (which rewrites the groups only for split reductions, so
  /// they are copied, not moved aside).
  void copyForwardOutputs(const NodeGeom &o) {
    srcLocal = o.srcLocal;
    members = o.members;
    groupBegin = o.groupBegin;
    groupSize = o.groupSize;
    chunkHolder = o.chunkHolder;
    scatterDim = o.scatterDim;
  }
  void swapForwardOutputs(NodeGeom &o) {
    srcLocal.swap(o.srcLocal);
    members.swap(o.members);
    groupBegin.swap(o.groupBegin);
    groupSize.swap(o.groupSize);
    chunkHolder.swap(o.chunkHolder);
    scatterDim.swap(o.scatterDim);
  }
  // (What buildBackward writes, the updates' lists, needs no saving: only
  // U(n) reads it, and U(n) is rebuilt only with B(n), in the same delta.)
  /// Elements of output `o`'s tile `tile` inside `box` (outExact[o]).
  int64_t exactOverlap(int32_t o, int32_t tile, int32_t rank,
                       const Range *box) const {
    int32_t i = runOffset[o] + tile * rank;
    int64_t v = 1;
    for (int32_t d = 0; d < rank && v; ++d, ++i)
      v *= runsOverlap(runs.data() + runBegin[i], runCount[i], box[d]);
    return v;
  }
};

/// Static facts about a node.
struct NodeStatic {
  std::vector<int32_t> inEdges, outEdges;
  std::vector<int32_t> ranks; ///< per operand (inputs, then outputs)
  double scale = 1.0;
  int32_t outElementBytes = 4;
  /// Per input: bitmask of loops that index it (parameters only).
  std::vector<uint32_t> paramLoops;
  /// Per input: bitmask of loops that index it (every input).
  std::vector<uint32_t> inputLoops;
  /// Per input: index of the shared parameter it reads, or -1.
  std::vector<int32_t> sharedOf;
  /// Shared parameters read by the node (distinct).
  std::vector<int32_t> shared;
  /// An output is a graph output (returned, so kept whatever the config
  /// says: ParallelConfig::recompute changes nothing).
  bool returnsOutput = false;
  /// Whether the backward pass computes the gradient of the outputs (some
  /// parameter is upstream of them).
  bool gradNeeded = false;
  /// The last node that reads an output (the node itself when none does):
  /// the first backward task that writes its gradient.
  int32_t lastReader = -1;
  /// The nodes whose lastReader this node is (itself included), once each.
  std::vector<int32_t> lastReadHere;
  /// Bytes of the output tensors, whole (Node::savedBytes is shared out in
  /// proportion to them).
  int64_t outTensorBytes = 0;
};

/// A parameter tensor read by several (node, input) pairs: synchronized once
/// (see Simulator.h), in its own blocks.
struct SharedParam {
  int32_t tensor = -1, minReader = -1;
  std::vector<std::pair<int32_t, int32_t>> readers; ///< (node, input)
  /// Updates (built with the sync block): device, duration, predecessors
  /// (global ids, or ~local index in the sync block).
  std::vector<int32_t> updDev, updPredStart, updPreds;
  std::vector<double> updDur;
};

struct Block {
  int32_t begin = -1, size = 0, cap = 0;
  int32_t pbegin = -1, psize = 0, pcap = 0;
  int64_t comm = 0;
  std::vector<std::pair<int32_t, int64_t>> memory;
};

/// A block under construction. Predecessors >= 0 are global task ids; a
/// negative one, ~i, is task i of the block. A task on several resources
/// (or none) has res = ~o, its resources being resLists[o + 1 ..] (count
/// resLists[o]).
struct Stage {
  std::vector<double> dur, bytes;
  std::vector<int32_t> res, predStart, preds, resLists;
  std::vector<uint8_t> kind;
  void clear() {
    dur.clear();
    bytes.clear();
    res.clear();
    predStart.clear();
    preds.clear();
    resLists.clear();
    kind.clear();
  }
  int32_t size() const { return static_cast<int32_t>(dur.size()); }
  int32_t add(TaskKind k, int32_t resource, double duration,
              double moved = 0) {
    dur.push_back(duration);
    bytes.push_back(moved);
    res.push_back(resource);
    kind.push_back(static_cast<uint8_t>(k));
    predStart.push_back(static_cast<int32_t>(preds.size()));
    return static_cast<int32_t>(dur.size()) - 1;
  }
  void pred(int32_t p) { preds.push_back(p); }
  /// Task i runs on all of `resources` at once.
  void setResources(int32_t i, const std::vector<int32_t> &resources) {
    if (resources.size() == 1) {
      res[i] = resources[0];
      return;
    }
    res[i] = ~static_cast<int32_t>(resLists.size());
    resLists.push_back(static_cast<int32_t>(resources.size()));
    resLists.insert(resLists.end(), resources.begin(), resources.end());
  }
};

/// Per edge: the intersecting tile pairs (cached per pair of geometry
/// versions) and what each consumer tile (forward) / producer tile
/// (backward) waits for: global task ids, CSR.
struct EdgeData {
  std::vector<int32_t> a, b;
  std::vector<int64_t> vol;
  uint64_t verP = 0, verC = 0;
  std::vector<int32_t> fwdStart, fwd, gradStart, grad;
  /// buildForwardEdge, per pair: the local index of the transfer task in
  /// FT(e) that moves it (-1: none), and whether an earlier reader of the
  /// tensor already brought it to the consumer tile's device (no transfer
  /// either way, and its gradient is summed there and sent by that reader).
  std::vector<int32_t> slot;
  std::vector<uint8_t> covered;
  /// The pairs FT(e) moves, and (after commit) what later readers of the
  /// tensor see of them: producer tile, device, task, consumer region.
  std::vector<int32_t> moved;
  std::vector<int64_t> heldKey;
  /// buildForwardEdge's ring all-gathers (findGathers): per pair the one
  /// that moves it (-1: none); per gather its producer tiles in chunk order
  /// (CSR, gatherStart) and the bytes of the region it gathers.
  /// buildGradientEdge reduce-scatters their gradients over the same rings.
  std::vector<int32_t> gatherOf, gatherStart, gatherTiles;
  std::vector<int64_t> gatherBytes;
  size_t size() const { return a.size(); }
  int32_t numGathers() const {
    return static_cast<int32_t>(gatherBytes.size());
  }

  // The parts each writer rewrites whole (see NodeGeom).
  /// computePairs when the versions change.
  void swapPairs(EdgeData &o) {
    a.swap(o.a);
    b.swap(o.b);
    vol.swap(o.vol);
    std::swap(verP, o.verP);
    std::swap(verC, o.verC);
  }
  /// buildForwardEdge.
  void swapForwardLists(EdgeData &o) {
    slot.swap(o.slot);
    covered.swap(o.covered);
    moved.swap(o.moved);
    fwdStart.swap(o.fwdStart);
    fwd.swap(o.fwd);
    gatherOf.swap(o.gatherOf);
    gatherStart.swap(o.gatherStart);
    gatherTiles.swap(o.gatherTiles);
    gatherBytes.swap(o.gatherBytes);
  }
  /// buildGradientEdge.
  void swapGradientLists(EdgeData &o) {
    gradStart.swap(o.gradStart);
    grad.swap(o.grad);
  }
};

/// The consumer tiles of an edge whose partial input gradients are
/// all-reduced or reduce-scattered together (Impl::gradientGroups): per
/// consumer tile its group (-1: none); per group its tiles (CSR, start;
/// the first: the one whose device sends the sums on), the bytes of the
/// region they read, the dimension its sums are reduce-scattered along
/// (scatter; -1: all-reduced) and per chunk the member that gets it
/// (holders, CSR as the tiles).
struct GradientGroups {
  std::vector<int32_t> tileGroup, start, tiles, scatter, holders;
  std::vector<int64_t> bytes;
  int32_t size() const { return static_cast<int32_t>(bytes.size()); }
};

/// What the last delta simulation overwrote, to put it back
/// (Simulator::undoDelta). Each part of an entity (a node's geometry and
/// what its forward and backward blocks publish, an edge's pairs and
/// delivery lists, a shared parameter's updates, a block's header) is saved
/// before its first change in the delta into a per-entity slot: a part its
/// writer rewrites whole is moved aside (swapped with the slot, O(1)), the
/// others are copied into slots that keep their storage from one delta to
/// the next. Task-pool ranges and checkpoints are appended to flat logs.
/// Restoring swaps the parts back and replays the logs in reverse, so the
/// state is bit for bit the one before.
struct UndoLog {
  /// The log belongs to the latest delta: recorded while it runs (writers
  /// save what they overwrite only then), undoable after it; false after
  /// simulateFull() or an undo.
  bool live = false;
  /// One kind of saved part: the entities it was saved for in this delta,
  /// in saving order, and per entity the stamp of the delta that saved it.
  struct Saved {
    std::vector<uint32_t> stamps;
    std::vector<int32_t> list;
  };
  Saved fwdOuts, pairs, fwdLists, gradLists, held, shared, blocks;
  std::array<Saved *, 7> parts() {
    return {&fwdOuts, &pairs, &fwdLists, &gradLists, &held, &shared, &blocks};
  }
  uint32_t stamp = 0;
  /// The changed nodes (their devices), and those whose shape changed too
  /// (distinct nodes: no stamps needed).
  std::vector<int32_t> devicesOf, shapeOf;
  /// The slots the parts are saved in, per node, edge, shared parameter and
  /// block.
  std::vector<NodeGeom> nodeSlots;
  std::vector<EdgeData> edgeSlots;
  std::vector<SharedParam> sharedSlots;
  std::vector<Block> blockSlots;
  /// The old task range of each rebuilt block: [begin, begin + size) of
  /// each task array, predBegin up to its sentinel, predPool[pbegin,
  /// pbegin + psize).
  struct TaskRange {
    int32_t begin, size, pbegin, psize;
  };
  std::vector<TaskRange> ranges;
  std::vector<double> ends, durs, moved;
  std::vector<int32_t> resources, predBegins, preds;
  std::vector<uint8_t> kinds;
  /// The blocks the sweep recomputed without rebuilding them are those of
  /// [sweepFirst, sweepEnd) not rebuilt (`blocks`): their old ends, in
  /// block order, are sweptEnds[0, sweptUsed) (storage kept between deltas,
  /// sized to the task pool so that the sweep only bumps a pointer).
  int32_t sweepFirst = 0, sweepEnd = 0;
  std::vector<double> sweptEnds;
  size_t sweptUsed = 0;
  /// Overwritten checkpoints (block index; R values each).
  std::vector<int32_t> checkpoints;
  std::vector<double> checkpointValues;
  /// Whole-state scalars and per-device / per-resource vectors.
  std::vector<int64_t> memory;
  std::vector<double> finalEnd;
  int64_t comm = 0;
  int32_t poolSize = 0, predPoolSize = 0;
  /// Simulator-level state: the changed nodes' configs, the results.
  std::vector<int32_t> configNodes;
  std::vector<ParallelConfig> configs;
  double iterationSeconds = 0;
  int64_t commBytes = 0;

  void clearLogs() {
    for (Saved *p : parts())
      p->list.clear();
    devicesOf.clear();
    shapeOf.clear();
    ranges.clear();
    ends.clear();
    sweptUsed = 0;
    sweepFirst = sweepEnd = 0;
    durs.clear();
    moved.clear();
    resources.clear();
    predBegins.clear();
    preds.clear();
    kinds.clear();
    checkpoints.clear();
    checkpointValues.clear();
    configNodes.clear();
  }
};

} // namespace

struct Simulator::Impl {
  const OpGraph &graph;
  const Machine &machine;
  const CostModel &costs;
  const Strategy &strategy;
  int32_t N = 0, D = 0, R = 0, NB = 0;

  std::vector<Edge> edges;
  /// Per edge, whether the backward pass sends its tensor's gradient: the
  /// producer reads a parameter or a tensor whose gradient is needed (an
  /// RNN's initial state made from nothing trainable needs none).
  std::vector<uint8_t> gradNeeded;
  /// delta: per edge into a changing node, mayGroup under its old config.
  std::vector<uint8_t> mayGroupBefore;
  std::vector<NodeStatic> nstat;
  /// Per edge, the edges before it that read the same output of the same
  /// producer (by consumer, then input), and those after it.
  std::vector<std::vector<int32_t>> earlierReaders, laterReaders;
  std::vector<NodeGeom> geom;
  std::vector<EdgeData> edata; // per edge
  std::vector<SharedParam> sharedParams;
  std::vector<int32_t> syncBlock, sharedUpdBlock; // per shared parameter
  uint64_t versionCounter = 0;

  // Blocks (index = priority order).
  std::vector<Block> blocks;
  std::vector<uint8_t> blockKind;
  std::vector<int32_t> blockOwner; ///< node (F, B, U) or edge
  std::vector<int32_t> blockNode;  ///< node named in reports
  std::vector<int32_t> succBegin, succs;
  std::vector<int32_t> fwdTransferBlock, gradTransferBlock, forwardBlock,
      backwardBlock, updateBlock;

  // Task pool (struct of arrays). Task t's predecessors are
  // predPool[predBegin[t], predBegin[t + 1]): a block's lists are
  // contiguous and every block reserves one task slot past its capacity
  // for the sentinel. res[t] >= 0 is t's resource; ~o < 0 means the
  // resources predPool[o + 1 ..] (count predPool[o], after the block's
  // predecessor lists). Only end times are stored: start = max(ready, latest
  // end of the resources' previous tasks) is recomputed where needed.
  // A predecessor on t's own (single) resource is left out of the list: the
  // resource's chain already makes t wait for it.
  int32_t poolSize = 0, predPoolSize = 0;
  std::vector<double> dur, end, bytes;
  std::vector<int32_t> res, predBegin;
  std::vector<uint8_t> kind;
  std::vector<int32_t> predPool;

  // Sweep state.
  std::vector<double> cur, finalEnd, snapshots;
  std::vector<uint8_t> inputDirty, rebuild;
  int32_t pendingDirty = 0;

  /// Per device: what the blocks keep all iteration, then (at D + d) the
  /// sum of what its timeline may add (fitsForSure).
  std::vector<int64_t> memory;
  int64_t comm = 0;
  UndoLog undo;
  /// Machine::linkBetween for every ordered device pair (src * D + dst).
  std::vector<int32_t> linkTable;
  int32_t linkOf(int32_t src, int32_t dst) const {
    return linkTable[size_t(src) * D + dst];
  }
  int64_t processed = 0;

  // Build scratch.
  Stage stageMain;
  std::vector<int32_t> linkSlot, slotLink, pairSlot, lastSeen, bucketCount,
      bucketItems, keys, scratchDevs, scratchLinks, classOf, classMask,
      tileJoins;
  std::vector<int32_t> contribTask, contribDev, meets;
  /// buildSync: each contributor's backward block, and lastContributors()'s
  /// result; devLast (per device, -1 when unset) its last contributor.
  std::vector<int32_t> contribBlock, readerStart, order, lastOf, lastBegin,
      devLast, predDevs, touchedDevs;
  std::vector<std::vector<int32_t>> seenRegions; ///< per device
  /// buildForwardEdge: the slots of the pairs read from a reduce-scattered
  /// group's chunks, (pair, slot) in pair order.
  std::vector<std::pair<size_t, int32_t>> chunkSlots;
  /// scatterDimension's reads; combination()'s.
  std::vector<ChunkRead> chunkReads;
  std::vector<int32_t> scatterHolders, groupDevs, readers;
  /// buildGradientEdge's consumer groups of its edge and, to match them,
  /// of its tensor's other readers' edges (gradientGroups); tileOrder and
  /// tileSpecial are scratch.
  GradientGroups groups, siblingGroups;
  std::vector<int32_t> tileOrder;
  /// buildGradientEdge, per group: its ring task (local), and whether a
  /// later reader's edge of the tensor has a matching group, whose ring
  /// sums both (sameGroup).
  std::vector<int32_t> groupRing;
  std::vector<uint8_t> groupDeferred;
  /// buildGradientEdge: (group, global task) of the earlier readers'
  /// backward tasks whose partial sums a group's ring adds.
  std::vector<std::pair<int32_t, int32_t>> siblingPreds;
  /// buildGradientEdge: the transfer tasks of a reduce-scattered group's
  /// chunks to a producer tile outside the group, per pair
  /// [chunkTaskBegin[k], chunkTaskEnd[k]) of chunkTasks.
  std::vector<int32_t> chunkTasks, chunkTaskBegin, chunkTaskEnd;
  std::vector<uint8_t> tileSpecial;
  std::vector<Range> readerHull;   ///< per device, rank ranges
  std::vector<uint8_t> readerSeen; ///< per device
  std::vector<int64_t> slotBytes, recvBytes;
  std::vector<int64_t> groupDevices; ///< owner * D + device, sorted
  std::vector<uint64_t> masks, candMasks, dimMasks;
  std::vector<Range> distinctRanges;
  /// buildForwardEdge: pieces earlier readers moved.
  struct Held {
    int32_t tile, device;
    const Range *region;
    int32_t task;
  };
  std::vector<Held> held, heldSorted;
  /// buildGradientEdge: the gradient parts earlier readers of the tensor
  /// send to the members of a reduce-scattered group (task unused).
  std::vector<Held> sentGradients;
  /// findGathers: per producer tile its state, the part it sends, its
  /// receivers (a device mask) and gather.
  std::vector<int8_t> tileState;
  std::vector<Range> tileSent;
  std::vector<uint64_t> tileReceivers;
  std::vector<int32_t> tileGather;
  /// findGathers: the parts as Region.h's findAllGathers takes them, their
  /// tiles, and what it finds.
  std::vector<SentRegion> sentRegions;
  std::vector<int32_t> sentReceivers, sentTiles, gatherParts, gatherEnds,
      gatherDims, gatherScratch;
  /// buildGradientEdge: gather * Tc + consumer tile of each gather's pairs.
  std::vector<int64_t> gatherReaders;
  std::vector<int32_t> heldStart, heldFill;
  std::vector<int64_t> keyScratch;
  /// computeGeometry: one dimension's runs.
  std::vector<Range> dimRuns;
  /// buildSync's regions as boxes and the cells it synchronizes.
  std::vector<Box> syncBoxes, syncCells;
  std::vector<int64_t> cellBounds;

  Impl(const OpGraph &g, const Machine &m, const CostModel &c,
       const Strategy &s)
      : graph(g), machine(m), costs(c), strategy(s) {}

  //===--------------------------------------------------------------------===//
  // Setup
  //===--------------------------------------------------------------------===//

  void init() {
    N = static_cast<int32_t>(graph.nodes.size());
    D = machine.numDevices();
    R = D + machine.numLinks();
    nstat.resize(N);
    geom.resize(N);
    timeline.reset(D, 2 * N);
    live.resize(N);
    liveDirty.assign(N, 0);
    for (int32_t n = 0; n < N; ++n) {
      const Node &node = graph.nodes[n];
      NodeStatic &ns = nstat[n];
      double full = 0;
      for (const Operand &op : node.inputs) {
        full += double(graph.tensors[op.tensor].bytes());
        ns.ranks.push_back(static_cast<int32_t>(op.dims.size()));
      }
      for (const Operand &op : node.outputs) {
        full += double(graph.tensors[op.tensor].bytes());
        ns.ranks.push_back(static_cast<int32_t>(op.dims.size()));
      }
      ns.scale = node.bytes > 0 && full > 0 ? node.bytes / full : 1.0;
      ns.returnsOutput = graph.writesOutput(n);
      ns.lastReader = n;
      for (const Operand &op : node.outputs)
        ns.outTensorBytes += graph.tensors[op.tensor].bytes();
      ns.outElementBytes =
          node.outputs.empty()
              ? 4
              : graph.tensors[node.outputs[0].tensor].elementBytes;
      for (int32_t i = 0, e = static_cast<int32_t>(node.inputs.size()); i < e;
           ++i) {
        const Operand &op = node.inputs[i];
        uint32_t mask = 0;
        for (const DimAccess &da : op.dims)
          if (!da.whole)
            for (const LoopTerm &term : da.terms)
              if (term.coefficient != 0)
                mask |= 1u << term.loop;
        for (const LoopAt &at : op.onlyAt)
          mask |= 1u << at.loop;
        ns.inputLoops.push_back(mask);
        ns.paramLoops.push_back(graph.tensors[op.tensor].isParameter ? mask
                                                                     : 0);
        ns.sharedOf.push_back(-1);
        int32_t t = op.tensor;
        int32_t p = graph.tensors[t].producer;
        if (p < 0)
          continue;
        const Node &prod = graph.nodes[p];
        int32_t o = 0;
        while (prod.outputs[o].tensor != t)
          ++o;
        int32_t id = static_cast<int32_t>(edges.size());
        edges.push_back({p, n, i, o});
        nstat[p].outEdges.push_back(id);
        nstat[p].lastReader = n; // nodes in order: the last one stays
        ns.inEdges.push_back(id);
      }
    }
    for (int32_t n = 0; n < N; ++n)
      nstat[nstat[n].lastReader].lastReadHere.push_back(n);
    {
      std::vector<uint8_t> needs(graph.tensors.size(), 0);
      for (int32_t n = 0; n < N; ++n) {
        bool any = false;
        for (const Operand &in : graph.nodes[n].inputs)
          any |= graph.tensors[in.tensor].isParameter || needs[in.tensor];
        for (const Operand &out : graph.nodes[n].outputs)
          needs[out.tensor] = any;
        nstat[n].gradNeeded = any;
      }
      gradNeeded.resize(edges.size());
      mayGroupBefore.assign(edges.size(), 0);
      for (size_t e = 0; e < edges.size(); ++e)
        gradNeeded[e] =
            needs[graph.nodes[edges[e].consumer].inputs[edges[e].input].tensor];
    }
    // Shared parameters: read by more than one (node, input).
    {
      std::vector<std::vector<std::pair<int32_t, int32_t>>> readers(
          graph.tensors.size());
      for (int32_t n = 0; n < N; ++n)
        for (int32_t i = 0,
                     e = static_cast<int32_t>(graph.nodes[n].inputs.size());
             i < e; ++i) {
          int32_t t = graph.nodes[n].inputs[i].tensor;
          if (graph.tensors[t].isParameter)
            readers[t].push_back({n, i});
        }
      for (size_t t = 0; t < readers.size(); ++t) {
        if (readers[t].size() < 2)
          continue;
        int32_t id = static_cast<int32_t>(sharedParams.size());
        SharedParam sp;
        sp.tensor = static_cast<int32_t>(t);
        sp.readers = readers[t];
        sp.minReader = readers[t][0].first;
        for (auto &r : readers[t]) {
          nstat[r.first].sharedOf[r.second] = id;
          std::vector<int32_t> &sh = nstat[r.first].shared;
          if (std::find(sh.begin(), sh.end(), id) == sh.end())
            sh.push_back(id);
        }
        sharedParams.push_back(std::move(sp));
      }
    }
    int32_t S = static_cast<int32_t>(sharedParams.size());
    syncBlock.assign(S, -1);
    sharedUpdBlock.assign(S, -1);
    int32_t E = static_cast<int32_t>(edges.size());
    edata.resize(E);
    fwdTransferBlock.assign(E, -1);
    gradTransferBlock.assign(E, -1);
    forwardBlock.assign(N, -1);
    backwardBlock.assign(N, -1);
    updateBlock.assign(N, -1);
    auto addBlock = [&](BlockKind k, int32_t owner, int32_t node) {
      blockKind.push_back(k);
      blockOwner.push_back(owner);
      blockNode.push_back(node);
      return static_cast<int32_t>(blockKind.size()) - 1;
    };
    for (int32_t n = 0; n < N; ++n) {
      for (int32_t e : nstat[n].inEdges)
        fwdTransferBlock[e] = addBlock(FwdTransfers, e, n);
      forwardBlock[n] = addBlock(ForwardBlock, n, n);
    }
    for (int32_t n = N - 1; n >= 0; --n) {
      for (int32_t e : nstat[n].outEdges)
        gradTransferBlock[e] = addBlock(GradTransfers, e, edges[e].consumer);
      backwardBlock[n] = addBlock(BackwardBlock, n, n);
      // A shared parameter's sync follows the backward task of its first
      // reader, the last of its readers to run backward.
      for (int32_t p = 0; p < S; ++p)
        if (sharedParams[p].minReader == n)
          syncBlock[p] = addBlock(SyncBlock, p, n);
    }
    for (int32_t n = N - 1; n >= 0; --n) {
      updateBlock[n] = addBlock(UpdateBlock, n, n);
      for (int32_t p = 0; p < S; ++p)
        if (sharedParams[p].minReader == n)
          sharedUpdBlock[p] = addBlock(SharedUpdBlock, p, n);
    }
    NB = static_cast<int32_t>(blockKind.size());
    blocks.resize(NB);
    earlierReaders.assign(E, {});
    laterReaders.assign(E, {});
    for (int32_t n = 0; n < N; ++n) {
      const std::vector<int32_t> &out = nstat[n].outEdges;
      for (size_t i = 0; i < out.size(); ++i)
        for (size_t j = i + 1; j < out.size(); ++j)
          if (edges[out[i]].output == edges[out[j]].output) {
            earlierReaders[out[j]].push_back(out[i]);
            laterReaders[out[i]].push_back(out[j]);
          }
    }
    // Static successors: the blocks that read a block's tasks.
    std::vector<std::vector<int32_t>> succ(NB);
    for (int32_t e = 0; e < E; ++e) {
      int32_t p = edges[e].producer, c = edges[e].consumer;
      succ[fwdTransferBlock[e]].push_back(forwardBlock[c]);
      succ[forwardBlock[p]].push_back(fwdTransferBlock[e]);
      succ[forwardBlock[p]].push_back(forwardBlock[c]); // same-device pairs
      succ[gradTransferBlock[e]].push_back(backwardBlock[p]);
      succ[backwardBlock[c]].push_back(gradTransferBlock[e]);
      succ[backwardBlock[c]].push_back(backwardBlock[p]);
      // A later reader on the same device waits for this edge's transfers;
      // the last reader's gradient ring may wait for this one's backward
      // tasks (sameGroup).
      for (int32_t later : laterReaders[e]) {
        succ[fwdTransferBlock[e]].push_back(
            forwardBlock[edges[later].consumer]);
        succ[backwardBlock[c]].push_back(gradTransferBlock[later]);
      }
    }
    for (int32_t n = 0; n < N; ++n) {
      succ[forwardBlock[n]].push_back(backwardBlock[n]);
      succ[backwardBlock[n]].push_back(updateBlock[n]);
    }
    for (int32_t p = 0; p < S; ++p) {
      for (auto &r : sharedParams[p].readers) {
        succ[backwardBlock[r.first]].push_back(syncBlock[p]);
        succ[backwardBlock[r.first]].push_back(sharedUpdBlock[p]);
      }
      succ[syncBlock[p]].push_back(sharedUpdBlock[p]);
    }
    succBegin.assign(NB + 1, 0);
    for (int32_t b = 0; b < NB; ++b) {
      std::sort(succ[b].begin(), succ[b].end());
      succ[b].erase(std::unique(succ[b].begin(), succ[b].end()), succ[b].end());
      for (int32_t s : succ[b]) {
        (void)s;
        assert(s > b && "blocks must depend on earlier blocks only");
      }
      succBegin[b + 1] = succBegin[b] + static_cast<int32_t>(succ[b].size());
      succs.insert(succs.end(), succ[b].begin(), succ[b].end());
    }
    cur.assign(R, 0.0);
    finalEnd.assign(R, 0.0);
    snapshots.assign(size_t((NB + kCheckpoint - 1) / kCheckpoint + 1) * R,
                     0.0);
    inputDirty.assign(NB, 0);
    rebuild.assign(NB, 0);
    undo.fwdOuts.stamps.assign(N, 0);
    for (UndoLog::Saved *p :
         {&undo.pairs, &undo.fwdLists, &undo.gradLists, &undo.held})
      p->stamps.assign(E, 0);
    undo.shared.stamps.assign(S, 0);
    undo.blocks.stamps.assign(NB, 0);
    undo.nodeSlots.resize(N);
    undo.edgeSlots.resize(E);
    undo.sharedSlots.resize(S);
    undo.blockSlots.resize(NB);
    memory.assign(2 * size_t(D), 0);
    linkSlot.assign(machine.numLinks(), -1);
    linkTable.assign(size_t(D) * D, -1);
    devLast.assign(D, -1);
    seenRegions.assign(D, {});
    for (int32_t a = 0; a < D; ++a)
      for (int32_t b = 0; b < D; ++b)
        if (a != b)
          linkTable[size_t(a) * D + b] = machine.linkBetween(a, b);
  }

  //===--------------------------------------------------------------------===//
  // Node geometry
  //===--------------------------------------------------------------------===//

  void computeGeometry(int32_t n) {
    const Node &node = graph.nodes[n];
    const NodeStatic &ns = nstat[n];
    const ParallelConfig &cfg = strategy.configs[n];
    NodeGeom &g = geom[n];
    int32_t T = cfg.numTiles();
    int32_t L = node.numLoops();
    int32_t NI = static_cast<int32_t>(node.inputs.size());
    int32_t NO = static_cast<int32_t>(node.outputs.size());
    // A delta moves the parts it rewrites aside (UndoLog; nodes are distinct).
    bool logging = undo.live;
    if (logging) {
      g.swapDevices(undo.nodeSlots[n]);
      undo.devicesOf.push_back(n);
    }
    g.devices.assign(cfg.devices.begin(), cfg.devices.end());
    // Everything else depends on the degrees only.
    if (g.version != 0 && g.degrees == cfg.degrees)
      return;
    if (logging) {
      g.swapShape(undo.nodeSlots[n]);
      undo.shapeOf.push_back(n);
    }
    g.degrees.assign(cfg.degrees.begin(), cfg.degrees.end());
    g.version = ++versionCounter;
    g.tiles = T;
    g.opOffset.resize(NI + NO);
    int32_t total = 0;
    for (int32_t k = 0; k < NI + NO; ++k) {
      g.opOffset[k] = total;
      total += T * ns.ranks[k];
    }
    g.regions.resize(total);
    g.fwd.resize(T);
    g.bwd.resize(T);
    g.kept.resize(T);
    g.outBytes.resize(T);
    g.act.resize(T);
    g.paramGrad.resize(T);
    g.owner.resize(T);
    g.outExact.assign(NO, 0);
    g.runOffset.assign(NO, 0);
    g.runBegin.clear();
    g.runs.clear();
    for (int32_t o = 0; o < NO; ++o) {
      for (const DimAccess &da : node.outputs[o].dims)
        if (!da.whole && da.terms.size() > 1)
          g.outExact[o] = 1;
      g.runOffset[o] = static_cast<int32_t>(g.runBegin.size());
      if (g.outExact[o])
        g.runBegin.resize(g.runBegin.size() + size_t(T) * ns.ranks[NI + o]);
    }
    g.runCount.assign(g.runBegin.size(), 0);
    Range loopRanges[kMaxRank];
    int64_t chunk[kMaxRank], lo[kMaxRank], hi[kMaxRank];
    int32_t coords[kMaxRank];
    int32_t reduction = 1, ownerStride[kMaxRank];
    {
      int32_t stride = 1;
      for (int32_t l = L - 1; l >= 0; --l) {
        chunk[l] = node.extents[l] / cfg.degrees[l];
        coords[l] = 0;
        bool red = node.loopKinds[l] == LoopKind::Reduction;
        if (red)
          reduction *= cfg.degrees[l];
        ownerStride[l] = red ? 0 : stride;
        stride *= cfg.degrees[l];
      }
    }
    g.reduction = reduction;
    double tileFlops = node.flops / T;
    double lastBytes = -1;
    TaskCosts c;
    for (int32_t t = 0; t < T; ++t) {
      int32_t own = 0;
      for (int32_t l = 0; l < L; ++l) {
        lo[l] = coords[l] * chunk[l];
        hi[l] = lo[l] + chunk[l];
        loopRanges[l] = {lo[l], hi[l]};
        own += coords[l] * ownerStride[l];
      }
      g.owner[t] = own;
      int64_t tileBytes = 0, kept = 0, outB = 0, paramGrad = 0;
      for (int32_t k = 0; k < NI + NO; ++k) {
        const Operand &op = k < NI ? node.inputs[k] : node.outputs[k - NI];
        const Tensor &tensor = graph.tensors[op.tensor];
        int32_t rank = ns.ranks[k];
        Range *r = g.regions.data() + g.opOffset[k] + size_t(t) * rank;
        int64_t vol = 1;
        bool read = op.onlyAt.empty() || op.readBy(lo, hi);
        for (int32_t d = 0; d < rank; ++d) {
          const DimAccess &access = op.dims[d];
          if (!read) { // not read by this tile (Operand::onlyAt)
            r[d] = {0, 0};
            vol = 0;
            continue;
          }
          int64_t extent = tensor.shape[d];
          if (access.whole) {
            r[d] = {0, extent};
            vol *= extent;
            continue;
          }
          int64_t a = access.constant, last = access.constant;
          for (const LoopTerm &term : access.terms) {
            if (term.coefficient >= 0) {
              a += term.coefficient * lo[term.loop];
              last += term.coefficient * (hi[term.loop] - 1);
            } else {
              a += term.coefficient * (hi[term.loop] - 1);
              last += term.coefficient * lo[term.loop];
            }
          }
          a = std::max<int64_t>(a, 0);
          int64_t h = std::min<int64_t>(last + 1, extent);
          if (h < a)
            h = a;
          r[d] = {a, h};
          vol *= h - a;
        }
        if (k >= NI && g.outExact[k - NI]) {
          // Runs per dimension, written in order of (tile, dimension).
          int32_t i = g.runOffset[k - NI] + t * rank;
          vol = 1;
          for (int32_t d = 0; d < rank; ++d, ++i) {
            g.runBegin[i] = static_cast<int32_t>(g.runs.size());
            const DimAccess &access = op.dims[d];
            int64_t size = r[d].size();
            if (access.whole || access.terms.size() <= 1) {
              g.runs.push_back(r[d]);
            } else {
              exactDimRuns(access, tensor.shape[d], loopRanges, kMaxRuns,
                           dimRuns);
              size = 0;
              for (const Range &run : dimRuns)
                size += run.size();
              g.runs.insert(g.runs.end(), dimRuns.begin(), dimRuns.end());
            }
            g.runCount[i] = static_cast<int32_t>(g.runs.size()) - g.runBegin[i];
            vol *= size;
          }
        }
        int64_t rb = vol * tensor.elementBytes;
        tileBytes += rb;
        if (k < NI) {
          if (tensor.isParameter) {
            if (ns.sharedOf[k] < 0) { // shared: counted by its sync block
              kept += rb;
              paramGrad += rb;
            }
          }
          else if (tensor.producer < 0)
            kept += rb; // graph input shard
        } else {
          outB += rb;
        }
      }
      g.kept[t] = kept;
      g.paramGrad[t] = paramGrad;
      g.outBytes[t] = outB;
      g.act[t] = outB;
      if (node.savedBytes > 0 && ns.outTensorBytes > 0)
        g.act[t] += static_cast<int64_t>(
            double(node.savedBytes) * double(outB) / double(ns.outTensorBytes));
      double scaled = double(tileBytes) * ns.scale;
      if (scaled != lastBytes) {
        int64_t tileExtents[kMaxRank];
        for (int32_t l = 0; l < L; ++l)
          tileExtents[l] = chunk[l];
        c = costs.tileCosts(graph, node, tileExtents, tileFlops, scaled);
        lastBytes = scaled;
      }
      g.fwd[t] = c.forward;
      g.bwd[t] = c.backward;
      for (int32_t l = L - 1; l >= 0; --l) {
        if (++coords[l] < cfg.degrees[l])
          break;
        coords[l] = 0;
      }
    }
    // An output's tile regions are disjoint when every split loop indexes
    // one of its dimensions alone.
    g.outDisjoint.assign(NO, 1);
    for (int32_t o = 0; o < NO; ++o) {
      const Operand &op = node.outputs[o];
      for (int32_t l = 0; l < L; ++l) {
        if (cfg.degrees[l] == 1)
          continue;
        bool found = false;
        for (const DimAccess &da : op.dims)
          if (!da.whole && da.terms.size() == 1 && da.terms[0].loop == l &&
              da.terms[0].coefficient != 0)
            found = true;
        if (!found) {
          g.outDisjoint[o] = 0;
          break;
        }
      }
    }
  }

  //===--------------------------------------------------------------------===//
  // Pool
  //===--------------------------------------------------------------------===//

  void growPools() {
    if (static_cast<int32_t>(dur.size()) < poolSize) {
      size_t n = std::max<size_t>(size_t(poolSize), dur.size() * 3 / 2);
      dur.resize(n);
      end.resize(n);
      bytes.resize(n);
      res.resize(n);
      predBegin.resize(n);
      kind.resize(n);
    }
    if (static_cast<int32_t>(predPool.size()) < predPoolSize)
      predPool.resize(
          std::max<size_t>(size_t(predPoolSize), predPool.size() * 3 / 2));
  }

  /// Copies `st` into block b's ranges (in place when it fits).
  void commit(int32_t b, const Stage &st) {
    Block &bl = blocks[b];
    int32_t n = st.size();
    int32_t np = static_cast<int32_t>(st.preds.size());
    int32_t nl = static_cast<int32_t>(st.resLists.size());
    if (bl.begin < 0 || n > bl.cap) {
      bl.cap = std::max(n, bl.begin < 0 ? bl.cap : 2 * bl.cap);
      bl.begin = poolSize;
      poolSize += bl.cap + 1; // + the sentinel
    }
    if (bl.pbegin < 0 || np + nl > bl.pcap) {
      bl.pcap = std::max(np + nl, bl.pbegin < 0 ? bl.pcap : 2 * bl.pcap);
      bl.pbegin = predPoolSize;
      predPoolSize += bl.pcap;
    }
    growPools();
    bl.size = n;
    int32_t base = bl.begin;
    int32_t *pp = predPool.data() + bl.pbegin;
    // Predecessors, without those on the task's own resource (see above).
    int32_t kept = 0;
    for (int32_t i = 0; i < n; ++i) {
      predBegin[base + i] = bl.pbegin + kept;
      int32_t r = st.res[i];
      int32_t to = i + 1 < n ? st.predStart[i + 1] : np;
      for (int32_t k = st.predStart[i]; k < to; ++k) {
        int32_t p = st.preds[k];
        int32_t pr = p >= 0 ? res[p] : st.res[~p];
        if (r >= 0 && pr == r)
          continue;
        pp[kept++] = p >= 0 ? p : base + ~p;
      }
    }
    predBegin[base + n] = bl.pbegin + kept;
    std::copy(st.resLists.begin(), st.resLists.end(), pp + kept);
    bl.psize = kept + nl;
    int32_t lists = bl.pbegin + kept;
    for (int32_t i = 0; i < n; ++i) {
      int32_t t = base + i;
      dur[t] = st.dur[i];
      bytes[t] = st.bytes[i];
      int32_t r = st.res[i];
      res[t] = r >= 0 ? r : ~(lists + ~r);
      kind[t] = st.kind[i];
    }
  }

  /// Latest end of t's predecessors (0 without any).
  double readyOf(int32_t t) const {
    double r = 0;
    for (int32_t k = predBegin[t]; k < predBegin[t + 1]; ++k)
      r = end[predPool[k]] > r ? end[predPool[k]] : r;
    return r;
  }

  /// The resources of a task with res[t] < 0: [first, first + count).
  const int32_t *resourceList(int32_t t, int32_t &count) const {
    const int32_t *l = predPool.data() + ~res[t];
    count = l[0];
    return l + 1;
  }

  /// Memory per device at its peak: what the blocks charge (kept through
  /// the iteration: parameters, gradients, graph inputs, received regions,
  /// graph outputs) plus the most that activations and activation
  /// gradients hold at once over the step in the program's order: F(0..N-1)
  /// at positions 0..N-1, then B(N-1..0) at positions N..2N-1 (B(n) at
  /// 2N-1-n), kept per device in `timeline`:
  ///  - A node's activations (NodeGeom::act) live from F(n) through B(n).
  ///    A recomputed node's die after its last forward reader and live
  ///    again from the backward task that first needs them, `again(n)`:
  ///    the last reader's, or an earlier one where a recomputed reader's
  ///    recomputation reads them (the training step copies a recomputed op
  ///    before its first backward reader, with the recomputed ops it reads).
  ///  - The gradient of a node's outputs (where some parameter is upstream)
  ///    lives from the backward task of its last reader, which first writes
  ///    it, through B(n) (the seed of an output nobody reads: B(n) only).
  ///  - The gradients of the parameters a node reads live while B(n) runs
  ///    (then their all-reduce and update; a shared parameter's, kept by
  ///    its sync block, all iteration).
  /// A simulation marks the nodes it changed (markLive); the first query
  /// after it moves their intervals (syncLive).
  void peakPerDevice(std::vector<int64_t> &out) const {
    syncLive();
    out.assign(memory.begin(), memory.begin() + D);
    for (int32_t d = 0; d < D; ++d)
      out[d] += timeline.peak(d);
  }

  /// Positions on the timeline: F(n) at n, B(n) at 2N-1-n.
  int32_t forwardAt(int32_t n) const { return n; }
  int32_t backwardAt(int32_t n) const { return 2 * N - 1 - n; }

  /// What tile t of node n holds between its tasks: its activations (but a
  /// graph output's, which `memory` keeps all iteration), its outputs'
  /// gradient (where one is needed) and its parameters' gradients.
  struct LiveBytes {
    int64_t act = 0, grad = 0, paramGrad = 0;
  };
  LiveBytes liveBytes(int32_t n, int32_t t) const {
    const NodeGeom &g = geom[n];
    const NodeStatic &ns = nstat[n];
    return {ns.returnsOutput ? 0 : g.act[t], ns.gradNeeded ? g.outBytes[t] : 0,
            g.paramGrad[t]};
  }

  /// Calls emit(position, bytes) for the ends of the intervals a tile of
  /// node n holding `b` occupies (bytes alive from the position on; the
  /// end of an interval takes them back), its output recomputed and alive
  /// again from B(again) (-1: not recomputed).
  template <typename Emit>
  void forEachEnd(int32_t n, const LiveBytes &b, int32_t again,
                  Emit emit) const {
    int32_t last = nstat[n].lastReader;
    emit(forwardAt(n), b.act);
    if (again >= 0) {
      emit(forwardAt(last) + 1, -b.act);
      emit(backwardAt(again), b.act);
    }
    emit(backwardAt(last), b.grad);
    emit(backwardAt(n), b.paramGrad);
    emit(backwardAt(n) + 1, -(b.act + b.grad + b.paramGrad));
  }

  /// What a node has in `timeline`, per tile (to take it out again: the
  /// geometry may have changed since, or been swapped back by an undo).
  struct LiveIntervals {
    /// The backward task its recomputation is alive again from, or -1: not
    /// recomputed.
    int32_t again = -1;
    std::vector<int32_t> devices;
    std::vector<LiveBytes> bytes;
  };
  mutable MemoryTimeline timeline;
  mutable std::vector<LiveIntervals> live;
  mutable std::vector<uint8_t> liveDirty;
  /// A full simulation changed every node: the next query refills.
  mutable bool liveRefill = false;
  /// The dirty nodes, a max-heap: consumers before producers, whose
  /// again() depends on their consumers'.
  mutable std::vector<int32_t> liveQueue;

  void markLive(int32_t n) const {
    if (liveDirty[n])
      return;
    liveDirty[n] = 1;
    liveQueue.push_back(n);
    std::push_heap(liveQueue.begin(), liveQueue.end());
  }

  void syncLive() const {
    if (liveRefill) {
      // After a full simulation (which every delta follows): every node's
      // intervals from scratch.
      timeline.clear();
      for (int32_t n = N - 1; n >= 0; --n) {
        recordLive(n, againOf(n));
        placeLive(n, 1, /*refill=*/true);
      }
      timeline.build();
      for (int32_t n : liveQueue)
        liveDirty[n] = 0;
      liveQueue.clear();
      liveRefill = false;
    }
    while (!liveQueue.empty()) {
      std::pop_heap(liveQueue.begin(), liveQueue.end());
      int32_t n = liveQueue.back();
      liveQueue.pop_back();
      liveDirty[n] = 0;
      int32_t before = live[n].again, a = againOf(n);
      if (!moveLive(n, a)) {
        placeLive(n, -1);
        recordLive(n, a);
        placeLive(n, 1);
      }
      if (a != before)
        for (int32_t e : nstat[n].inEdges)
          if (recomputes(edges[e].producer))
            markLive(edges[e].producer);
    }
  }

  /// The backward task from which node n's recomputed output is alive again
  /// (-1: not recomputed), from its consumers' recorded ones.
  int32_t againOf(int32_t n) const {
    if (!recomputes(n))
      return -1;
    int32_t a = nstat[n].lastReader;
    for (int32_t e : nstat[n].outEdges)
      a = std::max(a, live[edges[e].consumer].again);
    return a;
  }

  /// Where node n's tiles stay on their devices (recomputation toggled,
  /// bytes changed, or a change undone before anyone asked): moves only the
  /// ends that changed, and records the new intervals. False where the
  /// tiles move.
  bool moveLive(int32_t n, int32_t again) const {
    const NodeGeom &g = geom[n];
    LiveIntervals &l = live[n];
    if (l.devices.size() != size_t(g.tiles) ||
        !std::equal(l.devices.begin(), l.devices.end(), g.devices.begin()))
      return false;
    for (int32_t t = 0; t < g.tiles; ++t) {
      // The old ends taken back and the new ones added, summed per
      // position (at most 12 ends).
      std::array<std::pair<int32_t, int64_t>, 12> ends;
      int32_t k = 0;
      auto add = [&](int32_t position, int64_t bytes) {
        int32_t i = 0;
        while (i < k && ends[i].first != position)
          ++i;
        if (i == k)
          ends[k++] = {position, 0};
        ends[i].second += bytes;
      };
      LiveBytes now = liveBytes(n, t);
      forEachEnd(n, l.bytes[t], l.again,
                 [&](int32_t p, int64_t b) { add(p, -b); });
      forEachEnd(n, now, again, add);
      for (int32_t i = 0; i < k; ++i)
        timeline.addFrom(g.devices[t], ends[i].first, ends[i].second);
      l.bytes[t] = now;
    }
    l.again = again;
    return true;
  }

  void recordLive(int32_t n, int32_t again) const {
    const NodeGeom &g = geom[n];
    LiveIntervals &l = live[n];
    l.again = again;
    l.devices.assign(g.devices.begin(), g.devices.begin() + g.tiles);
    l.bytes.resize(g.tiles);
    for (int32_t t = 0; t < g.tiles; ++t)
      l.bytes[t] = liveBytes(n, t);
  }

  /// Adds (sign 1) or removes (-1) node n's recorded intervals (refill:
  /// without the timeline's sums, for build()).
  void placeLive(int32_t n, int64_t sign, bool refill = false) const {
    const LiveIntervals &l = live[n];
    for (size_t t = 0; t < l.devices.size(); ++t)
      forEachEnd(n, l.bytes[t], l.again, [&](int32_t p, int64_t b) {
        if (refill)
          timeline.addFromUnsummed(l.devices[t], p, sign * b);
        else
          timeline.addFrom(l.devices[t], p, sign * b);
      });
  }

  /// The task at a timeline position: node n's forward (false) or backward
  /// (true) task.
  std::pair<int32_t, bool> taskAt(int32_t position) const {
    if (position < N)
      return {position, false};
    return {2 * N - 1 - position, true};
  }

  /// Whether node n's config recomputes its output (one the graph returns
  /// is kept anyway).
  bool recomputes(int32_t n) const {
    return strategy.configs[n].recompute && !nstat[n].returnsOutput;
  }
  mutable std::vector<int64_t> peakScratchOut;

  /// Whether every device is within `capacity` even if all activations and
  /// gradients were alive at once (memory[D + d] sums them): then the
  /// timeline need not catch up with the changed nodes.
  bool fitsForSure(int64_t capacity) const {
    for (int32_t d = 0; d < D; ++d)
      if (memory[d] + memory[D + d] > capacity)
        return false;
    return true;
  }

  /// Charges `b` bytes to `device` (D + device: to its timeline's bound).
  void addMemory(Block &bl, int32_t device, int64_t b) {
    if (b == 0)
      return;
    bl.memory.push_back({device, b});
    memory[device] += b;
  }

  void dropAccounting(Block &bl) {
    for (auto &m : bl.memory)
      memory[m.first] -= m.second;
    bl.memory.clear();
    comm -= bl.comm;
    bl.comm = 0;
  }

  int32_t beginOf(int32_t b) const { return blocks[b].begin; }

  /// Slot of `link` among the transfers being built (new slots get bytes 0
  /// and `words` zero mask words).
  int32_t slotFor(int32_t link, size_t words) {
    int32_t s = linkSlot[link];
    return s >= 0 ? s : newSlot(link, words);
  }
  __attribute__((noinline)) int32_t newSlot(int32_t link, size_t words) {
    int32_t s = static_cast<int32_t>(slotLink.size());
    linkSlot[link] = s;
    slotLink.push_back(link);
    slotBytes.push_back(0);
    masks.resize(masks.size() + words, 0);
    return s;
  }
  void resetSlots() {
    for (int32_t l : slotLink)
      linkSlot[l] = -1;
    slotLink.clear();
    slotBytes.clear();
    masks.clear();
  }
  double linkTime(int32_t link, int64_t nbytes) const {
    return machine.linkLatency(link) +
           double(nbytes) / machine.linkBandwidth(link);
  }

  //===--------------------------------------------------------------------===//
  // Block builders
  //===--------------------------------------------------------------------===//

  /// Intersecting (producer tile, consumer tile) pairs of edge e, consumer
  /// tile major.
  void computePairs(int32_t e) {
    const Edge &ed = edges[e];
    const NodeGeom &gp = geom[ed.producer], &gc = geom[ed.consumer];
    int32_t NIp = static_cast<int32_t>(graph.nodes[ed.producer].inputs.size());
    int32_t rank = nstat[ed.consumer].ranks[ed.input];
    int32_t opP = NIp + ed.output, opC = ed.input;
    EdgeData &pl = edata[e];
    if (pl.verP == gp.version && pl.verC == gc.version)
      return;
    if (undo.live && firstSave(undo.pairs, e))
      pl.swapPairs(undo.edgeSlots[e]);
    pl.verP = gp.version;
    pl.verC = gc.version;
    pl.a.clear();
    pl.b.clear();
    pl.vol.clear();
    int32_t Tp = gp.tiles, Tc = gc.tiles;
    bool exact = gp.outExact[ed.output];
    // Fast path: identical partitions into disjoint regions.
    if (Tp == Tc && gp.outDisjoint[ed.output] && !exact) {
      bool same = true;
      for (int32_t t = 0; t < Tp && same; ++t) {
        const Range *P = gp.region(opP, t, rank), *C = gc.region(opC, t, rank);
        for (int32_t d = 0; d < rank; ++d)
          if (!(P[d] == C[d])) {
            same = false;
            break;
          }
      }
      if (same) {
        for (int32_t t = 0; t < Tp; ++t) {
          const Range *P = gp.region(opP, t, rank);
          int64_t v = 1;
          for (int32_t d = 0; d < rank; ++d)
            v *= P[d].size();
          if (v == 0)
            continue;
          pl.a.push_back(t);
          pl.b.push_back(t);
          pl.vol.push_back(v);
        }
        return;
      }
    }
    // Per dimension, the producer tiles meeting each distinct consumer range
    // (bit masks over producer tiles); a consumer tile meets the
    // intersection of its dimensions' masks.
    size_t words = size_t(Tp + 63) / 64;
    candMasks.assign(size_t(Tc) * words, ~uint64_t(0));
    if (Tp % 64)
      for (int32_t b = 0; b < Tc; ++b)
        candMasks[size_t(b) * words + words - 1] =
            (uint64_t(1) << (Tp % 64)) - 1;
    for (int32_t d = 0; d < rank; ++d) {
      distinctRanges.clear();
      dimMasks.clear();
      for (int32_t b = 0; b < Tc; ++b) {
        Range c = gc.region(opC, b, rank)[d];
        size_t j = 0;
        while (j < distinctRanges.size() && !(distinctRanges[j] == c))
          ++j;
        if (j == distinctRanges.size()) {
          distinctRanges.push_back(c);
          dimMasks.resize(dimMasks.size() + words, 0);
          uint64_t *m = dimMasks.data() + j * words;
          for (int32_t a = 0; a < Tp; ++a) {
            const Range &P = gp.region(opP, a, rank)[d];
            if (std::min(P.hi, c.hi) > std::max(P.lo, c.lo))
              m[a / 64] |= uint64_t(1) << (a % 64);
          }
        }
        const uint64_t *m = dimMasks.data() + j * words;
        uint64_t *cm = candMasks.data() + size_t(b) * words;
        for (size_t w = 0; w < words; ++w)
          cm[w] &= m[w];
      }
    }
    size_t count = 0;
    for (uint64_t m : candMasks)
      count += static_cast<size_t>(__builtin_popcountll(m));
    pl.a.resize(count);
    pl.b.resize(count);
    pl.vol.resize(count);
    int32_t *pa = pl.a.data(), *pb = pl.b.data();
    int64_t *pv = pl.vol.data();
    size_t k = 0;
    for (int32_t b = 0; b < Tc; ++b) {
      const Range *C = gc.region(opC, b, rank);
      const uint64_t *cm = candMasks.data() + size_t(b) * words;
      for (size_t w = 0; w < words; ++w)
        for (uint64_t m = cm[w]; m; m &= m - 1, ++k) {
          int32_t a = static_cast<int32_t>(w * 64) + __builtin_ctzll(m);
          int64_t v = 1;
          if (exact) {
            v = gp.exactOverlap(ed.output, a, rank, C);
          } else {
            const Range *P = gp.region(opP, a, rank);
            for (int32_t d = 0; d < rank; ++d)
              v *= std::min(P[d].hi, C[d].hi) - std::max(P[d].lo, C[d].lo);
          }
          pa[k] = a;
          pb[k] = b;
          pv[k] = v;
        }
    }
    if (exact) { // pairs whose bounding boxes meet but whose elements do not
      size_t kept = 0;
      for (size_t i = 0; i < k; ++i)
        if (pv[i] > 0) {
          pa[kept] = pa[i];
          pb[kept] = pb[i];
          pv[kept++] = pv[i];
        }
      pl.a.resize(kept);
      pl.b.resize(kept);
      pl.vol.resize(kept);
    }
  }

  /// The ring all-gathers among edge e's point-to-point pairs (pairSlot
  /// kPending) into edata[e] (gatherOf, gatherStart, gatherTiles,
  /// gatherBytes), by the rule soap-form-collectives applies to the
  /// partitioned program's transfers (Region.h, findAllGathers): a group of
  /// devices that each send one equal chunk of a region to all the others
  /// is ONE all-gather (NCCL) instead of n (n - 1) sends and receives. The
  /// parts are the producer tiles' (one part each: a tile that sends
  /// different parts takes no part in a gather). Like the pass, which looks at the
  /// transfers made for one reader (a chain), this looks at what moves for
  /// this edge: a device to which an earlier reader already moved the part
  /// is no receiver. Two consumer tiles on one device receive the chunk
  /// once, as the partitioner moves a region to a device once.
  void findGathers(int32_t e) {
    const Edge &ed = edges[e];
    const NodeGeom &gp = geom[ed.producer], &gc = geom[ed.consumer];
    EdgeData &pl = edata[e];
    int32_t Tp = gp.tiles;
    int32_t rank = nstat[ed.consumer].ranks[ed.input];
    int32_t opP = static_cast<int32_t>(graph.nodes[ed.producer].inputs.size()) +
                  ed.output;
    // Per producer tile: 0 sends nothing, 1 sends one part (tileSent), 2
    // is not a gather's part; its receivers, a bit mask over devices.
    size_t words = size_t(D + 63) / 64;
    tileState.assign(Tp, 0);
    tileSent.resize(size_t(Tp) * rank);
    tileReceivers.assign(size_t(Tp) * words, 0);
    int32_t numParts = 0;
    for (size_t k = 0; k < pl.size(); ++k) {
      int32_t a = pl.a[k];
      if (pairSlot[k] != kPending || tileState[a] == 2)
        continue; // on the device, already moved there, or no part
      const Range *P = gp.region(opP, a, rank);
      const Range *C = gc.region(ed.input, pl.b[k], rank);
      Range *S = tileSent.data() + size_t(a) * rank;
      if (tileState[a] == 0) {
        tileState[a] = 1;
        ++numParts;
        for (int32_t d = 0; d < rank; ++d)
          S[d] = {std::max(P[d].lo, C[d].lo), std::min(P[d].hi, C[d].hi)};
      } else {
        for (int32_t d = 0; d < rank; ++d)
          if (!(S[d] ==
                Range{std::max(P[d].lo, C[d].lo), std::min(P[d].hi, C[d].hi)}))
            tileState[a] = 2;
        numParts -= tileState[a] == 2;
      }
      int32_t dev = gc.devices[pl.b[k]];
      tileReceivers[size_t(a) * words + dev / 64] |= uint64_t(1) << (dev % 64);
    }
    if (numParts < 2)
      return;
    // The parts, for Region.h's rule (the partitioner's).
    sentRegions.clear();
    sentReceivers.clear();
    sentTiles.clear();
    for (int32_t a = 0; a < Tp; ++a) {
      if (tileState[a] != 1)
        continue;
      SentRegion part;
      part.region.rank = rank;
      std::copy(tileSent.data() + size_t(a) * rank,
                tileSent.data() + size_t(a + 1) * rank,
                part.region.dims.begin());
      part.from = gp.devices[a];
      part.begin = static_cast<int32_t>(sentReceivers.size());
      for (size_t w = 0; w < words; ++w)
        for (uint64_t m = tileReceivers[size_t(a) * words + w]; m; m &= m - 1)
          sentReceivers.push_back(static_cast<int32_t>(w * 64) +
                                  __builtin_ctzll(m));
      part.end = static_cast<int32_t>(sentReceivers.size());
      sentRegions.push_back(part);
      sentTiles.push_back(a);
    }
    gatherParts.clear();
    gatherEnds.clear();
    gatherDims.clear();
    findAllGathers(sentRegions, sentReceivers, gatherParts, gatherEnds,
                   gatherDims, gatherScratch);
    int32_t eb =
        graph.tensors[graph.nodes[ed.consumer].inputs[ed.input].tensor]
            .elementBytes;
    tileGather.assign(Tp, -1);
    for (size_t g = 0, q = 0; g < gatherEnds.size(); ++g) {
      int64_t n = gatherEnds[g] - static_cast<int64_t>(q);
      int64_t volume = sentRegions[gatherParts[q]].region.volume();
      for (; q < size_t(gatherEnds[g]); ++q) {
        int32_t a = sentTiles[gatherParts[q]];
        tileGather[a] = static_cast<int32_t>(g);
        pl.gatherTiles.push_back(a);
      }
      pl.gatherStart.push_back(static_cast<int32_t>(pl.gatherTiles.size()));
      pl.gatherBytes.push_back(n * volume * eb);
    }
    for (size_t k = 0; k < pl.size(); ++k)
      if (pairSlot[k] == kPending)
        pl.gatherOf[k] = tileGather[pl.a[k]];
  }

  /// scratchDevs: the devices of gather g of edge data pl (sorted).
  void gatherDevices(const NodeGeom &gp, const EdgeData &pl, int32_t g) {
    scratchDevs.clear();
    for (int32_t i = pl.gatherStart[g]; i < pl.gatherStart[g + 1]; ++i)
      scratchDevs.push_back(gp.devices[pl.gatherTiles[i]]);
    std::sort(scratchDevs.begin(), scratchDevs.end());
  }

  /// FT(e) into stageMain; the consumer tiles' delivery lists into edata
  /// (transfers as ~local index until the block is committed).
  void buildForwardEdge(int32_t e) {
    computePairs(e);
    const Edge &ed = edges[e];
    const NodeGeom &gp = geom[ed.producer], &gc = geom[ed.consumer];
    EdgeData &pl = edata[e];
    Block &bl = blocks[fwdTransferBlock[e]];
    int32_t eb =
        graph.tensors[graph.nodes[ed.consumer].inputs[ed.input].tensor]
            .elementBytes;
    int32_t Tp = gp.tiles, Tc = gc.tiles;
    size_t words = size_t(Tp + 63) / 64;
    int32_t srcBase = beginOf(forwardBlock[ed.producer]);
    int32_t NIp = static_cast<int32_t>(graph.nodes[ed.producer].inputs.size());
    resetSlots();
    pairSlot.resize(pl.size());
    pl.slot.assign(pl.size(), -1);
    pl.covered.assign(pl.size(), 0);
    recvBytes.assign(Tc, 0);
    // What earlier readers of the tensor brought to other devices (one
    // entry per transferred pair: producer tile, device, region, task):
    // soap-partition moves a region to a device once (ensureValid), and a
    // later read there that one earlier piece covers moves nothing. (A part
    // covered only in part: soap-partition moves the rest, missingHull;
    // here the whole part is counted.)
    int32_t rank = nstat[ed.consumer].ranks[ed.input];
    held.clear();
    if (gp.reduction == 1)
      for (int32_t e2 : earlierReaders[e]) {
        const EdgeData &pe = edata[e2];
        const NodeGeom &gc2 = geom[edges[e2].consumer];
        int32_t base = beginOf(fwdTransferBlock[e2]);
        for (int32_t k : pe.moved)
          held.push_back({pe.a[k], gc2.devices[pe.b[k]],
                          gc2.region(edges[e2].input, pe.b[k], rank),
                          base + pe.slot[k]});
      }
    // Bucketed by producer tile (a counting sort, stable: the earliest
    // reader's copy first).
    heldStart.assign(held.empty() ? 0 : Tp + 1, 0);
    if (!held.empty()) {
      for (const Held &h : held)
        ++heldStart[h.tile + 1];
      for (int32_t a = 0; a < Tp; ++a)
        heldStart[a + 1] += heldStart[a];
      heldSorted.resize(held.size());
      heldFill.assign(heldStart.begin(), heldStart.end() - 1);
      for (const Held &h : held)
        heldSorted[heldFill[h.tile]++] = h;
    }
    // The task of an earlier reader's transfer that moved a part of tile
    // a's output to `device` covering the part that region C reads.
    auto heldBy = [&](int32_t a, int32_t device, const Range *C) {
      const Range *P = gp.region(NIp + ed.output, a, rank);
      for (int32_t i = heldStart[a]; i < heldStart[a + 1]; ++i) {
        const Held &h = heldSorted[i];
        if (h.device == device && coversWithin(P, h.region, C, rank))
          return h.task;
      }
      return -1;
    };
    // A split reduction's sums end on every device of the group (the
    // group's all-reduce: buildForward): a consumer tile on one of them
    // reads them there; others get them from the group's first tile. A
    // reduce-scattered group's devices read their chunks where they are;
    // others get each chunk from its device.
    chunkSlots.clear();
    groupDevices.clear();
    if (gp.reduction > 1) {
      for (int32_t a = 0; a < Tp; ++a)
        groupDevices.push_back(int64_t(gp.owner[a]) * D + gp.devices[a]);
      std::sort(groupDevices.begin(), groupDevices.end());
    }
    auto groupOnDevice = [&](int32_t owner, int32_t device) {
      return std::binary_search(groupDevices.begin(), groupDevices.end(),
                                int64_t(owner) * D + device);
    };
    bool pending = false;
    for (size_t k = 0; k < pl.size(); ++k) {
      int32_t a = pl.a[k], b = pl.b[k];
      int32_t devA = gp.devices[a], devB = gc.devices[b];
      if (gp.reduction > 1 && gp.scatterDim[gp.owner[a]] == kSumAtReaders) {
        // Each member's partial sums, to the reader (which sums them).
        pairSlot[k] = devA == devB ? -1 : kPending;
        pending |= devA != devB;
        continue;
      }
      if (gp.owner[a] != a) { // another tile of a reduction group
        pairSlot[k] = devA == devB ? -1 : -2;
        continue;
      }
      if (devA != devB && gp.reduction > 1 && groupOnDevice(a, devB)) {
        pairSlot[k] = -2; // read from the group's tile on devB
        continue;
      }
      if (devA == devB) {
        pairSlot[k] = -1;
        continue;
      }
      if (gp.reduction == 1 && !held.empty()) {
        int32_t task = heldBy(a, devB, gc.region(ed.input, b, rank));
        if (task >= 0) {
          pairSlot[k] = -4 - task; // delivered by an earlier reader's task
          pl.covered[k] = 1;
          continue;
        }
      }
      if (gp.reduction > 1 && gp.scatterDim[a] >= 0) {
        int32_t d = gp.scatterDim[a];
        const Range *P = gp.region(NIp + ed.output, a, rank);
        const Range *C = gc.region(ed.input, b, rank);
        int64_t across = pl.vol[k] / (std::min(P[d].hi, C[d].hi) -
                                      std::max(P[d].lo, C[d].lo));
        int32_t size = gp.groupSize[a];
        int64_t chunk = P[d].size() / size;
        for (int32_t q = 0; q < size; ++q) {
          int64_t lo = P[d].lo + q * chunk;
          int64_t len = std::min(lo + chunk, C[d].hi) - std::max(lo, C[d].lo);
          if (len <= 0)
            continue;
          int32_t holder =
              gp.devices[gp.members[gp.groupBegin[a] +
                                    gp.chunkHolder[gp.groupBegin[a] + q]]];
          int64_t nb = across * len * eb;
          int32_t x = slotFor(linkOf(holder, devB), words);
          slotBytes[x] += nb;
          masks[size_t(x) * words + a / 64] |= uint64_t(1) << (a % 64);
          recvBytes[b] += nb;
          chunkSlots.push_back({k, x});
        }
        pairSlot[k] = -3;
        continue;
      }
      pairSlot[k] = kPending;
      pending = true;
    }
    // The pairs left move point to point, one task per link, but for those
    // of an all-gather.
    pl.gatherOf.assign(pl.size(), -1);
    pl.gatherStart.assign(1, 0);
    pl.gatherTiles.clear();
    pl.gatherBytes.clear();
    if (pending && gp.reduction == 1 && !gp.outExact[ed.output])
      findGathers(e);
    for (size_t k = 0; k < pl.size(); ++k) {
      if (pairSlot[k] != kPending)
        continue;
      int32_t a = pl.a[k], b = pl.b[k];
      int64_t nb = pl.vol[k] * eb;
      recvBytes[b] += nb;
      if (pl.gatherOf[k] >= 0)
        continue;
      int32_t x = slotFor(linkOf(gp.devices[a], gc.devices[b]), words);
      slotBytes[x] += nb;
      masks[size_t(x) * words + a / 64] |= uint64_t(1) << (a % 64);
      pairSlot[k] = x;
      if (gp.reduction == 1)
        pl.slot[k] = x;
    }
    // Each gather's task follows the links' tasks.
    int32_t numSlots = static_cast<int32_t>(slotLink.size());
    for (size_t k = 0; k < pl.size(); ++k)
      if (pl.gatherOf[k] >= 0)
        pairSlot[k] = pl.slot[k] = numSlots + pl.gatherOf[k];
    pl.moved.clear();
    for (size_t k = 0; k < pl.size(); ++k)
      if (pl.slot[k] >= 0)
        pl.moved.push_back(static_cast<int32_t>(k));
    Stage &st = stageMain;
    st.clear();
    int64_t moved = 0;
    for (size_t x = 0; x < slotLink.size(); ++x) {
      int32_t link = slotLink[x];
      st.add(TaskKind::Transfer, D + link, linkTime(link, slotBytes[x]),
             double(slotBytes[x]));
      moved += slotBytes[x];
      for (size_t w = 0; w < words; ++w)
        for (uint64_t m = masks[x * words + w]; m; m &= m - 1) {
          int32_t a = static_cast<int32_t>(w * 64) + __builtin_ctzll(m);
          st.pred(srcBase + gp.srcLocal[a]);
        }
    }
    for (int32_t g = 0; g < pl.numGathers(); ++g) {
      gatherDevices(gp, pl, g);
      addRing(st, pl.gatherBytes[g], TaskKind::Gather, 1.0);
      moved += int64_t(scratchDevs.size() - 1) * pl.gatherBytes[g];
      for (int32_t i = pl.gatherStart[g]; i < pl.gatherStart[g + 1]; ++i)
        st.pred(srcBase + gp.srcLocal[pl.gatherTiles[i]]);
    }
    bl.comm = moved;
    comm += moved;
    for (int32_t b = 0; b < Tc; ++b)
      addMemory(bl, gc.devices[b], recvBytes[b]);
    // Deliveries: pairs are consumer-tile major.
    pl.fwdStart.resize(Tc + 1);
    pl.fwd.clear();
    lastSeen.assign(size_t(numSlots + pl.numGathers()), -1);
    size_t k = 0, c = 0;
    auto deliver = [&](int32_t s, int32_t b) {
      if (lastSeen[s] != b) {
        lastSeen[s] = b;
        pl.fwd.push_back(~s);
      }
    };
    for (int32_t b = 0; b < Tc; ++b) {
      pl.fwdStart[b] = static_cast<int32_t>(pl.fwd.size());
      for (; k < pl.size() && pl.b[k] == b; ++k) {
        int32_t s = pairSlot[k];
        if (s == -1)
          pl.fwd.push_back(srcBase + gp.srcLocal[pl.a[k]]);
        else if (s >= 0)
          deliver(s, b);
        else if (s <= -4)
          pl.fwd.push_back(-4 - s);
        else if (s == -3)
          for (; c < chunkSlots.size() && chunkSlots[c].first == k; ++c)
            deliver(chunkSlots[c].second, b);
      }
    }
    pl.fwdStart[Tc] = static_cast<int32_t>(pl.fwd.size());
    resetSlots();
  }

  /// The consumer tiles of edge e whose partial input gradients are
  /// all-reduced or reduce-scattered (G.scatter: along the
  /// dimension Region.h's scatterDimension gives for the producer tiles'
  /// reads on the group's devices, G.holders: which member holds
  /// each chunk): tiles that read the same region of the input (they differ
  /// in loops that do not index it, the input gradient's reduction) on
  /// distinct devices, none of whose pairs an earlier reader's transfer
  /// covered or a gather moved, and whose sums move fewer bytes that way
  /// than sent to the producer tiles that read them (Region.h's
  /// sumAtReaders, as soap-partition combines the input gradient's partial
  /// sums). Into G.
  void gradientGroups(int32_t e, int32_t rank, int32_t eb, GradientGroups &G) {
    const Edge &ed = edges[e];
    const NodeGeom &gp = geom[ed.producer], &gc = geom[ed.consumer];
    const EdgeData &pl = edata[e];
    int32_t Tc = gc.tiles;
    G.tileGroup.assign(Tc, -1);
    G.start.assign(1, 0);
    G.tiles.clear();
    G.bytes.clear();
    G.scatter.clear();
    G.holders.clear();
    if (!mayGroup(e))
      return;
    // Tiles by input region (ties: tile order).
    auto C = [&](int32_t b) { return gc.region(ed.input, b, rank); };
    tileOrder.resize(Tc);
    for (int32_t b = 0; b < Tc; ++b)
      tileOrder[b] = b;
    std::sort(tileOrder.begin(), tileOrder.end(), [&](int32_t x, int32_t y) {
      const Range *X = C(x), *Y = C(y);
      for (int32_t d = 0; d < rank; ++d) {
        if (X[d].lo != Y[d].lo)
          return X[d].lo < Y[d].lo;
        if (X[d].hi != Y[d].hi)
          return X[d].hi < Y[d].hi;
      }
      return x < y;
    });
    auto same = [&](int32_t x, int32_t y) {
      const Range *X = C(x), *Y = C(y);
      for (int32_t d = 0; d < rank; ++d)
        if (!(X[d] == Y[d]))
          return false;
      return true;
    };
    tileSpecial.assign(Tc, 0);
    for (size_t k = 0; k < pl.size(); ++k)
      if (pl.covered[k] || pl.gatherOf[k] >= 0)
        tileSpecial[pl.b[k]] = 1;
    for (int32_t i = 0; i < Tc;) {
      int32_t j = i + 1;
      while (j < Tc && same(tileOrder[i], tileOrder[j]))
        ++j;
      int32_t k = j - i;
      int32_t first = tileOrder[i];
      groupDevs.clear();
      bool special = false;
      for (int32_t q = i; q < j; ++q) {
        groupDevs.push_back(gc.devices[tileOrder[q]]);
        special |= tileSpecial[tileOrder[q]] != 0;
      }
      std::sort(groupDevs.begin(), groupDevs.end());
      bool distinct = std::adjacent_find(groupDevs.begin(), groupDevs.end()) ==
                      groupDevs.end();
      if (k < 2 || special || !distinct) {
        i = j;
        continue;
      }
      // The producer tiles' reads of the region: per device, the hull of
      // the parts of their outputs in it (the first tile's pairs).
      const Range *R = C(first);
      int64_t regionVolume = 1;
      for (int32_t d = 0; d < rank; ++d)
        regionVolume *= R[d].size();
      int32_t NIp =
          static_cast<int32_t>(graph.nodes[ed.producer].inputs.size());
      readerHull.resize(size_t(D) * rank);
      readerSeen.resize(D, 0);
      readers.clear();
      // Pairs are consumer-tile major.
      size_t q0 = size_t(std::lower_bound(pl.b.begin(), pl.b.end(), first) -
                         pl.b.begin());
      // A reduce-scatter where each producer tile on a device of the group
      // reads within the chunk that device gets (Region.h's
      // scatterDimension, over the consumer's access of its input).
      chunkReads.clear();
      for (size_t q = q0; q < pl.size() && pl.b[q] == first; ++q) {
        int32_t dev = gp.devices[pl.a[q]];
        const Range *P = gp.region(NIp + ed.output, pl.a[q], rank);
        addReaderHull(dev, P, R, rank);
        for (int32_t m = 0; m < k; ++m) {
          if (gc.devices[tileOrder[i + m]] != dev)
            continue;
          Box box;
          box.rank = rank;
          for (int32_t d = 0; d < rank; ++d)
            box.dims[d] = {std::max(P[d].lo, R[d].lo),
                           std::min(P[d].hi, R[d].hi)};
          chunkReads.push_back({m, box});
        }
      }
      int32_t scatterDim = -1;
      if (!readers.empty()) {
        Box region;
        region.rank = rank;
        std::copy(R, R + rank, region.dims.begin());
        scatterDim =
            soap::scatterDimension(graph.nodes[ed.consumer].inputs[ed.input],
                                   region, k, chunkReads, scatterHolders);
      }
      if (!readers.empty() &&
          !readersSumAtReaders(regionVolume, k, scatterDim >= 0, rank)) {
        int32_t g = static_cast<int32_t>(G.bytes.size());
        G.scatter.push_back(scatterDim);
        for (int32_t c = 0; c < k; ++c)
          G.holders.push_back(scatterDim >= 0 ? scatterHolders[c] : c);
        G.tiles.push_back(first);
        for (int32_t q = i; q < j; ++q) {
          G.tileGroup[tileOrder[q]] = g;
          if (tileOrder[q] != first)
            G.tiles.push_back(tileOrder[q]);
        }
        G.start.push_back(static_cast<int32_t>(G.tiles.size()));
        G.bytes.push_back(regionVolume * eb);
      }
      i = j;
    }
  }

  /// Whether edge e's consumer tiles may form gradient groups at all: its
  /// producer needs the gradient, and it splits a loop that does not index
  /// the input (tiles share an input region only there).
  bool mayGroup(int32_t e) const {
    const Edge &ed = edges[e];
    const NodeGeom &gc = geom[ed.consumer];
    if (gc.tiles < 2 || !gradNeeded[e])
      return false;
    uint32_t split = 0;
    for (size_t l = 0; l < gc.degrees.size(); ++l)
      if (gc.degrees[l] > 1)
        split |= 1u << l;
    return (split & ~nstat[ed.consumer].inputLoops[ed.input]) != 0;
  }

  /// Whether group g of edge e (groups A) and group h of edge f (groups
  /// B), edges of two readers of one tensor, sum the same region on the
  /// same devices, chunk by chunk where reduce-scattered: the training
  /// step accumulates such readers' partial input gradients in one chain,
  /// each device adding its own, and combines them once (soap-partition's
  /// partitionChainedSum), so one ring sums both.
  bool sameGroup(int32_t e, const GradientGroups &A, int32_t g, int32_t f,
                 const GradientGroups &B, int32_t h, int32_t rank) {
    int32_t k = A.start[g + 1] - A.start[g];
    if (A.bytes[g] != B.bytes[h] || A.scatter[g] != B.scatter[h] ||
        k != B.start[h + 1] - B.start[h])
      return false;
    const NodeGeom &ca = geom[edges[e].consumer], &cb = geom[edges[f].consumer];
    const Range *X = ca.region(edges[e].input, A.tiles[A.start[g]], rank);
    const Range *Y = cb.region(edges[f].input, B.tiles[B.start[h]], rank);
    for (int32_t d = 0; d < rank; ++d)
      if (!(X[d] == Y[d]))
        return false;
    auto device = [&](const NodeGeom &c, const GradientGroups &G, int32_t q,
                      int32_t i) { return c.devices[G.tiles[G.start[q] + i]]; };
    for (int32_t i = 0; i < k; ++i) {
      bool found = false;
      for (int32_t j = 0; j < k && !found; ++j)
        found = device(ca, A, g, i) == device(cb, B, h, j);
      if (!found)
        return false;
    }
    if (A.scatter[g] >= 0)
      for (int32_t c = 0; c < k; ++c)
        if (device(ca, A, g, A.holders[A.start[g] + c]) !=
            device(cb, B, h, B.holders[B.start[h] + c]))
          return false;
    return true;
  }

  /// GT(e) into stageMain and the producer tiles' delivery lists (pairs
  /// from FT(e), which precedes GT(e)).
  void buildGradientEdge(int32_t e) {
    const Edge &ed = edges[e];
    const NodeGeom &gp = geom[ed.producer], &gc = geom[ed.consumer];
    EdgeData &pl = edata[e];
    Block &bl = blocks[gradTransferBlock[e]];
    int32_t eb =
        graph.tensors[graph.nodes[ed.consumer].inputs[ed.input].tensor]
            .elementBytes;
    int32_t Tp = gp.tiles, Tc = gc.tiles;
    size_t words = size_t(Tc + 63) / 64;
    int32_t bwdBase = beginOf(backwardBlock[ed.consumer]);
    int32_t rank = nstat[ed.consumer].ranks[ed.input];
    GradientGroups &G = groups;
    gradientGroups(e, rank, eb, G);
    int32_t numGroups = G.size();
    siblingPreds.clear();
    groupDeferred.assign(numGroups, 0);
    if (numGroups > 0) {
      // Other readers of the tensor with a matching group: the last one's
      // ring sums them all.
      for (int32_t f : laterReaders[e]) {
        gradientGroups(f, rank, eb, siblingGroups);
        for (int32_t g = 0; g < numGroups; ++g)
          for (int32_t h = 0; h < siblingGroups.size() && !groupDeferred[g];
               ++h)
            groupDeferred[g] = sameGroup(e, G, g, f, siblingGroups, h, rank);
      }
      for (int32_t f : earlierReaders[e]) {
        gradientGroups(f, rank, eb, siblingGroups);
        int32_t base = beginOf(backwardBlock[edges[f].consumer]);
        for (int32_t g = 0; g < numGroups; ++g)
          for (int32_t h = 0; h < siblingGroups.size() && !groupDeferred[g];
               ++h)
            if (sameGroup(e, G, g, f, siblingGroups, h, rank))
              for (int32_t i = siblingGroups.start[h];
                   i < siblingGroups.start[h + 1]; ++i)
                siblingPreds.push_back({g, base + siblingGroups.tiles[i]});
      }
    }
    // The gradient of a reduce-scattered group's sums is summed from its
    // readers' parts where each part is, then sent to the group's members
    // (soap-training-step sums a value's gradient where the op that wrote
    // it ran: the group's elementwise rest, on its chunks): a reader's part
    // that an earlier reader's part on the same device covers is added to
    // that one and sent with it (Megatron's row-parallel layer read by a
    // layer norm's three ops). Its backward task runs before the earlier
    // reader's on that device, whose transfer waits for it.
    int32_t NIp = static_cast<int32_t>(graph.nodes[ed.producer].inputs.size());
    sentGradients.clear();
    if (gp.reduction > 1 && gradNeeded[e])
      for (int32_t f : earlierReaders[e]) {
        if (!gradNeeded[f])
          continue;
        const EdgeData &pf = edata[f];
        const NodeGeom &gf = geom[edges[f].consumer];
        gradientGroups(f, rank, eb, siblingGroups);
        for (size_t k = 0; k < pf.size(); ++k) {
          int32_t a = pf.a[k], b = pf.b[k];
          if (gp.scatterDim[gp.owner[a]] < 0 ||
              siblingGroups.tileGroup[b] >= 0 || pf.gatherOf[k] >= 0 ||
              gf.devices[b] == gp.devices[a])
            continue;
          sentGradients.push_back(
              {a, gf.devices[b], gf.region(edges[f].input, b, rank), -1});
        }
      }
    auto sentByEarlierReader = [&](int32_t a, int32_t device, const Range *C) {
      const Range *P = gp.region(NIp + ed.output, a, rank);
      return std::any_of(sentGradients.begin(), sentGradients.end(),
                         [&](const Held &h) {
        return h.tile == a && h.device == device &&
               coversWithin(P, h.region, C, rank);
      });
    };
    resetSlots();
    pairSlot.resize(pl.size());
    bucketCount.assign(Tp + 1, 0);
    for (size_t k = 0; k < pl.size(); ++k) {
      int32_t a = pl.a[k], b = pl.b[k];
      ++bucketCount[a + 1];
      int32_t devA = gp.devices[a], devB = gc.devices[b];
      if (!gradNeeded[e]) { // nothing sent, nothing to wait for
        pairSlot[k] = -2;
        continue;
      }
      if (G.tileGroup[b] >= 0) { // all-reduced with its group's
        pairSlot[k] = kGrouped;
        continue;
      }
      if (devA == devB) {
        pairSlot[k] = -1;
        continue;
      }
      if (pl.covered[k]) { // summed on devB, sent by the earliest reader
        pairSlot[k] = -2;
        continue;
      }
      if (!sentGradients.empty() && gp.scatterDim[gp.owner[a]] >= 0 &&
          pl.gatherOf[k] < 0 &&
          sentByEarlierReader(a, devB, gc.region(ed.input, b, rank))) {
        pairSlot[k] = -2; // added to an earlier reader's part, sent with it
        continue;
      }
      if (pl.gatherOf[k] >= 0) { // in the gather's reduce-scatter
        pairSlot[k] = kPending;
        continue;
      }
      int32_t x = slotFor(linkOf(devB, devA), words);
      slotBytes[x] += pl.vol[k] * eb;
      masks[size_t(x) * words + b / 64] |= uint64_t(1) << (b % 64);
      pairSlot[k] = x;
    }
    Stage &st = stageMain;
    st.clear();
    int64_t moved = 0;
    for (size_t x = 0; x < slotLink.size(); ++x) {
      int32_t link = slotLink[x];
      st.add(TaskKind::GradientTransfer, D + link,
             linkTime(link, slotBytes[x]), double(slotBytes[x]));
      moved += slotBytes[x];
      for (size_t w = 0; w < words; ++w)
        for (uint64_t m = masks[x * words + w]; m; m &= m - 1)
          st.pred(bwdBase + static_cast<int32_t>(w * 64) +
                  __builtin_ctzll(m));
    }
    // A gather's gradients: the consumer tiles' sums over the region,
    // reduce-scattered over the gather's ring (each producer tile's device
    // keeps its chunk), after the backward tasks of the consumer tiles that
    // sent to it, each once.
    int32_t numSlots = static_cast<int32_t>(slotLink.size());
    if (pl.numGathers() > 0 && gradNeeded[e]) {
      gatherReaders.clear();
      for (size_t k = 0; k < pl.size(); ++k)
        if (pairSlot[k] == kPending) {
          gatherReaders.push_back(int64_t(pl.gatherOf[k]) * Tc + pl.b[k]);
          pairSlot[k] = numSlots + pl.gatherOf[k];
        }
      std::sort(gatherReaders.begin(), gatherReaders.end());
      gatherReaders.erase(
          std::unique(gatherReaders.begin(), gatherReaders.end()),
          gatherReaders.end());
      size_t r = 0;
      for (int32_t g = 0; g < pl.numGathers(); ++g) {
        gatherDevices(gp, pl, g);
        addRing(st, pl.gatherBytes[g], TaskKind::GradientScatter, 1.0);
        moved += int64_t(scratchDevs.size() - 1) * pl.gatherBytes[g];
        for (; r < gatherReaders.size() && gatherReaders[r] / Tc == g; ++r)
          st.pred(bwdBase + static_cast<int32_t>(gatherReaders[r] % Tc));
      }
    }
    // All-reduced groups: a ring over the group's devices after its tiles'
    // backward tasks (and those of the earlier readers' matching groups);
    // producer tiles on those devices read the sums there, the others get
    // them from the group's first tile's device. A group a later reader's
    // ring sums has none.
    groupRing.assign(numGroups, -1);
    for (int32_t g = 0; g < numGroups; ++g) {
      if (groupDeferred[g])
        continue;
      scratchDevs.clear();
      for (int32_t i = G.start[g]; i < G.start[g + 1]; ++i)
        scratchDevs.push_back(gc.devices[G.tiles[i]]);
      std::sort(scratchDevs.begin(), scratchDevs.end());
      bool scatter = G.scatter[g] >= 0;
      groupRing[g] =
          addAllReduce(st, G.bytes[g], TaskKind::PartialSum, scatter);
      for (int32_t i = G.start[g]; i < G.start[g + 1]; ++i)
        st.pred(bwdBase + G.tiles[i]);
      for (const std::pair<int32_t, int32_t> &p : siblingPreds)
        if (p.first == g)
          st.pred(p.second);
      moved += (scatter ? 1 : 2) * int64_t(scratchDevs.size() - 1) * G.bytes[g];
    }
    chunkTasks.clear();
    if (numGroups > 0) {
      chunkTaskBegin.assign(pl.size(), 0);
      chunkTaskEnd.assign(pl.size(), 0);
    }
    for (size_t k = 0; k < pl.size(); ++k) {
      if (pairSlot[k] != kGrouped)
        continue;
      int32_t a = pl.a[k], b = pl.b[k], g = G.tileGroup[b];
      if (groupDeferred[g] || b != G.tiles[G.start[g]]) {
        // A later reader's pairs deliver the sums, or the group's first
        // tile's pair.
        pairSlot[k] = -2;
        continue;
      }
      int32_t devA = gp.devices[a];
      bool inGroup = false;
      for (int32_t i = G.start[g]; i < G.start[g + 1]; ++i)
        inGroup |= gc.devices[G.tiles[i]] == devA;
      if (inGroup) {
        pairSlot[k] = groupRing[g];
        continue;
      }
      if (int32_t d = G.scatter[g]; d >= 0) {
        // Each chunk's part from the device that holds it.
        const Range *P = gp.region(NIp + ed.output, a, rank);
        const Range *C = gc.region(ed.input, b, rank);
        int64_t lo = std::max(P[d].lo, C[d].lo);
        int64_t hi = std::min(P[d].hi, C[d].hi);
        int64_t across = pl.vol[k] / (hi - lo);
        int32_t size = G.start[g + 1] - G.start[g];
        int64_t chunk = C[d].size() / size;
        chunkTaskBegin[k] = static_cast<int32_t>(chunkTasks.size());
        for (int32_t c = 0; c < size; ++c) {
          int64_t from = C[d].lo + c * chunk;
          int64_t len = std::min(from + chunk, hi) - std::max(from, lo);
          if (len <= 0)
            continue;
          int32_t member = G.holders[G.start[g] + c];
          int32_t holder = gc.devices[G.tiles[G.start[g] + member]];
          int32_t link = linkOf(holder, devA);
          int64_t nb = across * len * eb;
          chunkTasks.push_back(st.add(TaskKind::GradientTransfer, D + link,
                                      linkTime(link, nb), double(nb)));
          st.pred(~groupRing[g]);
          moved += nb;
        }
        chunkTaskEnd[k] = static_cast<int32_t>(chunkTasks.size());
        pairSlot[k] = -3;
        continue;
      }
      int32_t link = linkOf(gc.devices[b], devA);
      int64_t nb = pl.vol[k] * eb;
      pairSlot[k] = st.add(TaskKind::GradientTransfer, D + link,
                           linkTime(link, nb), double(nb));
      st.pred(~groupRing[g]);
      moved += nb;
    }
    bl.comm = moved;
    comm += moved;
    // Deliveries per producer tile: bucket the pairs by producer tile.
    for (int32_t a = 0; a < Tp; ++a)
      bucketCount[a + 1] += bucketCount[a];
    bucketItems.resize(pl.size());
    for (size_t k = 0; k < pl.size(); ++k)
      bucketItems[bucketCount[pl.a[k]]++] = static_cast<int32_t>(k);
    pl.gradStart.resize(Tp + 1);
    pl.grad.clear();
    lastSeen.assign(size_t(st.size()), -1);
    int32_t from = 0;
    for (int32_t a = 0; a < Tp; ++a) {
      pl.gradStart[a] = static_cast<int32_t>(pl.grad.size());
      int32_t to = bucketCount[a];
      for (int32_t q = from; q < to; ++q) {
        int32_t k = bucketItems[q];
        int32_t s = pairSlot[k];
        if (s == -1)
          pl.grad.push_back(bwdBase + pl.b[k]);
        else if (s == -2)
          continue;
        else if (s == -3) {
          for (int32_t i = chunkTaskBegin[k]; i < chunkTaskEnd[k]; ++i)
            if (lastSeen[chunkTasks[i]] != a) {
              lastSeen[chunkTasks[i]] = a;
              pl.grad.push_back(~chunkTasks[i]);
            }
        } else if (lastSeen[s] != a) {
          lastSeen[s] = a;
          pl.grad.push_back(~s);
        }
      }
      from = to;
    }
    pl.gradStart[Tp] = static_cast<int32_t>(pl.grad.size());
    resetSlots();
  }

  void buildForward(int32_t n) {
    NodeGeom &g = geom[n];
    const NodeStatic &ns = nstat[n];
    Block &bl = blocks[forwardBlock[n]];
    Stage &st = stageMain;
    st.clear();
    int32_t T = g.tiles;
    for (int32_t t = 0; t < T; ++t) {
      st.add(TaskKind::Forward, g.devices[t], g.fwd[t]);
      for (int32_t e : ns.inEdges) {
        const EdgeData &ed = edata[e];
        for (int32_t k = ed.fwdStart[t]; k < ed.fwdStart[t + 1]; ++k)
          st.pred(ed.fwd[k]);
      }
      // Activations are charged by the timeline (peakPerDevice), except a
      // graph output's, which stays all iteration; the most they add, as
      // a bound (fitsForSure).
      addMemory(bl, g.devices[t],
                g.kept[t] + (ns.returnsOutput ? g.act[t] : 0));
      LiveBytes b = liveBytes(n, t);
      addMemory(bl, D + g.devices[t], b.act + b.grad + b.paramGrad);
    }
    g.srcLocal.resize(T);
    if (g.reduction == 1) {
      for (int32_t t = 0; t < T; ++t)
        g.srcLocal[t] = t;
      return;
    }
    // Split reduction loops: each group's partial results are all-reduced
    // over the group's distinct devices (one ring task on all of its links,
    // after the group's forward tasks; the generated code calls NCCL), which
    // leaves the sums on every one of them; or reduce-scattered, each
    // device keeping a chunk, where no device of the group reads beyond its
    // chunk afterwards (scatterDimension). A group on one device sums its
    // partials there (a combine task). Groups in owner order.
    groupTiles(n);
    int64_t moved = 0;
    for (size_t from = 0; from < g.members.size();) {
      int32_t o = g.owner[g.members[from]];
      size_t to = from + g.groupSize[o];
      scratchDevs.clear();
      for (size_t q = from; q < to; ++q)
        scratchDevs.push_back(g.devices[g.members[q]]);
      std::sort(scratchDevs.begin(), scratchDevs.end());
      scratchDevs.erase(std::unique(scratchDevs.begin(), scratchDevs.end()),
                        scratchDevs.end());
      int32_t k = static_cast<int32_t>(scratchDevs.size());
      int32_t task;
      g.scatterDim[o] = static_cast<int8_t>(combination(n, o, scatterHolders));
      if (g.scatterDim[o] >= 0)
        std::copy(scatterHolders.begin(), scatterHolders.end(),
                  g.chunkHolder.begin() + from);
      if (g.scatterDim[o] == kSumAtReaders) {
        // The readers take each member's partial sums from its forward
        // task (buildForwardEdge).
        for (size_t q = from; q < to; ++q)
          g.srcLocal[g.members[q]] = g.members[q];
        from = to;
        continue;
      }
      if (k > 1) {
        bool scatter = g.scatterDim[o] >= 0;
        task = addAllReduce(st, g.outBytes[o], TaskKind::PartialSum, scatter);
        moved += (scatter ? 1 : 2) * int64_t(k - 1) * g.outBytes[o];
      } else {
        task = st.add(TaskKind::Combine, g.devices[o],
                      costs.combineTime(double(g.outBytes[o]), g.reduction,
                                        ns.outElementBytes));
      }
      for (size_t q = from; q < to; ++q)
        st.pred(~g.members[q]);
      for (size_t q = from; q < to; ++q)
        g.srcLocal[g.members[q]] = task;
      from = to;
    }
    bl.comm = moved;
    comm += moved;
  }

  /// Whether a group of split-reduction node p would now be combined
  /// otherwise than its forward block does.
  bool scatterChanged(int32_t p) {
    const NodeGeom &g = geom[p];
    for (int32_t q = 0; q < g.tiles; q += g.groupSize[g.owner[g.members[q]]]) {
      int32_t o = g.owner[g.members[q]];
      int32_t d = combination(p, o, scatterHolders);
      if (d != g.scatterDim[o] ||
          (d >= 0 && !std::equal(scatterHolders.begin(), scatterHolders.end(),
                                 g.chunkHolder.begin() + q)))
        return true;
    }
    return false;
  }

  /// g.members, groupBegin, groupSize of split-reduction node n.
  void groupTiles(int32_t n) {
    NodeGeom &g = geom[n];
    int32_t T = g.tiles;
    g.members.resize(T);
    for (int32_t a = 0; a < T; ++a)
      g.members[a] = a;
    std::sort(g.members.begin(), g.members.end(), [&](int32_t x, int32_t y) {
      return g.owner[x] != g.owner[y] ? g.owner[x] < g.owner[y] : x < y;
    });
    g.groupBegin.assign(T, 0);
    g.groupSize.assign(T, 0);
    g.scatterDim.assign(T, -1);
    g.chunkHolder.resize(T);
    for (int32_t q = 0; q < T; ++q) {
      int32_t o = g.owner[g.members[q]];
      if (g.groupSize[o]++ == 0)
        g.groupBegin[o] = q;
      g.chunkHolder[q] = q - g.groupBegin[o];
    }
  }

  /// Adds the part of `X` in `R` (rank ranges each), if any, to device
  /// `dev`'s reads (readerHull, readerSeen, readers).
  void addReaderHull(int32_t dev, const Range *X, const Range *R,
                     int32_t rank) {
    for (int32_t x = 0; x < rank; ++x)
      if (std::max(X[x].lo, R[x].lo) >= std::min(X[x].hi, R[x].hi))
        return;
    Range *H = readerHull.data() + size_t(dev) * rank;
    for (int32_t x = 0; x < rank; ++x) {
      Range in = {std::max(X[x].lo, R[x].lo), std::min(X[x].hi, R[x].hi)};
      H[x] = readerSeen[dev]
                 ? Range{std::min(H[x].lo, in.lo), std::max(H[x].hi, in.hi)}
                 : in;
    }
    if (!readerSeen[dev]) {
      readerSeen[dev] = 1;
      readers.push_back(dev);
    }
  }
  /// Region.h's sumAtReaders over the reads addReaderHull collected (a
  /// group of k devices, groupDevs, sorted); clears them.
  bool readersSumAtReaders(int64_t regionVolume, int32_t k, bool scattered,
                           int32_t rank) {
    int64_t inGroup = 0, others = 0;
    for (int32_t dev : readers) {
      readerSeen[dev] = 0;
      int64_t v = 1;
      for (int32_t x = 0; x < rank; ++x)
        v *= readerHull[size_t(dev) * rank + x].size();
      (std::binary_search(groupDevs.begin(), groupDevs.end(), dev)
           ? inGroup
           : others) += v;
    }
    readers.clear();
    return sumAtReaders(regionVolume, k, scattered, inGroup, others);
  }

  /// How the partial sums of node n's reduction group `o` are combined:
  /// scatterDimension's dimension (-1: all-reduced), or kSumAtReaders
  /// where sumAtReaders says so over the reads of every consumer tile, as
  /// soap-partition decides in the training step: the node has one output,
  /// which is no result of the program (its gather to device 0 is left out
  /// here), and the group's devices are distinct. (A forward layer's
  /// elementwise epilogue, a bias or an activation, is an op of its own in
  /// the training step, placed where its readers run: soap-training-step
  /// gives it their config, the split reduction's having no counterpart in
  /// its loops.)
  int32_t combination(int32_t n, int32_t o, std::vector<int32_t> &holders) {
    int32_t d = scatterDimension(n, o, holders);
    const Node &node = graph.nodes[n];
    const NodeStatic &ns = nstat[n];
    const NodeGeom &g = geom[n];
    int32_t k = g.groupSize[o];
    if (node.outputs.size() != 1 || k < 2 ||
        graph.tensors[node.outputs.front().tensor].isOutput)
      return d;
    const int32_t *tiles = g.members.data() + g.groupBegin[o];
    groupDevs.clear();
    for (int32_t i = 0; i < k; ++i)
      groupDevs.push_back(g.devices[tiles[i]]);
    std::sort(groupDevs.begin(), groupDevs.end());
    if (std::adjacent_find(groupDevs.begin(), groupDevs.end()) !=
        groupDevs.end())
      return d;
    // Per reading device, the smallest box covering its reads within the
    // group's region (Region.h's sumAtReaders, without building boxes).
    int32_t NI = static_cast<int32_t>(node.inputs.size());
    int32_t rank = ns.ranks[NI];
    const Range *R = g.region(NI, o, rank);
    int64_t regionVolume = 1;
    for (int32_t x = 0; x < rank; ++x)
      regionVolume *= R[x].size();
    readerHull.resize(size_t(D) * rank);
    readerSeen.resize(D, 0);
    readers.clear();
    for (int32_t e : ns.outEdges) {
      const Edge &ed = edges[e];
      const NodeGeom &gc = geom[ed.consumer];
      for (int32_t b = 0; b < gc.tiles; ++b)
        addReaderHull(gc.devices[b], gc.region(ed.input, b, rank), R, rank);
    }
    return readersSumAtReaders(regionVolume, k, d >= 0, rank) ? kSumAtReaders
                                                              : d;
  }

  /// The output dimension along which the partial sums of node n's
  /// reduction group `o` are reduce-scattered, and in `holders` the member
  /// (index in the group, in tile order) that gets each chunk, or -1
  /// (Region.h, scatterDimension):
  /// the node has one output and the group's devices are distinct; the
  /// reads are those of the consumer tiles on the group's devices and the
  /// gather of a program result to device 0, as soap-partition counts them.
  int32_t scatterDimension(int32_t n, int32_t o,
                           std::vector<int32_t> &holders) {
    const Node &node = graph.nodes[n];
    const NodeStatic &ns = nstat[n];
    const NodeGeom &g = geom[n];
    int32_t k = g.groupSize[o];
    if (node.outputs.size() != 1 || k < 2)
      return -1;
    const int32_t *tiles = g.members.data() + g.groupBegin[o];
    for (int32_t i = 0; i < k; ++i)
      for (int32_t j = 0; j < i; ++j)
        if (g.devices[tiles[i]] == g.devices[tiles[j]])
          return -1;
    auto chunkOf = [&](int32_t device) {
      for (int32_t i = 0; i < k; ++i)
        if (g.devices[tiles[i]] == device)
          return i;
      return -1;
    };
    int32_t NI = static_cast<int32_t>(node.inputs.size());
    int32_t rank = ns.ranks[NI];
    auto toBox = [&](const Range *r) {
      Box box;
      box.rank = rank;
      std::copy(r, r + rank, box.dims.begin());
      return box;
    };
    const Operand &out = node.outputs.front();
    chunkReads.clear();
    int32_t holder0 = chunkOf(0);
    if (graph.tensors[out.tensor].isOutput && holder0 >= 0)
      chunkReads.push_back({holder0, wholeTensor(graph.tensors[out.tensor])});
    for (int32_t e : ns.outEdges) {
      const Edge &ed = edges[e];
      const NodeGeom &gc = geom[ed.consumer];
      for (int32_t b = 0; b < gc.tiles; ++b)
        if (int32_t i = chunkOf(gc.devices[b]); i >= 0)
          chunkReads.push_back({i, toBox(gc.region(ed.input, b, rank))});
    }
    return soap::scatterDimension(out, toBox(g.region(NI, o, rank)), k,
                                  chunkReads, holders);
  }
  void buildBackward(int32_t n) {
    NodeGeom &g = geom[n];
    const NodeStatic &ns = nstat[n];
    const Node &node = graph.nodes[n];
    Block &bl = blocks[backwardBlock[n]];
    Stage &st = stageMain;
    st.clear();
    int32_t T = g.tiles;
    int32_t fwdBase = beginOf(forwardBlock[n]);
    bool recomputes = this->recomputes(n);
    for (int32_t t = 0; t < T; ++t) {
      // A recomputed output is computed again first, on the same device.
      st.add(TaskKind::Backward, g.devices[t],
             recomputes ? g.bwd[t] + g.fwd[t] : g.bwd[t]);
      st.pred(fwdBase + t);
      for (int32_t e : ns.outEdges) {
        const EdgeData &ed = edata[e];
        for (int32_t k = ed.gradStart[t]; k < ed.gradStart[t + 1]; ++k)
          st.pred(ed.grad[k]);
      }
    }
    g.updPredStart.clear();
    g.updPreds.clear();
    g.updDur.clear();
    int32_t L = node.numLoops();
    int32_t NI = static_cast<int32_t>(node.inputs.size());
    // Parameter inputs whose replicas form the same groups (same split
    // loops indexing them) are synchronized by one collective per group.
    uint32_t split = 0;
    for (int32_t l = 0; l < L; ++l)
      if (g.degrees[l] > 1)
        split |= 1u << l;
    classOf.assign(NI, -1);
    classMask.clear();
    int32_t firstParam = -1;
    for (int32_t i = 0; i < NI; ++i) {
      if (!graph.tensors[node.inputs[i].tensor].isParameter ||
          ns.sharedOf[i] >= 0)
        continue;
      if (firstParam < 0)
        firstParam = i;
      uint32_t m = ns.paramLoops[i] & split;
      int32_t c = 0, C = static_cast<int32_t>(classMask.size());
      while (c < C && classMask[c] != static_cast<int32_t>(m))
        ++c;
      if (c == C)
        classMask.push_back(static_cast<int32_t>(m));
      classOf[i] = c;
    }
    if (firstParam < 0)
      return;
    int32_t C = static_cast<int32_t>(classMask.size());
    // tileJoins[c * T + t]: local index tile t's update waits for.
    tileJoins.assign(size_t(C) * T, -1);
    int64_t moved = 0;
    for (int32_t c = 0; c < C; ++c) {
      uint32_t mask = static_cast<uint32_t>(classMask[c]);
      keys.resize(T);
      int32_t numKeys = 1;
      {
        int32_t coords[kMaxRank];
        for (int32_t l = 0; l < L; ++l)
          coords[l] = 0;
        for (int32_t t = 0; t < T; ++t) {
          int32_t key = 0;
          for (int32_t l = 0; l < L; ++l)
            if (mask & (1u << l))
              key = key * g.degrees[l] + coords[l];
          keys[t] = key;
          for (int32_t l = L - 1; l >= 0; --l) {
            if (++coords[l] < g.degrees[l])
              break;
            coords[l] = 0;
          }
        }
        for (int32_t l = 0; l < L; ++l)
          if (mask & (1u << l))
            numKeys *= g.degrees[l];
      }
      bucketCount.assign(numKeys + 1, 0);
      for (int32_t t = 0; t < T; ++t)
        ++bucketCount[keys[t] + 1];
      for (int32_t k = 0; k < numKeys; ++k)
        bucketCount[k + 1] += bucketCount[k];
      bucketItems.resize(T);
      for (int32_t t = 0; t < T; ++t)
        bucketItems[bucketCount[keys[t]]++] = t;
      int32_t from = 0;
      for (int32_t key = 0; key < numKeys; ++key) {
        int32_t to = bucketCount[key];
        int32_t k = to - from;
        if (k <= 1) {
          if (k == 1)
            tileJoins[size_t(c) * T + bucketItems[from]] = bucketItems[from];
          from = to;
          continue;
        }
        int32_t first = bucketItems[from];
        int64_t nbytes = 0;
        for (int32_t i = 0; i < NI; ++i) {
          if (classOf[i] != c)
            continue;
          const Range *reg = g.region(i, first, ns.ranks[i]);
          int64_t vol = 1;
          for (int32_t d = 0; d < ns.ranks[i]; ++d)
            vol *= reg[d].size();
          nbytes += vol * graph.tensors[node.inputs[i].tensor].elementBytes;
        }
        scratchDevs.clear();
        for (int32_t q = from; q < to; ++q)
          scratchDevs.push_back(g.devices[bucketItems[q]]);
        std::sort(scratchDevs.begin(), scratchDevs.end());
        double bwMin = 0, latMax = 0;
        scratchLinks.clear();
        for (int32_t j = 0; j < k; ++j) {
          int32_t l = linkOf(scratchDevs[j], scratchDevs[(j + 1) % k]);
          double bw = machine.linkBandwidth(l);
          bwMin = j == 0 ? bw : std::min(bwMin, bw);
          latMax = std::max(latMax, machine.linkLatency(l));
          scratchLinks.push_back(l);
        }
        std::sort(scratchLinks.begin(), scratchLinks.end());
        scratchLinks.erase(
            std::unique(scratchLinks.begin(), scratchLinks.end()),
            scratchLinks.end());
        for (int32_t &l : scratchLinks)
          l += D;
        double factor = 2.0 * (k - 1) / k;
        double time = factor * double(nbytes) / bwMin + 2.0 * (k - 1) * latMax;
        // One task on all the ring's links, after the group's backward
        // tasks.
        int32_t ar =
            st.add(TaskKind::AllReduce, 0, time, factor * double(nbytes));
        st.setResources(ar, scratchLinks);
        for (int32_t q = from; q < to; ++q)
          st.pred(~bucketItems[q]);
        for (int32_t q = from; q < to; ++q)
          tileJoins[size_t(c) * T + bucketItems[q]] = ar;
        moved += 2 * int64_t(k - 1) * nbytes;
        from = to;
      }
    }
    bl.comm = moved;
    comm += moved;
    // One update per tile (all its parameters), after its groups' syncs.
    int32_t eb = graph.tensors[node.inputs[firstParam].tensor].elementBytes;
    for (int32_t t = 0; t < T; ++t) {
      g.updPredStart.push_back(static_cast<int32_t>(g.updPreds.size()));
      int64_t nbytes = 0;
      for (int32_t i = 0; i < NI; ++i) {
        if (classOf[i] < 0)
          continue;
        const Range *reg = g.region(i, t, ns.ranks[i]);
        int64_t vol = 1;
        for (int32_t d = 0; d < ns.ranks[i]; ++d)
          vol *= reg[d].size();
        nbytes += vol * graph.tensors[node.inputs[i].tensor].elementBytes;
      }
      g.updDur.push_back(costs.updateTime(double(nbytes), eb));
      bool bwdDone = false;
      for (int32_t c = 0; c < C; ++c) {
        int32_t j = tileJoins[size_t(c) * T + t];
        if (j == t) {
          if (bwdDone)
            continue;
          bwdDone = true;
        }
        g.updPreds.push_back(j);
      }
    }
    g.updPredStart.push_back(static_cast<int32_t>(g.updPreds.size()));
  }

  void buildUpdates(int32_t n) {
    const NodeGeom &g = geom[n];
    Stage &st = stageMain;
    st.clear();
    int32_t base = beginOf(backwardBlock[n]);
    for (size_t u = 0; u < g.updDur.size(); ++u) {
      st.add(TaskKind::Update, g.devices[u], g.updDur[u]);
      for (int32_t k = g.updPredStart[u]; k < g.updPredStart[u + 1]; ++k)
        st.pred(base + g.updPreds[k]);
    }
  }

  /// A ring collective of `nbytes` over the sorted distinct devices
  /// scratchDevs (k > 1): an all-reduce, or with `scatter` a reduce-scatter
  /// of them (half the traffic and steps). Adds the task (on every ring
  /// link) to `st`.
  int32_t addAllReduce(Stage &st, int64_t nbytes,
                       TaskKind kind = TaskKind::AllReduce,
                       bool scatter = false) {
    return addRing(st, nbytes, kind, scatter ? 1.0 : 2.0);
  }
  /// A ring collective of `steps` passes of (k - 1) / k x `nbytes` over
  /// scratchDevs: an all-reduce is 2 (a reduce-scatter, then an all-gather),
  /// a reduce-scatter or an all-gather 1.
  int32_t addRing(Stage &st, int64_t nbytes, TaskKind kind, double steps) {
    int32_t k = static_cast<int32_t>(scratchDevs.size());
    double bwMin = 0, latMax = 0;
    scratchLinks.clear();
    for (int32_t j = 0; j < k; ++j) {
      int32_t l = linkOf(scratchDevs[j], scratchDevs[(j + 1) % k]);
      double bw = machine.linkBandwidth(l);
      bwMin = j == 0 ? bw : std::min(bwMin, bw);
      latMax = std::max(latMax, machine.linkLatency(l));
      scratchLinks.push_back(l);
    }
    std::sort(scratchLinks.begin(), scratchLinks.end());
    scratchLinks.erase(std::unique(scratchLinks.begin(), scratchLinks.end()),
                       scratchLinks.end());
    for (int32_t &l : scratchLinks)
      l += D;
    double factor = steps * (k - 1) / k;
    double time = factor * double(nbytes) / bwMin + steps * (k - 1) * latMax;
    int32_t ar = st.add(kind, 0, time, factor * double(nbytes));
    st.setResources(ar, scratchLinks);
    return ar;
  }

  /// Whether contributor c runs after contributor d in priority order (block
  /// index, then task).
  bool laterContributor(int32_t c, int32_t d) const {
    return contribBlock[c] != contribBlock[d]
               ? contribBlock[c] > contribBlock[d]
               : contribTask[c] > contribTask[d];
  }

  /// Per distinct region q of the contributors (keys), the last contributor
  /// on each device: lastOf[lastBegin[q], lastBegin[q + 1]). A device runs
  /// its tasks one at a time in priority order, so their ends never
  /// decrease along it: of the backward tasks a sync waits for on one
  /// device, the last in priority order ends last, and waiting for it
  /// alone gives the same start (a shared RNN weight's 40 steps x 64 tiles
  /// were ~1,800 predecessors per all-reduce). The readers are in node
  /// order, so latest first in the backward pass, and each one's tiles are
  /// in tile order (readerStart): visited backwards, the first contributor
  /// seen for a (region, device) is its last.
  void lastContributors(int32_t J) {
    lastOf.clear();
    touchedDevs.clear();
    for (size_t r = 0; r + 1 < readerStart.size(); ++r)
      for (int32_t c = readerStart[r + 1] - 1; c >= readerStart[r]; --c) {
        std::vector<int32_t> &seen = seenRegions[contribDev[c]];
        if (seen.empty())
          touchedDevs.push_back(contribDev[c]);
        if (std::find(seen.begin(), seen.end(), keys[c]) != seen.end())
          continue;
        seen.push_back(keys[c]);
        lastOf.push_back(c);
      }
    for (int32_t dev : touchedDevs)
      seenRegions[dev].clear();
    // Grouped by region (counting sort).
    lastBegin.assign(J + 1, 0);
    for (int32_t c : lastOf)
      ++lastBegin[keys[c] + 1];
    for (int32_t q = 0; q < J; ++q)
      lastBegin[q + 1] += lastBegin[q];
    order.resize(lastOf.size());
    for (int32_t c : lastOf)
      order[lastBegin[keys[c]]++] = c;
    for (int32_t q = J; q > 0; --q)
      lastBegin[q] = lastBegin[q - 1];
    lastBegin[0] = 0;
    lastOf.swap(order);
  }

  /// Sync(p): per distinct region of shared parameter p held by the
  /// readers' tiles, one all-reduce over the devices holding it (when more
  /// than one), after the backward tasks of every reader tile whose region
  /// meets it. Also prepares p's updates (one per region and device) and
  /// accounts its weights and gradients once per region and device.
  void buildSync(int32_t p) {
    SharedParam &sp = sharedParams[p];
    Block &bl = blocks[syncBlock[p]];
    Stage &st = stageMain;
    st.clear();
    const Tensor &tensor = graph.tensors[sp.tensor];
    int32_t rank = static_cast<int32_t>(tensor.shape.size());
    int32_t eb = tensor.elementBytes;
    distinctRanges.clear();
    keys.clear();
    contribTask.clear();
    contribDev.clear();
    contribBlock.clear();
    readerStart.clear();
    for (const auto &rd : sp.readers) {
      readerStart.push_back(static_cast<int32_t>(contribTask.size()));
      const NodeGeom &g = geom[rd.first];
      int32_t base = beginOf(backwardBlock[rd.first]);
      for (int32_t t = 0; t < g.tiles; ++t) {
        const Range *r = g.region(rd.second, t, rank);
        int64_t vol = 1;
        for (int32_t d = 0; d < rank; ++d)
          vol *= r[d].size();
        if (vol == 0)
          continue;
        size_t J = distinctRanges.size() / size_t(std::max(rank, 1));
        size_t j = 0;
        for (; j < J; ++j)
          if (std::equal(r, r + rank, distinctRanges.data() + j * rank))
            break;
        if (j == J)
          distinctRanges.insert(distinctRanges.end(), r, r + rank);
        keys.push_back(static_cast<int32_t>(j));
        contribTask.push_back(base + t);
        contribDev.push_back(g.devices[t]);
        contribBlock.push_back(backwardBlock[rd.first]);
      }
    }
    readerStart.push_back(static_cast<int32_t>(contribTask.size()));
    if (rank == 0 && !keys.empty())
      distinctRanges.clear(); // scalar: one region, no ranges
    int32_t J = rank == 0 ? (keys.empty() ? 0 : 1)
                          : static_cast<int32_t>(distinctRanges.size() / rank);
    lastContributors(J);
    // The regions synchronized (combinationRegions, shared with
    // soap-partition): the distinct ones when no two overlap, otherwise the
    // cells of the grid their bounds make. Grids of more than kMaxSyncCells
    // cells (readers split every which way, as random strategies do) keep
    // the distinct regions, each over the devices holding exactly it: an
    // approximation (overlaps counted once per region) that keeps the
    // simulation fast.
    constexpr size_t kMaxSyncCells = 64;
    syncBoxes.resize(J);
    for (int32_t q = 0; q < J; ++q) {
      syncBoxes[q].rank = rank;
      std::copy(distinctRanges.begin() + size_t(q) * rank,
                distinctRanges.begin() + size_t(q + 1) * rank,
                syncBoxes[q].dims.begin());
    }
    bool cellsMode =
        combinationRegions(syncBoxes, kMaxSyncCells, syncCells, cellBounds);
    const std::vector<Box> &regions = cellsMode ? syncCells : syncBoxes;
    int32_t K = static_cast<int32_t>(regions.size());
    sp.updDev.clear();
    sp.updDur.clear();
    sp.updPredStart.clear();
    sp.updPreds.clear();
    int64_t moved = 0;
    meets.resize(J);
    for (int32_t j = 0; j < K; ++j) {
      const Box &R = regions[j];
      int64_t nbytes = R.volume() * eb;
      for (int32_t q = 0; q < J; ++q)
        meets[q] = intersectionVolume(syncBoxes[q], R) > 0;
      // It waits for every contributor whose region meets it: on each
      // device, the last of them (predDevs). The devices holding the region:
      // for a cell, those with a region that meets it (and so covers it);
      // past kMaxSyncCells, those holding exactly it.
      predDevs.clear();
      scratchDevs.clear();
      for (int32_t q = 0; q < J; ++q) {
        if (!meets[q])
          continue;
        bool holds = cellsMode || q == j;
        for (int32_t i = lastBegin[q]; i < lastBegin[q + 1]; ++i) {
          int32_t c = lastOf[i], dev = contribDev[c];
          if (devLast[dev] < 0)
            predDevs.push_back(dev);
          if (devLast[dev] < 0 || laterContributor(c, devLast[dev]))
            devLast[dev] = c;
          if (holds)
            scratchDevs.push_back(dev);
        }
      }
      std::sort(scratchDevs.begin(), scratchDevs.end());
      scratchDevs.erase(std::unique(scratchDevs.begin(), scratchDevs.end()),
                        scratchDevs.end());
      int32_t k = static_cast<int32_t>(scratchDevs.size());
      int32_t ar = -1;
      if (k > 1) {
        ar = addAllReduce(st, nbytes);
        for (int32_t dev : predDevs)
          st.pred(contribTask[devLast[dev]]);
        moved += 2 * int64_t(k - 1) * nbytes;
      }
      double upd = costs.updateTime(double(nbytes), eb);
      for (int32_t dev : scratchDevs) {
        addMemory(bl, dev, 2 * nbytes); // weights and their gradient
        sp.updDev.push_back(dev);
        sp.updDur.push_back(upd);
        sp.updPredStart.push_back(static_cast<int32_t>(sp.updPreds.size()));
        if (ar >= 0) {
          sp.updPreds.push_back(~ar);
          continue;
        }
        for (int32_t d : predDevs)
          sp.updPreds.push_back(contribTask[devLast[d]]);
      }
      for (int32_t dev : predDevs)
        devLast[dev] = -1;
    }
    sp.updPredStart.push_back(static_cast<int32_t>(sp.updPreds.size()));
    bl.comm = moved;
    comm += moved;
  }

  void buildSharedUpdates(int32_t p) {
    const SharedParam &sp = sharedParams[p];
    Stage &st = stageMain;
    st.clear();
    int32_t base = beginOf(syncBlock[p]);
    for (size_t u = 0; u < sp.updDur.size(); ++u) {
      st.add(TaskKind::Update, sp.updDev[u], sp.updDur[u]);
      for (int32_t k = sp.updPredStart[u]; k < sp.updPredStart[u + 1]; ++k) {
        int32_t q = sp.updPreds[k];
        st.pred(q >= 0 ? q : base + ~q);
      }
    }
  }

  /// Whether the last FwdTransfers block built changed what later readers
  /// of its tensor find on their devices (updateHeldKey).
  bool heldChanged = false;

  /// Recomputes edata[e].heldKey; true when it changed.
  bool updateHeldKey(int32_t e) {
    EdgeData &pl = edata[e];
    if (laterReaders[e].empty()) // never set
      return false;
    const Edge &ed = edges[e];
    const NodeGeom &gc = geom[ed.consumer];
    int32_t rank = nstat[ed.consumer].ranks[ed.input];
    int32_t base = beginOf(fwdTransferBlock[e]);
    keyScratch.clear();
    for (int32_t k : pl.moved) {
      keyScratch.push_back(pl.a[k]);
      keyScratch.push_back(gc.devices[pl.b[k]]);
      keyScratch.push_back(base + pl.slot[k]);
      const Range *C = gc.region(ed.input, pl.b[k], rank);
      for (int32_t d = 0; d < rank; ++d) {
        keyScratch.push_back(C[d].lo);
        keyScratch.push_back(C[d].hi);
      }
    }
    if (keyScratch == pl.heldKey)
      return false;
    if (undo.live && firstSave(undo.held, e))
      pl.heldKey.swap(undo.edgeSlots[e].heldKey); // the old key, aside
    pl.heldKey.swap(keyScratch);
    return true;
  }

  /// Builds and commits block b.
  void buildBlock(int32_t b) {
    Block &bl = blocks[b];
    dropAccounting(bl);
    int32_t owner = blockOwner[b];
    auto resolve = [&](std::vector<int32_t> &ids) {
      for (int32_t &id : ids)
        if (id < 0)
          id = bl.begin + ~id;
    };
    switch (blockKind[b]) {
    case FwdTransfers:
      buildForwardEdge(owner);
      commit(b, stageMain);
      resolve(edata[owner].fwd);
      heldChanged = updateHeldKey(owner);
      break;
    case GradTransfers:
      buildGradientEdge(owner);
      commit(b, stageMain);
      resolve(edata[owner].grad);
      break;
    case ForwardBlock:
      buildForward(owner);
      commit(b, stageMain);
      break;
    case BackwardBlock:
      buildBackward(owner);
      commit(b, stageMain);
      break;
    case UpdateBlock:
      buildUpdates(owner);
      commit(b, stageMain);
      break;
    case SyncBlock:
      buildSync(owner);
      commit(b, stageMain);
      break;
    case SharedUpdBlock:
      buildSharedUpdates(owner);
      commit(b, stageMain);
      break;
    }
  }

  //===--------------------------------------------------------------------===//
  // Sweep
  //===--------------------------------------------------------------------===//

  /// Latest running end over the resources of a multi-resource task (0 for
  /// none).
  static double chainOfList(const double *cu, const int32_t *l, int32_t n) {
    double c = 0;
    for (int32_t i = 0; i < n; ++i)
      c = cu[l[i]] > c ? cu[l[i]] : c;
    return c;
  }
  static void setChainOfList(double *cu, const int32_t *l, int32_t n,
                             double e) {
    for (int32_t i = 0; i < n; ++i)
      cu[l[i]] = e;
  }

  /// Recomputes every task of block b. Returns whether some end changed.
  bool recompute(int32_t b) {
    const Block &bl = blocks[b];
    return recomputeRange<false>(bl.begin, bl.begin + bl.size, nullptr);
  }
  /// The same, logging the old ends for undo (UndoLog::sweptEnds: each
  /// task is logged once per delta, so the log never outgrows the pool).
  bool recomputeLogged(int32_t b) {
    const Block &bl = blocks[b];
    double *old = undo.sweptEnds.data() + undo.sweptUsed;
    undo.sweptUsed += bl.size;
    return recomputeRange<true>(bl.begin, bl.begin + bl.size, old);
  }

  /// The sweep's inner loop over tasks [t0, t1) of one block (raw pointers:
  /// no aliasing reloads); with Save, the old ends go to old[0, t1 - t0).
  template <bool Save>
  bool recomputeRange(int32_t t0, int32_t t1, double *__restrict old) {
    const int32_t *__restrict pb = predBegin.data();
    const int32_t *__restrict pp = predPool.data();
    const int32_t *__restrict rsp = res.data();
    const double *__restrict du = dur.data();
    double *__restrict en = end.data();
    double *__restrict cu = cur.data();
    uint64_t diff = 0; // some end's bits changed
    int32_t k = pb[t0];
    for (int32_t t = t0; t < t1; ++t) {
      double r = 0;
      // Few predecessors each: unrolling costs more than it saves.
#pragma clang loop unroll(disable)
      for (int32_t ke = pb[t + 1]; k < ke; ++k) {
        double v = en[pp[k]];
        r = v > r ? v : r;
      }
      int32_t rs = rsp[t];
      double c, e;
      if (__builtin_expect(rs >= 0, 1)) {
        c = cu[rs];
        e = (c > r ? c : r) + du[t];
        cu[rs] = e;
      } else {
        const int32_t *l = pp + ~rs;
        c = chainOfList(cu, l + 1, l[0]);
        e = (c > r ? c : r) + du[t];
        setChainOfList(cu, l + 1, l[0], e);
      }
      uint64_t nb, ob;
      std::memcpy(&nb, &e, sizeof nb);
      std::memcpy(&ob, en + t, sizeof ob);
      diff |= nb ^ ob;
      if (Save)
        old[t - t0] = en[t];
      en[t] = e;
    }
    return diff != 0;
  }

  /// A block before the first changed one: its tasks keep their times;
  /// only the running ends of their resources are replayed.
  void replay(int32_t b) {
    const Block &bl = blocks[b];
    double *cu = cur.data();
    for (int32_t t = bl.begin, e = bl.begin + bl.size; t < e; ++t) {
      int32_t rs = res[t];
      if (rs >= 0) {
        cu[rs] = end[t];
      } else {
        int32_t nl;
        const int32_t *l = resourceList(t, nl);
        setChainOfList(cu, l, nl, end[t]);
      }
    }
  }

  void markSuccessors(int32_t b) {
    for (int32_t k = succBegin[b]; k < succBegin[b + 1]; ++k) {
      int32_t s = succs[k];
      if (!inputDirty[s]) {
        inputDirty[s] = 1;
        ++pendingDirty;
      }
    }
  }

  double *snapshot(int32_t b) {
    return snapshots.data() + size_t(b / kCheckpoint) * R;
  }

  void full() {
    undo.live = false;
    poolSize = predPoolSize = 0;
    for (Block &bl : blocks) {
      bl.begin = bl.pbegin = -1;
      bl.memory.clear();
      bl.comm = 0;
    }
    std::fill(memory.begin(), memory.end(), 0);
    comm = 0;
    for (int32_t n = 0; n < N; ++n)
      computeGeometry(n);
    liveRefill = true;
    std::fill(cur.begin(), cur.end(), 0.0);
    for (int32_t b = 0; b < NB; ++b) {
      if (b % kCheckpoint == 0)
        std::copy(cur.begin(), cur.end(), snapshot(b));
      buildBlock(b);
      recompute(b);
    }
    finalEnd = cur;
  }

  /// Re-simulates after the configs of `nodes` (distinct) changed.
  void delta(const int32_t *nodes, size_t count) {
    assert(undo.live && "beginUndo() starts every delta");
    // Which edges into the changing nodes could group their gradients
    // before the change (sameGroup: their tensor's other readers' rings
    // may have summed theirs).
    for (size_t i = 0; i < count; ++i)
      for (int32_t e : nstat[nodes[i]].inEdges)
        mayGroupBefore[e] = mayGroup(e);
    for (size_t i = 0; i < count; ++i) {
      computeGeometry(nodes[i]);
      markLive(nodes[i]);
    }
    int32_t first = NB, last = -1;
    auto flag = [&](int32_t b, uint8_t how) {
      rebuild[b] = std::max(rebuild[b], how);
      first = std::min(first, b);
      last = std::max(last, b);
    };
    auto changing = [&](int32_t m) {
      return std::find(nodes, nodes + count, m) != nodes + count;
    };
    // An edge's gradient groups may share their ring with its tensor's
    // other readers' (sameGroup): those that may group, before or after
    // the change, are rebuilt with it.
    auto mayHaveGrouped = [&](int32_t e) {
      return mayGroup(e) || (changing(edges[e].consumer) && mayGroupBefore[e]);
    };
    auto flagGradient = [&](int32_t e) {
      flag(gradTransferBlock[e], Rebuild);
      if (!mayHaveGrouped(e))
        return;
      for (int32_t f : earlierReaders[e])
        if (mayHaveGrouped(f))
          flag(gradTransferBlock[f], Rebuild);
      for (int32_t f : laterReaders[e])
        if (mayHaveGrouped(f))
          flag(gradTransferBlock[f], Rebuild);
    };
    for (size_t i = 0; i < count; ++i) {
      int32_t n = nodes[i];
      flag(forwardBlock[n], Rebuild);
      flag(backwardBlock[n], Rebuild);
      flag(updateBlock[n], Rebuild);
      // The syncs of the shared parameters it reads (every reader's tiles
      // feed them) and their updates.
      for (int32_t p : nstat[n].shared) {
        flag(syncBlock[p], Rebuild);
        flag(sharedUpdBlock[p], Rebuild);
      }
      // The neighbours' blocks keep their tasks but read the rebuilt edges'
      // delivery lists: relinked in place.
      for (int32_t e : nstat[n].inEdges) {
        flag(fwdTransferBlock[e], Rebuild);
        flagGradient(e);
        flag(backwardBlock[edges[e].producer], Relink);
        // A split reduction before n whose groups now combine otherwise
        // (reduce-scatter or all-reduce: n's tiles are among the readers)
        // rebuilds its forward block and what its consumers receive (a
        // changing producer rebuilds them anyway).
        int32_t p = edges[e].producer;
        if (geom[p].reduction > 1 && (changing(p) || scatterChanged(p))) {
          flag(forwardBlock[p], Rebuild);
          for (int32_t e2 : nstat[p].outEdges) {
            flag(fwdTransferBlock[e2], Rebuild);
            flag(forwardBlock[edges[e2].consumer], Relink);
            // Which readers' gradient parts are sent with an earlier
            // reader's depends on the groups' chunks.
            flag(gradTransferBlock[e2], Rebuild);
          }
        }
        // Later readers of a split reduction's sums send less or more of
        // their gradient parts with n's.
        if (geom[p].reduction > 1)
          for (int32_t later : laterReaders[e])
            flag(gradTransferBlock[later], Rebuild);
      }
      for (int32_t e : nstat[n].outEdges) {
        flag(fwdTransferBlock[e], Rebuild);
        flag(gradTransferBlock[e], Rebuild);
        flag(forwardBlock[edges[e].consumer], Relink);
      }
    }
    undo.sweepFirst = first;
    int32_t b0 = first / kCheckpoint * kCheckpoint;
    std::copy(snapshot(b0), snapshot(b0) + R, cur.begin());
    int32_t b = b0;
    for (; b < NB; ++b) {
      if (b % kCheckpoint == 0 && b != b0) {
        // The checkpoint still holds the old schedule's running ends here:
        // when they match and no later block reads a changed task, the
        // rest of the schedule is the old one.
        double *snap = snapshot(b);
        if (b > last && pendingDirty == 0 &&
            std::equal(cur.begin(), cur.end(), snap))
          break;
        saveCheckpoint(b);
        std::copy(cur.begin(), cur.end(), snap);
      }
      if (b < first) {
        replay(b);
        continue;
      }
      bool changed;
      if (rebuild[b]) {
        uint8_t how = rebuild[b];
        rebuild[b] = Keep;
        if (inputDirty[b]) {
          inputDirty[b] = 0;
          --pendingDirty;
        }
        // Rebuilt: new tasks; relinked: same tasks in the same slots, new
        // predecessor lists.
        saveBlock(b);
        buildBlock(b);
        // Later readers of the tensor find more or less of it on their
        // devices, or it comes in other tasks.
        if (blockKind[b] == FwdTransfers && heldChanged)
          for (int32_t later : laterReaders[blockOwner[b]]) {
            flag(fwdTransferBlock[later], Rebuild);
            flagGradient(later);
            flag(forwardBlock[edges[later].consumer], Relink);
          }
        processed += blocks[b].size;
        changed = recompute(b) || how == Rebuild;
      } else {
        // Past the first change everything is recomputed (cheaper than
        // finding what did not move: usually everything did).
        if (inputDirty[b]) {
          inputDirty[b] = 0;
          --pendingDirty;
        }
        processed += blocks[b].size;
        changed = recomputeLogged(b);
      }
      if (changed)
        markSuccessors(b);
    }
    undo.sweepEnd = b;
    if (b >= NB)
      finalEnd = cur;
    // An early stop leaves blocks marked input-dirty only before it.
    assert(pendingDirty == 0);
  }

  //===--------------------------------------------------------------------===//
  // Undo (UndoLog)
  //===--------------------------------------------------------------------===//

  /// Starts the log of a delta, before anything changes.
  void beginUndo() {
    UndoLog &u = undo;
    u.clearLogs();
    if (++u.stamp == 0) { // wrapped around: forget every old stamp
      for (UndoLog::Saved *p : u.parts())
        std::fill(p->stamps.begin(), p->stamps.end(), 0);
      u.stamp = 1;
    }
    u.memory = memory;
    u.finalEnd = finalEnd;
    u.comm = comm;
    u.poolSize = poolSize;
    u.predPoolSize = predPoolSize;
    if (u.sweptEnds.size() < size_t(poolSize))
      u.sweptEnds.resize(poolSize);
    u.live = true;
  }

  /// Whether entity i's part `p` is still unsaved in this delta; marks it
  /// saved.
  bool firstSave(UndoLog::Saved &p, int32_t i) {
    if (p.stamps[i] == undo.stamp)
      return false;
    p.stamps[i] = undo.stamp;
    p.list.push_back(i);
    return true;
  }

  /// The tasks of block b, before it is rebuilt: everything commit() and
  /// the sweep write.
  void saveTasks(int32_t b) {
    const Block &bl = blocks[b];
    UndoLog &u = undo;
    u.ranges.push_back({bl.begin, bl.size, bl.pbegin, bl.psize});
    auto append = [&](auto &to, const auto &from, int32_t at, int32_t n) {
      to.insert(to.end(), from.begin() + at, from.begin() + at + n);
    };
    append(u.ends, end, bl.begin, bl.size);
    append(u.durs, dur, bl.begin, bl.size);
    append(u.moved, bytes, bl.begin, bl.size);
    append(u.resources, res, bl.begin, bl.size);
    append(u.kinds, kind, bl.begin, bl.size);
    append(u.predBegins, predBegin, bl.begin, bl.size + 1);
    append(u.preds, predPool, bl.pbegin, bl.psize);
  }

  /// Block b before buildBlock(b): its header, its tasks and the entity
  /// whose state its builder writes.
  void saveBlock(int32_t b) {
    UndoLog &u = undo;
    int32_t owner = blockOwner[b];
    switch (blockKind[b]) {
    case FwdTransfers:
      if (firstSave(u.fwdLists, owner))
        edata[owner].swapForwardLists(u.edgeSlots[owner]);
      break;
    case GradTransfers:
      if (firstSave(u.gradLists, owner))
        edata[owner].swapGradientLists(u.edgeSlots[owner]);
      break;
    case ForwardBlock:
      if (firstSave(u.fwdOuts, owner))
        u.nodeSlots[owner].copyForwardOutputs(geom[owner]);
      break;
    case BackwardBlock: // its updates' lists: see NodeGeom
    case UpdateBlock:   // reads the node's state, writes none of it
      break;
    case SyncBlock:
    case SharedUpdBlock:
      if (firstSave(u.shared, owner))
        u.sharedSlots[owner] = sharedParams[owner];
      break;
    }
    if (firstSave(u.blocks, b))
      u.blockSlots[b] = blocks[b];
    saveTasks(b);
  }

  void saveCheckpoint(int32_t b) {
    undo.checkpoints.push_back(b);
    undo.checkpointValues.insert(undo.checkpointValues.end(), snapshot(b),
                                 snapshot(b) + R);
  }

  /// Puts back everything the last delta changed. False when there is
  /// nothing to undo.
  bool undoDelta() {
    UndoLog &u = undo;
    if (!u.live)
      return false;
    u.live = false;
    // The recomputed blocks (their ranges did not move; distinct from the
    // rebuilt blocks' old ranges).
    const double *old = u.sweptEnds.data();
    for (int32_t b = u.sweepFirst; b < u.sweepEnd; ++b) {
      if (u.blocks.stamps[b] == u.stamp) // rebuilt: below
        continue;
      const Block &bl = blocks[b];
      std::copy_n(old, bl.size, end.begin() + bl.begin);
      old += bl.size;
    }
    assert(old == u.sweptEnds.data() + u.sweptUsed);
    size_t kd = u.durs.size(), kp = u.predBegins.size(), kq = u.preds.size();
    for (size_t i = u.ranges.size(); i-- > 0;) {
      const UndoLog::TaskRange &r = u.ranges[i];
      kd -= r.size;
      std::copy_n(u.ends.begin() + kd, r.size, end.begin() + r.begin);
      std::copy_n(u.durs.begin() + kd, r.size, dur.begin() + r.begin);
      std::copy_n(u.moved.begin() + kd, r.size, bytes.begin() + r.begin);
      std::copy_n(u.resources.begin() + kd, r.size, res.begin() + r.begin);
      std::copy_n(u.kinds.begin() + kd, r.size, kind.begin() + r.begin);
      kp -= r.size + 1;
      std::copy_n(u.predBegins.begin() + kp, r.size + 1,
                  predBegin.begin() + r.begin);
      kq -= r.psize;
      std::copy_n(u.preds.begin() + kq, r.psize, predPool.begin() + r.pbegin);
    }
    for (size_t i = u.checkpoints.size(); i-- > 0;)
      std::copy_n(u.checkpointValues.begin() + i * R, R,
                  snapshot(u.checkpoints[i]));
    // The parts (each saved once, so in any order).
    for (int32_t b : u.blocks.list)
      std::swap(blocks[b], u.blockSlots[b]);
    for (int32_t n : u.devicesOf) { // every changed node
      geom[n].swapDevices(u.nodeSlots[n]);
      markLive(n);
    }
    for (int32_t n : u.shapeOf)
      geom[n].swapShape(u.nodeSlots[n]);
    for (int32_t n : u.fwdOuts.list)
      geom[n].swapForwardOutputs(u.nodeSlots[n]);
    for (int32_t e : u.pairs.list)
      edata[e].swapPairs(u.edgeSlots[e]);
    for (int32_t e : u.fwdLists.list)
      edata[e].swapForwardLists(u.edgeSlots[e]);
    for (int32_t e : u.gradLists.list)
      edata[e].swapGradientLists(u.edgeSlots[e]);
    for (int32_t e : u.held.list)
      edata[e].heldKey.swap(u.edgeSlots[e].heldKey);
    for (int32_t p : u.shared.list)
      std::swap(sharedParams[p], u.sharedSlots[p]);
    std::swap(memory, u.memory);
    std::swap(finalEnd, u.finalEnd);
    comm = u.comm;
    // A rebuilt block that moved to the end of the pools is back in its old
    // range: its new one is free again (else every undone move would leak).
    poolSize = u.poolSize;
    predPoolSize = u.predPoolSize;
    return true;
  }

  double iterationTime() const {
    double m = 0;
    for (double v : finalEnd)
      m = std::max(m, v);
    return m;
  }
};

//===----------------------------------------------------------------------===//
// Simulator
//===----------------------------------------------------------------------===//

Simulator::Simulator(const OpGraph &graph, const Machine &machine,
                     const CostModel &costs)
    : graph(graph), machine(machine), costs(costs),
      impl(new Impl(this->graph, this->machine, this->costs, current)) {
  assert(graph.validate().empty() && validateForTiling(graph).empty());
  impl->init();
}

Simulator::~Simulator() { delete impl; }

int32_t Simulator::numResources() const {
  return machine.numDevices() + machine.numLinks();
}

std::string Simulator::resourceName(int32_t resource) const {
  if (resource < machine.numDevices())
    return "gpu " + std::to_string(resource);
  return machine.linkName(resource - machine.numDevices());
}

double Simulator::simulateFull(const Strategy &strategy) {
  assert(validateStrategy(graph, strategy, machine.numDevices()).empty());
  // Element-wise, reusing the vectors' storage.
  current.configs.resize(strategy.configs.size());
  for (size_t n = 0; n < strategy.configs.size(); ++n) {
    current.configs[n].degrees.assign(strategy.configs[n].degrees.begin(),
                                      strategy.configs[n].degrees.end());
    current.configs[n].devices.assign(strategy.configs[n].devices.begin(),
                                      strategy.configs[n].devices.end());
    current.configs[n].recompute = strategy.configs[n].recompute;
  }
  impl->full();
  commBytes = impl->comm;
  iterationSeconds = impl->iterationTime();
  return iterationSeconds;
}

double Simulator::simulateDelta(int32_t n, const ParallelConfig &config) {
  return simulateDelta(&n, &config, 1);
}

double Simulator::simulateDelta(const int32_t *nodes,
                                const ParallelConfig *configs, size_t count) {
  assert(impl->poolSize > 0 && "simulateDelta needs a simulateFull first");
  UndoLog &u = impl->undo;
  impl->beginUndo();
  u.iterationSeconds = iterationSeconds;
  u.commBytes = commBytes;
  if (u.configs.size() < count)
    u.configs.resize(count);
  for (size_t i = 0; i < count; ++i) {
    int32_t n = nodes[i];
    assert(validateConfig(graph.nodes[n], configs[i], machine.numDevices())
               .empty());
    assert(std::count(nodes, nodes + count, n) == 1 && "nodes not distinct");
    u.configNodes.push_back(n);
    u.configs[i].degrees.assign(current.configs[n].degrees.begin(),
                                current.configs[n].degrees.end());
    u.configs[i].devices.assign(current.configs[n].devices.begin(),
                                current.configs[n].devices.end());
    u.configs[i].recompute = current.configs[n].recompute;
    current.configs[n].degrees.assign(configs[i].degrees.begin(),
                                      configs[i].degrees.end());
    current.configs[n].devices.assign(configs[i].devices.begin(),
                                      configs[i].devices.end());
    current.configs[n].recompute = configs[i].recompute;
  }
  impl->delta(nodes, count);
  commBytes = impl->comm;
  iterationSeconds = impl->iterationTime();
  return iterationSeconds;
}

bool Simulator::undoDelta() {
  if (!impl->undoDelta())
    return false;
  UndoLog &u = impl->undo;
  for (size_t i = 0; i < u.configNodes.size(); ++i)
    std::swap(current.configs[u.configNodes[i]], u.configs[i]);
  iterationSeconds = u.iterationSeconds;
  commBytes = u.commBytes;
  return true;
}

int64_t Simulator::peakMemoryBytes() const {
  std::vector<int64_t> &peak = impl->peakScratchOut;
  impl->peakPerDevice(peak);
  int64_t m = 0;
  for (int64_t v : peak)
    m = std::max(m, v);
  return m;
}

bool Simulator::overCapacity() const {
  if (impl->fitsForSure(machine.device.memoryBytes))
    return false;
  return peakMemoryBytes() > machine.device.memoryBytes;
}

int64_t Simulator::deltaTasksProcessed() const { return impl->processed; }

SimulationReport Simulator::report() const {
  const Impl &im = *impl;
  SimulationReport r;
  r.iterationSeconds = iterationSeconds;
  int32_t D = machine.numDevices();
  r.deviceBusySeconds.assign(D, 0.0);
  r.linkBusySeconds.assign(machine.numLinks(), 0.0);
  auto busy = [&](int32_t res, double d) {
    if (res < D)
      r.deviceBusySeconds[res] += d;
    else
      r.linkBusySeconds[res - D] += d;
  };
  // Sum in priority order for a deterministic result.
  for (int32_t b = 0; b < im.NB; ++b) {
    const Block &bl = im.blocks[b];
    for (int32_t t = bl.begin, e = bl.begin + bl.size; t < e; ++t) {
      int32_t res = im.res[t];
      if (res >= 0) {
        busy(res, im.dur[t]);
        continue;
      }
      int32_t n;
      const int32_t *l = im.resourceList(t, n);
      for (int32_t i = 0; i < n; ++i)
        busy(l[i], im.dur[t]);
    }
    r.numTasks += bl.size;
  }
  r.communicationBytes = commBytes;
  im.peakPerDevice(r.memoryBytesPerDevice);
  r.peakMemoryBytes = peakMemoryBytes();
  for (int32_t d = 0; d < D && r.peakMemoryDevice < 0; ++d)
    if (r.memoryBytesPerDevice[d] == r.peakMemoryBytes)
      r.peakMemoryDevice = d;
  if (r.peakMemoryDevice >= 0) {
    int32_t at = im.timeline.peakPosition(r.peakMemoryDevice);
    if (at >= 0)
      std::tie(r.peakMemoryNode, r.peakMemoryInBackward) = im.taskAt(at);
  }
  r.overCapacity = overCapacity();
  return r;
}

std::vector<ScheduledTask> Simulator::scheduledTasks() const {
  const Impl &im = *impl;
  std::vector<ScheduledTask> tasks;
  // Start times from a replay of the resources' running ends.
  std::vector<double> last(numResources(), 0.0);
  for (int32_t b = 0; b < im.NB; ++b) {
    const Block &bl = im.blocks[b];
    for (int32_t t = bl.begin, e = bl.begin + bl.size; t < e; ++t) {
      int32_t one = im.res[t], n = 1;
      const int32_t *l = one >= 0 ? &one : im.resourceList(t, n);
      double c = 0, r = im.readyOf(t);
      for (int32_t i = 0; i < n; ++i)
        c = last[l[i]] > c ? last[l[i]] : c;
      ScheduledTask st{static_cast<TaskKind>(im.kind[t]), im.blockNode[b],
                       -1, c > r ? c : r, im.end[t], im.bytes[t]};
      if (n == 0)
        tasks.push_back(st);
      for (int32_t i = 0; i < n; ++i) {
        st.resource = l[i];
        tasks.push_back(st);
        last[l[i]] = im.end[t];
      }
    }
  }
  return tasks;
}

std::string Simulator::verifySchedule() const {
  const Impl &im = *impl;
  // Position of every live task in priority order.
  std::vector<int64_t> pos(im.dur.size(), -1);
  int64_t p = 0;
  for (int32_t b = 0; b < im.NB; ++b) {
    const Block &bl = im.blocks[b];
    if (bl.begin < 0)
      return "block " + std::to_string(b) + " never built";
    for (int32_t t = bl.begin, e = bl.begin + bl.size; t < e; ++t)
      pos[t] = p++;
  }
  std::vector<double> last(numResources(), 0.0);
  auto describe = [&](int32_t b, int32_t t) {
    return std::string(taskKindName(static_cast<TaskKind>(im.kind[t]))) +
           " of " + graph.nodes[im.blockNode[b]].name + " end " +
           std::to_string(im.end[t] * 1e6);
  };
  for (int32_t b = 0; b < im.NB; ++b) {
    const Block &bl = im.blocks[b];
    for (int32_t t = bl.begin, e = bl.begin + bl.size; t < e; ++t) {
      double r = 0;
      for (int32_t k = im.predBegin[t]; k < im.predBegin[t + 1]; ++k) {
        int32_t q = im.predPool[k];
        if (q < 0 || q >= static_cast<int32_t>(pos.size()) || pos[q] < 0 ||
            pos[q] >= pos[t])
          return "predecessor not before its successor: " + describe(b, t);
        r = std::max(r, im.end[q]);
      }
      int32_t one = im.res[t], n = 1;
      const int32_t *l = one >= 0 ? &one : im.resourceList(t, n);
      double c = 0;
      for (int32_t i = 0; i < n; ++i)
        c = std::max(c, last[l[i]]);
      double s = std::max(r, c);
      if (im.end[t] != s + im.dur[t])
        return "wrong end" +
               (n > 0 ? " on " + resourceName(l[0]) : std::string()) + ": " +
               describe(b, t);
      for (int32_t i = 0; i < n; ++i)
        last[l[i]] = im.end[t];
    }
  }
  for (int32_t r = 0; r < numResources(); ++r)
    if (last[r] != im.finalEnd[r])
      return "stale final end of " + resourceName(r);
  double m = 0;
  for (double v : last)
    m = std::max(m, v);
  if (m != iterationSeconds)
    return "iteration time is not the latest end";
  return "";
}
