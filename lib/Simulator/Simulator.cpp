//===- Simulator.cpp - Execution simulator (FlexFlow §5) ------------------===//
//
// Task graph in flat per-slot arrays (slots reused through a free list, so a
// simulation in the steady state allocates nothing new); tasks grouped into
// units that are rebuilt together: unit n < N holds node n's own tasks,
// unit N + e the tasks of edge e. See Simulator.h for the model.
//
//===----------------------------------------------------------------------===//

#include "soap/Simulator/Simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>

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
    return "partial sum";
  case TaskKind::Combine:
    return "combine";
  case TaskKind::Join:
    return "join";
  case TaskKind::AllReduce:
    return "all-reduce";
  case TaskKind::Update:
    return "update";
  }
  return "unknown";
}

namespace {

/// Canonical rank: stage (forward 0 / backward 1), node field (the node in
/// forward, N-1-node in backward), sub-kind, then an index. Every edge goes
/// from a smaller to a larger rank; ranks do not depend on slot numbers.
uint64_t makeRank(uint64_t stage, uint64_t nodeField, uint64_t sub,
                  uint64_t rest) {
  assert(nodeField < (1u << 15) && sub < 16 && rest < (uint64_t(1) << 44));
  return (stage << 63) | (nodeField << 48) | (sub << 44) | rest;
}

struct Edge {
  int32_t producer, consumer, input, output;
};

struct NodeData {
  int32_t tiles = 0;
  std::vector<int32_t> fwd, bwd;
  /// Task providing tile t's final output (F, or its group's combine), its
  /// device, and whether t is the first tile of its group (the owner).
  std::vector<int32_t> source, sourceDevice;
  std::vector<uint8_t> isSource;
  /// Regions per tile: [t * numInputs + i], [t * numOutputs + o].
  std::vector<Box> inRegions, outRegions;
};

struct Unit {
  std::vector<int32_t> tasks;
  std::vector<std::pair<int32_t, int64_t>> memory;
  int64_t comm = 0;
};

struct HeapItem {
  double ready;
  uint64_t rank;
  int32_t task;
  /// Min-heap order for std::push_heap (which builds a max-heap).
  bool operator<(const HeapItem &o) const {
    if (ready != o.ready)
      return ready > o.ready;
    return rank > o.rank;
  }
};

} // namespace

struct Simulator::Impl {
  // Per slot.
  std::vector<double> dur, ready, start, end, seqReady, bytes;
  std::vector<uint64_t> rank;
  std::vector<int32_t> res, node, predCount;
  std::vector<uint8_t> kind, alive, pending, inSeq, fresh;
  std::vector<std::vector<int32_t>> preds, succs;
  std::vector<int32_t> freeSlots;

  std::vector<Unit> units;
  std::vector<NodeData> nodes;
  std::vector<Edge> edges;
  std::vector<std::vector<int32_t>> nodeEdges; // incident edges per node
  std::vector<double> nodeFullBytes;

  std::vector<std::vector<int32_t>> seqs; // per resource, sorted by key
  std::vector<double> resEnd;             // full simulation scratch
  std::vector<HeapItem> heap;
  std::vector<int64_t> memory; // per device
  bool deltaMode = false;
  /// Tasks processed by delta simulations (statistics).
  int64_t processed = 0;

  // Scratch.
  std::vector<int32_t> scratchA, scratchB, ownerComb;

  int32_t newTask(int32_t unit, TaskKind k, int32_t owner, int32_t resource,
                  double duration, uint64_t rk, double moved = 0) {
    int32_t t;
    if (!freeSlots.empty()) {
      t = freeSlots.back();
      freeSlots.pop_back();
    } else {
      t = static_cast<int32_t>(dur.size());
      dur.push_back(0);
      ready.push_back(0);
      start.push_back(0);
      end.push_back(0);
      seqReady.push_back(0);
      bytes.push_back(0);
      rank.push_back(0);
      res.push_back(-1);
      node.push_back(-1);
      predCount.push_back(0);
      kind.push_back(0);
      alive.push_back(0);
      pending.push_back(0);
      inSeq.push_back(0);
      fresh.push_back(0);
      preds.emplace_back();
      succs.emplace_back();
    }
    dur[t] = duration;
    ready[t] = start[t] = end[t] = seqReady[t] = 0;
    bytes[t] = moved;
    rank[t] = rk;
    res[t] = resource;
    node[t] = owner;
    kind[t] = static_cast<uint8_t>(k);
    alive[t] = 1;
    pending[t] = 0;
    inSeq[t] = 0;
    fresh[t] = 1;
    preds[t].clear();
    succs[t].clear();
    units[unit].tasks.push_back(t);
    return t;
  }

  void addEdge(int32_t u, int32_t v) {
    assert(rank[u] < rank[v] && "task ranks must be topological");
    succs[u].push_back(v);
    preds[v].push_back(u);
    if (deltaMode && !fresh[v])
      mark(v);
  }

  double readyFromPreds(int32_t t) const {
    double r = 0;
    for (int32_t p : preds[t])
      r = std::max(r, end[p]);
    return r;
  }

  void mark(int32_t t) {
    if (!alive[t])
      return;
    pending[t] = 1;
    heap.push_back({readyFromPreds(t), rank[t], t});
    std::push_heap(heap.begin(), heap.end());
  }

  /// Position of t in its resource sequence (binary search on its key).
  size_t seqPos(int32_t t) const {
    const std::vector<int32_t> &seq = seqs[res[t]];
    double r = seqReady[t];
    uint64_t rk = rank[t];
    auto it = std::lower_bound(seq.begin(), seq.end(), t, [&](int32_t a, int32_t) {
      return seqReady[a] < r || (seqReady[a] == r && rank[a] < rk);
    });
    assert(it != seq.end() && *it == t);
    return static_cast<size_t>(it - seq.begin());
  }

  /// A task's start depends on the task just before it on its resource
  /// (identity and end time): whenever either changes, the task at `pos`
  /// (the new neighbour) is marked. Pending tasks are processed anyway.
  void markAt(const std::vector<int32_t> &seq, size_t pos) {
    if (pos < seq.size() && !pending[seq[pos]])
      mark(seq[pos]);
  }

  void removeUnit(int32_t u, std::vector<int64_t> &mem, int64_t &comm) {
    Unit &unit = units[u];
    for (int32_t t : unit.tasks) {
      for (int32_t p : preds[t]) {
        std::vector<int32_t> &s = succs[p];
        s.erase(std::remove(s.begin(), s.end(), t), s.end());
      }
      for (int32_t s : succs[t]) {
        std::vector<int32_t> &p = preds[s];
        p.erase(std::remove(p.begin(), p.end(), t), p.end());
      }
      if (deltaMode)
        for (int32_t s : succs[t])
          mark(s);
      if (inSeq[t]) {
        std::vector<int32_t> &seq = seqs[res[t]];
        size_t pos = seqPos(t);
        seq.erase(seq.begin() + pos);
        inSeq[t] = 0;
        if (deltaMode)
          markAt(seq, pos);
      }
      preds[t].clear();
      succs[t].clear();
      alive[t] = 0;
      pending[t] = 0;
      freeSlots.push_back(t);
    }
    unit.tasks.clear();
    for (auto &m : unit.memory)
      mem[m.first] -= m.second;
    unit.memory.clear();
    comm -= unit.comm;
    unit.comm = 0;
  }

  /// Algorithm 2's propagation: processes pending tasks in key order.
  void propagate() {
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      HeapItem item = heap.back();
      heap.pop_back();
      int32_t t = item.task;
      if (!alive[t] || !pending[t] || rank[t] != item.rank)
        continue;
      double r = 0;
      bool blocked = false;
      for (int32_t p : preds[t]) {
        if (pending[p]) {
          blocked = true;
          break;
        }
        r = std::max(r, end[p]);
      }
      // A blocked task is pushed again when its pending predecessor is
      // processed; an entry with an outdated ready time has a newer twin.
      if (blocked || r != item.ready)
        continue;
      ready[t] = r;
      ++processed;
      double s = r;
      int32_t rs = res[t];
      if (rs >= 0) {
        std::vector<int32_t> &seq = seqs[rs];
        if (inSeq[t] && seqReady[t] != r) {
          size_t pos = seqPos(t);
          seq.erase(seq.begin() + pos);
          inSeq[t] = 0;
          markAt(seq, pos);
        }
        size_t pos;
        if (!inSeq[t]) {
          uint64_t rk = rank[t];
          auto it = std::lower_bound(
              seq.begin(), seq.end(), t, [&](int32_t a, int32_t) {
                return seqReady[a] < r || (seqReady[a] == r && rank[a] < rk);
              });
          pos = static_cast<size_t>(it - seq.begin());
          seq.insert(it, t);
          seqReady[t] = r;
          inSeq[t] = 1;
          markAt(seq, pos + 1);
        } else {
          pos = seqPos(t);
        }
        // The previous task's current end, even if it is pending: when it is
        // processed and its end changes (or it moves), it marks this one.
        if (pos > 0)
          s = std::max(r, end[seq[pos - 1]]);
      }
      double e = s + dur[t];
      pending[t] = 0;
      start[t] = s;
      if (fresh[t] || e != end[t]) {
        fresh[t] = 0;
        end[t] = e;
        for (int32_t x : succs[t])
          mark(x);
        if (rs >= 0) {
          const std::vector<int32_t> &seq = seqs[rs];
          markAt(seq, seqPos(t) + 1);
        }
      } else {
        for (int32_t x : succs[t])
          if (pending[x])
            mark(x);
      }
    }
  }

  /// Algorithm 1 over all live tasks.
  void fullSimulation(int32_t numResources) {
    for (auto &seq : seqs)
      seq.clear();
    resEnd.assign(numResources, 0.0);
    heap.clear();
    int32_t slots = static_cast<int32_t>(dur.size());
    for (int32_t t = 0; t < slots; ++t) {
      if (!alive[t])
        continue;
      ready[t] = 0;
      pending[t] = 0;
      fresh[t] = 0;
      inSeq[t] = 0;
      predCount[t] = static_cast<int32_t>(preds[t].size());
      if (predCount[t] == 0)
        heap.push_back({0.0, rank[t], t});
    }
    std::make_heap(heap.begin(), heap.end());
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      HeapItem item = heap.back();
      heap.pop_back();
      int32_t t = item.task;
      double r = ready[t];
      double s = r;
      int32_t rs = res[t];
      if (rs >= 0) {
        s = std::max(r, resEnd[rs]);
        seqs[rs].push_back(t);
        seqReady[t] = r;
        inSeq[t] = 1;
      }
      double e = s + dur[t];
      start[t] = s;
      end[t] = e;
      if (rs >= 0)
        resEnd[rs] = e;
      for (int32_t x : succs[t]) {
        ready[x] = std::max(ready[x], e);
        if (--predCount[x] == 0) {
          heap.push_back({ready[x], rank[x], x});
          std::push_heap(heap.begin(), heap.end());
        }
      }
    }
  }

  double iterationTime() const {
    double m = 0;
    for (const auto &seq : seqs)
      if (!seq.empty())
        m = std::max(m, end[seq.back()]);
    return m;
  }
};

//===----------------------------------------------------------------------===//
// Building units
//===----------------------------------------------------------------------===//

namespace {

struct Builder {
  const OpGraph &graph;
  const Machine &machine;
  const CostModel &costs;
  const Strategy &strategy;
  Simulator::Impl &im;
  std::vector<int64_t> &memory;
  int64_t &comm;

  int32_t numDevices() const { return machine.numDevices(); }
  int32_t numNodes() const { return static_cast<int32_t>(graph.nodes.size()); }

  void addMemory(Unit &u, int32_t device, int64_t b) {
    if (b == 0)
      return;
    u.memory.push_back({device, b});
    memory[device] += b;
  }

  int32_t transfer(int32_t unit, TaskKind k, int32_t owner, int32_t src,
                   int32_t dst, int64_t nbytes, uint64_t rk) {
    int32_t link = machine.linkBetween(src, dst);
    double time = machine.linkLatency(link) +
                  double(nbytes) / machine.linkBandwidth(link);
    im.units[unit].comm += nbytes;
    comm += nbytes;
    return im.newTask(unit, k, owner, numDevices() + link, time, rk,
                      double(nbytes));
  }

  void buildNode(int32_t n) {
    const Node &node = graph.nodes[n];
    const ParallelConfig &cfg = strategy.configs[n];
    NodeData &nd = im.nodes[n];
    Unit &unit = im.units[n];
    int32_t T = cfg.numTiles();
    int32_t L = node.numLoops();
    int32_t NI = static_cast<int32_t>(node.inputs.size());
    int32_t NO = static_cast<int32_t>(node.outputs.size());
    int32_t bwdField = numNodes() - 1 - n;
    nd.tiles = T;
    nd.fwd.resize(T);
    nd.bwd.resize(T);
    nd.source.resize(T);
    nd.sourceDevice.resize(T);
    nd.isSource.assign(T, 1);
    nd.inRegions.resize(size_t(T) * NI);
    nd.outRegions.resize(size_t(T) * NO);

    int64_t tileExtents[kMaxRank];
    for (int32_t l = 0; l < L; ++l)
      tileExtents[l] = node.extents[l] / cfg.degrees[l];
    double tileFlops = node.flops / T;
    double scale = node.bytes > 0 && im.nodeFullBytes[n] > 0
                       ? node.bytes / im.nodeFullBytes[n]
                       : 1.0;

    for (int32_t t = 0; t < T; ++t) {
      int32_t dev = cfg.devices[t];
      Box loops = tileLoopBox(node, cfg.degrees, t);
      int64_t tileBytes = 0, kept = 0;
      for (int32_t i = 0; i < NI; ++i) {
        const Operand &op = node.inputs[i];
        const Tensor &tensor = graph.tensors[op.tensor];
        Box &b = nd.inRegions[size_t(t) * NI + i];
        b = accessRegion(op, tensor, loops);
        int64_t rb = b.volume() * tensor.elementBytes;
        tileBytes += rb;
        if (tensor.isParameter)
          kept += 2 * rb; // weights and their gradient
        else if (tensor.producer < 0)
          kept += rb; // graph input shard
      }
      for (int32_t o = 0; o < NO; ++o) {
        const Operand &op = node.outputs[o];
        const Tensor &tensor = graph.tensors[op.tensor];
        Box &b = nd.outRegions[size_t(t) * NO + o];
        b = accessRegion(op, tensor, loops);
        int64_t rb = b.volume() * tensor.elementBytes;
        tileBytes += rb;
        kept += rb;
      }
      TaskCosts c = costs.tileCosts(graph, node, tileExtents, tileFlops,
                                    double(tileBytes) * scale);
      nd.fwd[t] = im.newTask(n, TaskKind::Forward, n, dev, c.forward,
                             makeRank(0, n, 1, t));
      nd.bwd[t] = im.newTask(n, TaskKind::Backward, n, dev, c.backward,
                             makeRank(1, bwdField, 1, t));
      im.addEdge(nd.fwd[t], nd.bwd[t]);
      nd.source[t] = nd.fwd[t];
      nd.sourceDevice[t] = dev;
      addMemory(unit, dev, kept);
    }

    // Split reduction loops: partial sums to the group owner, combined there.
    int32_t r = 1;
    for (int32_t l = 0; l < L; ++l)
      if (node.loopKinds[l] == LoopKind::Reduction)
        r *= cfg.degrees[l];
    if (r > 1) {
      im.ownerComb.assign(T, -1);
      int32_t groups = 0, partials = 0;
      std::array<int32_t, kMaxRank> coords;
      int32_t eb = NO ? graph.tensors[node.outputs[0].tensor].elementBytes : 4;
      for (int32_t a = 0; a < T; ++a) {
        tileCoordinates(cfg.degrees, a, coords);
        int32_t owner = 0;
        for (int32_t l = 0; l < L; ++l)
          owner = owner * cfg.degrees[l] +
                  (node.loopKinds[l] == LoopKind::Reduction ? 0 : coords[l]);
        int64_t outBytes = 0;
        for (int32_t o = 0; o < NO; ++o)
          outBytes += nd.outRegions[size_t(a) * NO + o].volume() *
                      graph.tensors[node.outputs[o].tensor].elementBytes;
        int32_t ownerDev = cfg.devices[owner];
        if (owner == a) {
          int32_t comb = im.newTask(n, TaskKind::Combine, n, ownerDev,
                                    costs.combineTime(double(outBytes), r, eb),
                                    makeRank(0, n, 3, groups++));
          im.ownerComb[a] = comb;
          im.addEdge(nd.fwd[a], comb);
        } else {
          nd.isSource[a] = 0;
          int32_t comb = im.ownerComb[owner];
          if (cfg.devices[a] == ownerDev) {
            im.addEdge(nd.fwd[a], comb);
          } else {
            int32_t x = transfer(n, TaskKind::PartialSum, n, cfg.devices[a],
                                 ownerDev, outBytes,
                                 makeRank(0, n, 2, partials++));
            im.addEdge(nd.fwd[a], x);
            im.addEdge(x, comb);
          }
        }
        nd.source[a] = im.ownerComb[owner];
        nd.sourceDevice[a] = ownerDev;
      }
    }

    // Parameters: replicas of the same region all-reduce their gradient.
    for (int32_t i = 0; i < NI; ++i) {
      const Tensor &tensor = graph.tensors[node.inputs[i].tensor];
      if (!tensor.isParameter)
        continue;
      assert(i < 256 && "too many inputs");
      std::vector<int32_t> &leader = im.scratchA; // group leader per tile
      leader.assign(T, -1);
      int32_t g = 0;
      for (int32_t t = 0; t < T; ++t) {
        if (leader[t] >= 0)
          continue;
        const Box &region = nd.inRegions[size_t(t) * NI + i];
        std::vector<int32_t> &members = im.scratchB;
        members.clear();
        for (int32_t u = t; u < T; ++u)
          if (leader[u] < 0 && nd.inRegions[size_t(u) * NI + i] == region) {
            leader[u] = t;
            members.push_back(u);
          }
        int64_t nbytes = region.volume() * tensor.elementBytes;
        double upd = costs.updateTime(double(nbytes), tensor.elementBytes);
        int32_t k = static_cast<int32_t>(members.size());
        if (k == 1) {
          int32_t u = im.newTask(n, TaskKind::Update, n, cfg.devices[t], upd,
                                 makeRank(1, bwdField, 5,
                                          (uint64_t(i) << 32) | uint64_t(t)));
          im.addEdge(nd.bwd[t], u);
          ++g;
          continue;
        }
        uint64_t gi = (uint64_t(i) << 32) | uint64_t(g);
        int32_t join1 = im.newTask(n, TaskKind::Join, n, -1, 0.0,
                                   makeRank(1, bwdField, 2, gi));
        int32_t join2 = im.newTask(n, TaskKind::Join, n, -1, 0.0,
                                   makeRank(1, bwdField, 4, gi));
        for (int32_t m : members)
          im.addEdge(nd.bwd[m], join1);
        // Ring over the group's devices in increasing order.
        std::vector<int32_t> devs;
        devs.reserve(k);
        for (int32_t m : members)
          devs.push_back(cfg.devices[m]);
        std::sort(devs.begin(), devs.end());
        double bwMin = 0, latMax = 0;
        std::vector<int32_t> links;
        links.reserve(k);
        for (int32_t j = 0; j < k; ++j) {
          int32_t l = machine.linkBetween(devs[j], devs[(j + 1) % k]);
          double bw = machine.linkBandwidth(l);
          bwMin = j == 0 ? bw : std::min(bwMin, bw);
          latMax = std::max(latMax, machine.linkLatency(l));
          links.push_back(l);
        }
        std::sort(links.begin(), links.end());
        links.erase(std::unique(links.begin(), links.end()), links.end());
        double factor = 2.0 * (k - 1) / k;
        double time = factor * double(nbytes) / bwMin + 2.0 * (k - 1) * latMax;
        for (size_t q = 0; q < links.size(); ++q) {
          int32_t ar = im.newTask(
              n, TaskKind::AllReduce, n, numDevices() + links[q], time,
              makeRank(1, bwdField, 3,
                       (uint64_t(i) << 36) | (uint64_t(g) << 18) | q),
              factor * double(nbytes));
          im.addEdge(join1, ar);
          im.addEdge(ar, join2);
        }
        int64_t moved = 2 * int64_t(k - 1) * nbytes;
        im.units[n].comm += moved;
        comm += moved;
        for (int32_t m : members) {
          int32_t u = im.newTask(n, TaskKind::Update, n, cfg.devices[m], upd,
                                 makeRank(1, bwdField, 5,
                                          (uint64_t(i) << 32) | uint64_t(m)));
          im.addEdge(join2, u);
        }
        ++g;
      }
    }
  }

  void buildEdge(int32_t e) {
    const Edge &edge = im.edges[e];
    int32_t p = edge.producer, n = edge.consumer, i = edge.input,
            o = edge.output;
    int32_t unitId = numNodes() + e;
    const NodeData &pd = im.nodes[p];
    const NodeData &nd = im.nodes[n];
    const ParallelConfig &pc = strategy.configs[p];
    const ParallelConfig &nc = strategy.configs[n];
    const Node &consumer = graph.nodes[n];
    const Node &producer = graph.nodes[p];
    int32_t NI = static_cast<int32_t>(consumer.inputs.size());
    int32_t NO = static_cast<int32_t>(producer.outputs.size());
    int32_t eb = graph.tensors[consumer.inputs[i].tensor].elementBytes;
    int32_t bwdField = numNodes() - 1 - p;
    assert(i < 256 && "too many inputs");
    uint64_t fwdCounter = 0, bwdCounter = 0;
    for (int32_t b = 0; b < nd.tiles; ++b) {
      const Box &q = nd.inRegions[size_t(b) * NI + i];
      int32_t devB = nc.devices[b];
      for (int32_t a = 0; a < pd.tiles; ++a) {
        int64_t vol =
            intersectionVolume(pd.outRegions[size_t(a) * NO + o], q);
        if (vol == 0)
          continue;
        int64_t nbytes = vol * eb;
        int32_t devA = pc.devices[a];
        // Forward: from the tile's final output (combined for split
        // reductions, so only group owners send).
        if (pd.isSource[a]) {
          int32_t src = pd.source[a], srcDev = pd.sourceDevice[a];
          if (srcDev == devB) {
            im.addEdge(src, nd.fwd[b]);
          } else {
            int32_t x = transfer(unitId, TaskKind::Transfer, n, srcDev, devB,
                                 nbytes,
                                 makeRank(0, n, 0,
                                          (uint64_t(i) << 32) | fwdCounter++));
            im.addEdge(src, x);
            im.addEdge(x, nd.fwd[b]);
            addMemory(im.units[unitId], devB, nbytes);
          }
        }
        // Backward: the gradient of the intersection, to every producer
        // tile that wrote it (all partial-sum tiles need it).
        if (devA == devB) {
          im.addEdge(nd.bwd[b], pd.bwd[a]);
        } else {
          int32_t x = transfer(
              unitId, TaskKind::GradientTransfer, n, devB, devA, nbytes,
              makeRank(1, bwdField, 0,
                       (uint64_t(n) << 29) | (uint64_t(i) << 21) |
                           bwdCounter++));
          im.addEdge(nd.bwd[b], x);
          im.addEdge(x, pd.bwd[a]);
        }
      }
    }
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Simulator
//===----------------------------------------------------------------------===//

Simulator::Simulator(const OpGraph &graph, const Machine &machine,
                     const CostModel &costs)
    : graph(graph), machine(machine), costs(costs), impl(new Impl) {
  assert(graph.validate().empty() && validateForTiling(graph).empty());
  int32_t N = static_cast<int32_t>(graph.nodes.size());
  impl->nodes.resize(N);
  impl->nodeEdges.resize(N);
  impl->nodeFullBytes.assign(N, 0.0);
  for (int32_t n = 0; n < N; ++n) {
    const Node &node = graph.nodes[n];
    double full = 0;
    for (const Operand &op : node.inputs)
      full += double(graph.tensors[op.tensor].bytes());
    for (const Operand &op : node.outputs)
      full += double(graph.tensors[op.tensor].bytes());
    impl->nodeFullBytes[n] = full;
    for (int32_t i = 0, e = static_cast<int32_t>(node.inputs.size()); i < e;
         ++i) {
      int32_t t = node.inputs[i].tensor;
      int32_t p = graph.tensors[t].producer;
      if (p < 0)
        continue;
      const Node &prod = graph.nodes[p];
      int32_t o = 0;
      while (prod.outputs[o].tensor != t)
        ++o;
      int32_t id = static_cast<int32_t>(impl->edges.size());
      impl->edges.push_back({p, n, i, o});
      impl->nodeEdges[p].push_back(id);
      impl->nodeEdges[n].push_back(id);
    }
  }
  impl->units.resize(N + impl->edges.size());
  impl->seqs.resize(numResources());
  impl->memory.assign(machine.numDevices(), 0);
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
  current = strategy;
  Impl &im = *impl;
  im.deltaMode = false;
  int32_t N = static_cast<int32_t>(graph.nodes.size());
  for (size_t u = 0; u < im.units.size(); ++u)
    im.removeUnit(static_cast<int32_t>(u), im.memory, commBytes);
  Builder b{graph, machine, costs, current, im, im.memory, commBytes};
  for (int32_t n = 0; n < N; ++n)
    b.buildNode(n);
  for (int32_t e = 0, E = static_cast<int32_t>(im.edges.size()); e < E; ++e)
    b.buildEdge(e);
  im.fullSimulation(numResources());
  iterationSeconds = im.iterationTime();
  return iterationSeconds;
}

double Simulator::simulateDelta(int32_t n, const ParallelConfig &config) {
  assert(validateConfig(graph.nodes[n], config, machine.numDevices()).empty());
  Impl &im = *impl;
  current.configs[n] = config;
  im.deltaMode = true;
  int32_t N = static_cast<int32_t>(graph.nodes.size());
  for (int32_t e : im.nodeEdges[n])
    im.removeUnit(N + e, im.memory, commBytes);
  im.removeUnit(n, im.memory, commBytes);
  Builder b{graph, machine, costs, current, im, im.memory, commBytes};
  b.buildNode(n);
  for (int32_t e : im.nodeEdges[n])
    b.buildEdge(e);
  for (int32_t t : im.units[n].tasks)
    im.mark(t);
  for (int32_t e : im.nodeEdges[n])
    for (int32_t t : im.units[N + e].tasks)
      im.mark(t);
  im.propagate();
  im.deltaMode = false;
  iterationSeconds = im.iterationTime();
  return iterationSeconds;
}

int64_t Simulator::peakMemoryBytes() const {
  int64_t m = 0;
  for (int64_t v : impl->memory)
    m = std::max(m, v);
  return m;
}

bool Simulator::overCapacity() const {
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
  // Sum in resource order for a deterministic result.
  for (int32_t res = 0; res < numResources(); ++res)
    for (int32_t t : im.seqs[res]) {
      if (res < D)
        r.deviceBusySeconds[res] += im.dur[t];
      else
        r.linkBusySeconds[res - D] += im.dur[t];
    }
  for (uint8_t a : im.alive)
    r.numTasks += a;
  r.communicationBytes = commBytes;
  r.memoryBytesPerDevice = im.memory;
  r.peakMemoryBytes = peakMemoryBytes();
  r.overCapacity = overCapacity();
  return r;
}

std::vector<ScheduledTask> Simulator::scheduledTasks() const {
  const Impl &im = *impl;
  std::vector<ScheduledTask> tasks;
  for (size_t t = 0; t < im.alive.size(); ++t)
    if (im.alive[t])
      tasks.push_back({static_cast<TaskKind>(im.kind[t]), im.node[t],
                       im.res[t], im.start[t], im.end[t], im.bytes[t]});
  return tasks;
}

std::string Simulator::verifySchedule() const {
  const Impl &im = *impl;
  std::vector<int32_t> count(im.alive.size(), 0);
  for (int32_t res = 0; res < numResources(); ++res) {
    const std::vector<int32_t> &seq = im.seqs[res];
    double prevEnd = 0;
    for (size_t i = 0; i < seq.size(); ++i) {
      int32_t t = seq[i];
      if (!im.alive[t] || im.res[t] != res)
        return "dead or misplaced task in sequence of " + resourceName(res);
      ++count[t];
      if (im.seqReady[t] != im.ready[t])
        return "stale sequence key on " + resourceName(res);
      if (i > 0) {
        int32_t p = seq[i - 1];
        if (im.ready[p] > im.ready[t] ||
            (im.ready[p] == im.ready[t] && im.rank[p] >= im.rank[t]))
          return "sequence of " + resourceName(res) + " out of order at " +
                 std::to_string(i);
      }
      if (im.start[t] != std::max(im.ready[t], prevEnd)) {
        auto describe = [&](int32_t x) {
          return std::string(taskKindName(static_cast<TaskKind>(im.kind[x]))) +
                 " of " + graph.nodes[im.node[x]].name + " ready " +
                 std::to_string(im.ready[x] * 1e6) + " start " +
                 std::to_string(im.start[x] * 1e6) + " end " +
                 std::to_string(im.end[x] * 1e6);
        };
        return "wrong start on " + resourceName(res) + " at " +
               std::to_string(i) + ": " + describe(t) +
               (i > 0 ? "; after " + describe(seq[i - 1]) : std::string());
      }
      prevEnd = im.end[t];
    }
  }
  for (size_t t = 0; t < im.alive.size(); ++t) {
    if (!im.alive[t])
      continue;
    if (im.pending[t])
      return "pending task left";
    if (im.res[t] >= 0 && count[t] != 1)
      return "task not in its sequence exactly once";
    if (im.res[t] < 0 && im.start[t] != im.ready[t])
      return "wrong start of a task without resource";
    if (im.ready[t] != im.readyFromPreds(static_cast<int32_t>(t)))
      return std::string("wrong ready time of a ") +
             taskKindName(static_cast<TaskKind>(im.kind[t])) + " task of node " +
             graph.nodes[im.node[t]].name;
    if (im.end[t] != im.start[t] + im.dur[t])
      return "wrong end";
  }
  return "";
}
