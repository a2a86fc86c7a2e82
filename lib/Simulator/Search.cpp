//===- Search.cpp - Strategy search: MCMC over the SOAP space -------------===//
//
// See Search.h for the space, the chain schedule and the choice of beta.
//
//===----------------------------------------------------------------------===//

#include "soap/Simulator/Search.h"

#include "soap/Simulator/Region.h"
#include "soap/Simulator/Simulator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <thread>

using namespace soap;

namespace {

using Clock = std::chrono::steady_clock;

uint64_t below(std::mt19937_64 &rng, uint64_t n) { return rng() % n; }

double uniform01(std::mt19937_64 &rng) {
  return double(rng() >> 11) * (1.0 / 9007199254740992.0);
}

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// `seconds` after t0; the end of time when `seconds` <= 0 (no budget).
Clock::time_point budgetEnd(Clock::time_point t0, double seconds) {
  // Past what the clock can count (it counts nanoseconds in 64 bits, about
  // 292 years), no end: converting such a budget would overflow.
  if (seconds <= 0 || seconds >= 1e9)
    return Clock::time_point::max();
  return t0 + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(seconds));
}

/// Each node's index in `groups` (tiedNodeGroups), -1 for none.
std::vector<int32_t>
groupIndex(size_t numNodes, const std::vector<std::vector<int32_t>> &groups) {
  std::vector<int32_t> groupOf(numNodes, -1);
  for (size_t k = 0; k < groups.size(); ++k)
    for (int32_t n : groups[k])
      groupOf[n] = static_cast<int32_t>(k);
  return groupOf;
}

} // namespace

//===----------------------------------------------------------------------===//
// ConfigSpace
//===----------------------------------------------------------------------===//

std::vector<int32_t> ConfigSpace::loopDegrees(int64_t extent,
                                              int32_t numDevices) {
  std::vector<int32_t> out;
  int64_t largest = 1;
  for (int64_t d = 1; d <= numDevices && d <= extent; ++d)
    if (extent % d == 0)
      largest = d;
  for (int64_t d = 1; d <= numDevices && d <= extent; d *= 2)
    if (extent % d == 0)
      out.push_back(static_cast<int32_t>(d));
  if (largest != out.back())
    out.push_back(static_cast<int32_t>(largest));
  return out;
}

ConfigSpace::ConfigSpace(const OpGraph &graph, int32_t numDevices)
    : devices(numDevices) {
  assert(numDevices >= 1);
  viewsByTiles.resize(numDevices + 1);
  for (int32_t T = 1; T <= numDevices; ++T) {
    auto &v = viewsByTiles[T];
    if (T == 1) {
      for (int32_t d = 0; d < numDevices; ++d)
        v.push_back({d, 1});
      continue;
    }
    for (int32_t s = 1; int64_t(T) * s <= numDevices; s *= 2) {
      int32_t blocks = numDevices / (T * s);
      for (int32_t b = 0; b < blocks; ++b)
        for (int32_t o = 0; o < s; ++o)
          v.push_back({b * T * s + o, s});
    }
  }

  nodes.resize(graph.nodes.size());
  std::vector<std::vector<int32_t>> choices;
  std::vector<int32_t> cur;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node &node = graph.nodes[n];
    NodeSpace &ns = nodes[n];
    ns.loops = node.numLoops();
    choices.clear();
    for (int32_t l = 0; l < node.numLoops(); ++l)
      choices.push_back(node.canSplit(l)
                            ? loopDegrees(node.extents[l], numDevices)
                            : std::vector<int32_t>{1});
    cur.assign(ns.loops, 1);
    ns.cumulative.push_back(0);
    // Depth-first over loops, degrees ascending: vector 0 is all ones.
    auto rec = [&](auto &&self, int32_t l, int64_t tiles) -> void {
      if (l == ns.loops) {
        ns.degrees.insert(ns.degrees.end(), cur.begin(), cur.end());
        ns.tiles.push_back(static_cast<int32_t>(tiles));
        ns.cumulative.push_back(ns.cumulative.back() +
                                int64_t(viewsByTiles[tiles].size()));
        return;
      }
      for (int32_t d : choices[l]) {
        if (tiles * d > numDevices)
          break;
        cur[l] = d;
        self(self, l + 1, tiles * d);
      }
      cur[l] = 1;
    };
    rec(rec, 0, 1);
  }
}

int32_t ConfigSpace::degreeVectorOf(int32_t n, int64_t index) const {
  const NodeSpace &ns = nodes[n];
  auto it = std::upper_bound(ns.cumulative.begin(), ns.cumulative.end(), index);
  return static_cast<int32_t>(it - ns.cumulative.begin()) - 1;
}

void ConfigSpace::config(int32_t n, int64_t index, ParallelConfig &out) const {
  const NodeSpace &ns = nodes[n];
  assert(index >= 0 && index < ns.cumulative.back());
  int32_t v = degreeVectorOf(n, index);
  const int32_t *deg = ns.degrees.data() + size_t(v) * ns.loops;
  out.degrees.assign(deg, deg + ns.loops);
  int32_t T = ns.tiles[v];
  const auto &view = viewsByTiles[T][index - ns.cumulative[v]];
  out.devices.resize(T);
  for (int32_t t = 0; t < T; ++t)
    out.devices[t] = view.first + t * view.second;
}

void ConfigSpace::sample(int32_t n, std::mt19937_64 &rng,
                         ParallelConfig &out) const {
  config(n, static_cast<int64_t>(below(rng, uint64_t(numConfigs(n)))), out);
}

int64_t ConfigSpace::indexOf(int32_t n, const ParallelConfig &c) const {
  const NodeSpace &ns = nodes[n];
  if (static_cast<int32_t>(c.degrees.size()) != ns.loops)
    return -1;
  int32_t T = static_cast<int32_t>(c.devices.size());
  if (T < 1 || T > devices)
    return -1;
  int32_t stride = T > 1 ? c.devices[1] - c.devices[0] : 1;
  for (int32_t t = 0; t < T; ++t)
    if (c.devices[t] != c.devices[0] + t * stride)
      return -1;
  for (size_t v = 0; v < ns.tiles.size(); ++v) {
    if (!std::equal(c.degrees.begin(), c.degrees.end(),
                    ns.degrees.begin() + v * ns.loops))
      continue;
    const auto &vs = viewsByTiles[ns.tiles[v]];
    for (size_t i = 0; i < vs.size(); ++i)
      if (vs[i].first == c.devices[0] && vs[i].second == stride)
        return ns.cumulative[v] + int64_t(i);
    return -1;
  }
  return -1;
}

//===----------------------------------------------------------------------===//
// Expert strategy
//===----------------------------------------------------------------------===//

bool soap::isFullyConnected(const OpGraph &graph, const Node &node) {
  if (classifyNode(node) != OpClass::Contraction ||
      llvm::StringRef(node.kind).contains("conv"))
    return false;
  bool hasParam = false;
  for (const Operand &op : node.inputs)
    hasParam |= graph.tensors[op.tensor].isParameter;
  bool hasP = std::find(node.loopKinds.begin(), node.loopKinds.end(),
                        LoopKind::Parameter) != node.loopKinds.end();
  return hasParam && hasP;
}

Strategy soap::expertStrategy(const OpGraph &graph, int32_t numDevices) {
  Strategy s = dataParallelStrategy(graph, numDevices);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node &node = graph.nodes[n];
    if (!isFullyConnected(graph, node))
      continue;
    // The Parameter loop with the largest allowed degree (first on ties).
    int32_t bestLoop = -1, bestDegree = 1;
    for (int32_t l = 0; l < node.numLoops(); ++l) {
      if (node.loopKinds[l] != LoopKind::Parameter)
        continue;
      int32_t d = ConfigSpace::loopDegrees(node.extents[l], numDevices).back();
      if (d > bestDegree) {
        bestDegree = d;
        bestLoop = l;
      }
    }
    if (bestLoop < 0)
      continue;
    ParallelConfig c = singleDeviceConfig(node);
    c.degrees[bestLoop] = bestDegree;
    c.devices.resize(bestDegree);
    for (int32_t t = 0; t < bestDegree; ++t)
      c.devices[t] = t;
    s.configs[n] = std::move(c);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Tied nodes
//===----------------------------------------------------------------------===//

std::vector<std::vector<int32_t>> soap::tiedNodeGroups(const OpGraph &graph) {
  int32_t N = static_cast<int32_t>(graph.nodes.size());
  // Parameters read by several nodes.
  std::vector<int32_t> readers(graph.tensors.size(), 0);
  for (const Node &node : graph.nodes) {
    std::vector<int32_t> seen;
    for (const Operand &in : node.inputs)
      if (graph.tensors[in.tensor].isParameter &&
          std::find(seen.begin(), seen.end(), in.tensor) == seen.end()) {
        seen.push_back(in.tensor);
        ++readers[in.tensor];
      }
  }
  // The anchor: the first shared parameter read (by tensor id); none for
  // a node with only weights of its own; for a node without weights, the
  // anchor of the first input's producer that has one (nodes are in
  // topological order).
  std::vector<int32_t> anchor(N, -1);
  for (int32_t n = 0; n < N; ++n) {
    const Node &node = graph.nodes[n];
    bool weights = false;
    for (const Operand &in : node.inputs) {
      if (!graph.tensors[in.tensor].isParameter)
        continue;
      weights = true;
      if (readers[in.tensor] > 1 && (anchor[n] < 0 || in.tensor < anchor[n]))
        anchor[n] = in.tensor;
    }
    if (weights)
      continue;
    int32_t firstProducer = -1;
    for (const Operand &in : node.inputs) {
      int32_t p = graph.tensors[in.tensor].producer;
      if (p >= 0 && firstProducer < 0)
        firstProducer = p;
      if (p >= 0 && anchor[p] >= 0) {
        anchor[n] = anchor[p];
        break;
      }
    }
    // Siblings: weight-less readers of one unanchored node (the per-step
    // slices of an embedding, the q, k, v slices of a fused projection).
    if (anchor[n] < 0 && firstProducer >= 0)
      anchor[n] = static_cast<int32_t>(graph.tensors.size()) + firstProducer;
  }
  // Same anchor and the same op, loops and operand shapes (so the same
  // config space).
  auto signature = [&](const Node &node) {
    std::string sig = node.kind;
    sig += node.reductionSplittable ? "|r|" : "|n|";
    for (size_t l = 0; l < node.extents.size(); ++l)
      sig += std::to_string(node.extents[l]) +
             loopKindLetter(node.loopKinds[l]) + ",";
    for (const std::vector<Operand> *ops : {&node.inputs, &node.outputs}) {
      sig += "|";
      for (const Operand &op : *ops) {
        const Tensor &t = graph.tensors[op.tensor];
        sig += t.isParameter ? "p" : "t";
        for (int64_t d : t.shape)
          sig += std::to_string(d) + "x";
        sig += ";";
      }
    }
    return sig;
  };
  std::map<std::pair<int32_t, std::string>, std::vector<int32_t>> byKey;
  for (int32_t n = 0; n < N; ++n)
    if (anchor[n] >= 0)
      byKey[{anchor[n], signature(graph.nodes[n])}].push_back(n);
  std::vector<std::vector<int32_t>> groups;
  for (auto &entry : byKey)
    if (entry.second.size() > 1)
      groups.push_back(std::move(entry.second));
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::vector<std::vector<int32_t>>
soap::tiedGroupUnits(const OpGraph &graph,
                     const std::vector<std::vector<int32_t>> &groups) {
  int32_t K = static_cast<int32_t>(groups.size());
  std::vector<int32_t> groupOf = groupIndex(graph.nodes.size(), groups);
  // Edges between groups (no self edges), as sorted successor lists.
  std::vector<std::vector<int32_t>> succ(K);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    int32_t to = groupOf[n];
    if (to < 0)
      continue;
    for (const Operand &in : graph.nodes[n].inputs) {
      int32_t p = graph.tensors[in.tensor].producer;
      if (p >= 0 && groupOf[p] >= 0 && groupOf[p] != to)
        succ[groupOf[p]].push_back(to);
    }
  }
  for (std::vector<int32_t> &s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  // Strongly connected components from reachability (K is small: the
  // groups of a model's recurrent layers).
  std::vector<std::vector<char>> reach(K, std::vector<char>(K, 0));
  for (int32_t k = 0; k < K; ++k) {
    std::vector<int32_t> stack{k};
    reach[k][k] = 1;
    while (!stack.empty()) {
      int32_t g = stack.back();
      stack.pop_back();
      for (int32_t h : succ[g])
        if (!reach[k][h]) {
          reach[k][h] = 1;
          stack.push_back(h);
        }
    }
  }
  std::vector<int32_t> unitOf(K, -1);
  std::vector<std::vector<int32_t>> units;
  for (int32_t k = 0; k < K; ++k) {
    if (unitOf[k] >= 0)
      continue;
    std::vector<int32_t> scc;
    for (int32_t h = k; h < K; ++h)
      if (reach[k][h] && reach[h][k])
        scc.push_back(h);
    if (scc.size() < 2)
      continue;
    for (int32_t h : scc)
      unitOf[h] = static_cast<int32_t>(units.size());
    units.push_back(std::move(scc));
  }
  // Groups whose consumer groups all lie in one unit join it (repeated:
  // the embedding slices feed the input projection, which joins first).
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t k = 0; k < K; ++k) {
      if (unitOf[k] >= 0 || succ[k].empty())
        continue;
      int32_t u = unitOf[succ[k].front()];
      bool one = u >= 0;
      for (int32_t h : succ[k])
        one &= unitOf[h] == u;
      if (!one)
        continue;
      unitOf[k] = u;
      units[u].push_back(k);
      changed = true;
    }
  }
  for (std::vector<int32_t> &u : units)
    std::sort(u.begin(), u.end());
  return units;
}

bool soap::alignedConfig(const OpGraph &graph, int32_t from,
                         const ParallelConfig &fromConfig, int32_t to,
                         ParallelConfig &out) {
  const Node &a = graph.nodes[from], &b = graph.nodes[to];
  std::array<int32_t, kMaxRank> loopMap; // a's loop -> b's loop
  auto single = [](const DimAccess &d) {
    return !d.whole && d.terms.size() == 1 && d.terms[0].coefficient != 0;
  };
  // Maps every split loop of `a` through the dimensions of one tensor that
  // `oa` and `ob` access.
  auto mapThrough = [&](const Operand &oa, const Operand &ob) {
    out.degrees.assign(b.numLoops(), 1);
    for (int32_t la = 0; la < a.numLoops(); ++la) {
      loopMap[la] = -1;
      int32_t degree = fromConfig.degrees[la];
      if (degree == 1)
        continue;
      for (size_t d = 0; d < oa.dims.size() && loopMap[la] < 0; ++d) {
        const DimAccess &da = oa.dims[d], &db = ob.dims[d];
        if (!single(da) || !single(db) || da.terms[0].loop != la ||
            da.terms[0].coefficient != db.terms[0].coefficient ||
            da.constant != db.constant)
          continue;
        int32_t lb = db.terms[0].loop;
        if (out.degrees[lb] != 1 || !b.canSplit(lb) ||
            b.extents[lb] != a.extents[la])
          continue;
        out.degrees[lb] = degree;
        loopMap[la] = lb;
      }
      if (loopMap[la] < 0)
        return false;
    }
    return true;
  };
  bool mapped = false;
  for (const std::vector<Operand> *as : {&a.inputs, &a.outputs})
    for (const Operand &oa : *as)
      for (const std::vector<Operand> *bs : {&b.inputs, &b.outputs})
        for (const Operand &ob : *bs)
          if (!mapped && oa.tensor == ob.tensor &&
              oa.dims.size() == ob.dims.size())
            mapped = mapThrough(oa, ob);
  if (!mapped)
    return false;
  // Tile tb of b sits where the tile of a with the same coordinates on the
  // mapped loops does.
  int32_t tiles = fromConfig.numTiles();
  out.devices.resize(tiles);
  std::array<int32_t, kMaxRank> cb;
  for (int32_t tb = 0; tb < tiles; ++tb) {
    tileCoordinates(out.degrees, tb, cb);
    int32_t ta = 0;
    for (int32_t la = 0; la < a.numLoops(); ++la)
      ta =
          ta * fromConfig.degrees[la] + (loopMap[la] < 0 ? 0 : cb[loopMap[la]]);
    out.devices[tb] = fromConfig.devices[ta];
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Polish
//===----------------------------------------------------------------------===//

namespace {

/// Per node, the nodes it shares a tensor with that is not a parameter
/// (producers of its inputs, readers of its outputs), ascending.
std::vector<std::vector<int32_t>> nodeNeighbours(const OpGraph &graph) {
  std::vector<std::vector<int32_t>> neighbours(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    for (const Operand &in : graph.nodes[n].inputs) {
      int32_t p = graph.tensors[in.tensor].producer;
      if (p < 0 || p == int32_t(n) || graph.tensors[in.tensor].isParameter)
        continue;
      neighbours[n].push_back(p);
      neighbours[p].push_back(static_cast<int32_t>(n));
    }
  for (std::vector<int32_t> &list : neighbours) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return neighbours;
}

/// What a polish did: its simulations, and whether it stopped at its
/// deadline before a round improved nothing.
struct PolishRun {
  int64_t simulations = 0;
  bool cut = false;
};

/// polishStrategy on `sim` (see Search.h), with the graph's neighbours and
/// tied groups (`groupOf`: each node's group or -1), stopping before a
/// simulation that would start after `until`.
PolishRun polishWith(const OpGraph &graph,
                     const std::vector<std::vector<int32_t>> &neighbours,
                     const std::vector<std::vector<int32_t>> &groups,
                     const std::vector<int32_t> &groupOf, Simulator &sim,
                     Strategy &s, double &seconds, Clock::time_point until) {
  bool timed = until != Clock::time_point::max();
  PolishRun run;
  int64_t &sims = run.simulations;
  sims = 1;
  double cur = sim.simulateFull(s);
  bool fits = !sim.overCapacity();
  std::vector<int32_t> nodes;
  std::vector<ParallelConfig> to;
  ParallelConfig aligned;
  int32_t N = static_cast<int32_t>(graph.nodes.size());
  bool improved = true;
  // Tries configs `cs` for nodes `ns`, kept when the iteration gets faster
  // (and, where the strategy fits, it still fits); false, trying nothing,
  // once the deadline has come.
  auto attempt = [&](const int32_t *ns, const ParallelConfig *cs, size_t k) {
    if (timed && Clock::now() >= until) {
      run.cut = true;
      return false;
    }
    double t = sim.simulateDelta(ns, cs, k);
    ++sims;
    if (t < cur && (!fits || !sim.overCapacity())) {
      cur = t;
      improved = true;
    } else {
      sim.undoDelta();
    }
    return true;
  };
  while (improved && !run.cut) {
    improved = false;
    for (int32_t n = 0; n < N && !run.cut; ++n) {
      for (int32_t p : neighbours[n]) {
        const std::vector<ParallelConfig> &configs = sim.strategy().configs;
        if (!alignedConfig(graph, p, configs[p], n, aligned))
          continue;
        aligned.recompute = configs[n].recompute &&
                            !splitsReduction(graph.nodes[n], aligned.degrees);
        if (aligned == configs[n])
          continue;
        nodes.clear();
        to.clear();
        if (groupOf[n] < 0) {
          nodes.push_back(n);
        } else {
          for (int32_t m : groups[groupOf[n]])
            if (configs[m] != aligned)
              nodes.push_back(m);
        }
        to.assign(nodes.size(), aligned);
        if (!attempt(nodes.data(), to.data(), nodes.size()))
          break;
      }
      // A recomputed node keeps its output instead, where it still fits.
      if (run.cut || !sim.strategy().configs[n].recompute)
        continue;
      aligned = sim.strategy().configs[n];
      aligned.recompute = false;
      if (!attempt(&n, &aligned, 1))
        break;
    }
  }
  s = sim.strategy();
  seconds = cur;
  return run;
}

} // namespace

double soap::polishStrategy(const OpGraph &graph, const Machine &machine,
                            const CostModel &costs, Strategy &strategy,
                            int64_t *simulations, double budgetSeconds,
                            bool *cut) {
  Clock::time_point t0 = Clock::now();
  std::vector<std::vector<int32_t>> groups = tiedNodeGroups(graph);
  std::vector<int32_t> groupOf = groupIndex(graph.nodes.size(), groups);
  Simulator sim(graph, machine, costs);
  double seconds = 0;
  Clock::time_point until = budgetEnd(t0, budgetSeconds);
  PolishRun run = polishWith(graph, nodeNeighbours(graph), groups, groupOf,
                             sim, strategy, seconds, until);
  if (simulations)
    *simulations = run.simulations;
  if (cut)
    *cut = run.cut;
  return seconds;
}

//===----------------------------------------------------------------------===//
// Recomputation
//===----------------------------------------------------------------------===//

namespace {
/// Whether recomputing node `n` under a config of `degrees` does anything:
/// not with a split reduction (not allowed), nor for an output the graph
/// returns (kept anyway).
template <typename Degrees>
bool mayRecompute(const OpGraph &graph, int32_t n, const Degrees &degrees) {
  return !graph.writesOutput(n) && !splitsReduction(graph.nodes[n], degrees);
}
} // namespace

bool soap::fitByRecomputation(const OpGraph &graph, Simulator &sim,
                              int64_t *simulations) {
  if (!sim.overCapacity())
    return true;
  std::vector<std::pair<double, int32_t>> order;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node &node = graph.nodes[n];
    int64_t bytes = node.savedBytes; // not kept either
    for (const Operand &out : node.outputs)
      bytes += graph.tensors[out.tensor].bytes();
    if (bytes > 0 && node.numLoops() > 0)
      order.push_back({-double(bytes) / std::max(node.flops, 1.0),
                       static_cast<int32_t>(n)});
  }
  // By ratio, then node: the pairs' own order (std::stable_sort would keep
  // the nodes' order too, but libstdc++'s uses the deprecated
  // get_temporary_buffer).
  std::sort(order.begin(), order.end());
  int64_t peak = sim.peakMemoryBytes();
  ParallelConfig c;
  for (const auto &entry : order) {
    int32_t n = entry.second;
    const ParallelConfig &cur = sim.strategy().configs[n];
    if (cur.recompute || !mayRecompute(graph, n, cur.degrees))
      continue;
    c = cur;
    c.recompute = true;
    sim.simulateDelta(n, c);
    if (simulations)
      ++*simulations;
    // Kept when the peak does not rise: a node may save nothing by itself
    // (its output alive again before the peak, to recompute a reader
    // recomputed with it) but lets the next ones save theirs.
    int64_t now = sim.peakMemoryBytes();
    if (now <= peak) {
      peak = now;
      if (!sim.overCapacity())
        return true;
      continue;
    }
    sim.undoDelta();
  }
  return !sim.overCapacity();
}

//===----------------------------------------------------------------------===//
// MCMC
//===----------------------------------------------------------------------===//

namespace {

struct Chain {
  std::unique_ptr<Simulator> sim;
  std::mt19937_64 rng;
  const char *startName = "";
  double cur = 0;
  bool curFits = false;
  int64_t curPeak = 0;
  double chainBest = std::numeric_limits<double>::infinity();
  int64_t sinceImprove = 0;
  ParallelConfig proposal;
  /// A tied move: the nodes it changes and their new configs.
  std::vector<int32_t> moved;
  std::vector<ParallelConfig> movedTo;
  // Per round.
  int64_t quota = 0;
  double roundBest = std::numeric_limits<double>::infinity();
  Strategy roundBestStrategy;
  bool improvedThisRound = false;
  // Totals.
  int64_t proposals = 0, accepted = 0, simulations = 0;
  bool hitTime = false;

  void reset(const Strategy &s) {
    cur = sim->simulateFull(s);
    ++simulations;
    curFits = !sim->overCapacity();
    curPeak = sim->peakMemoryBytes();
    chainBest = curFits ? cur : std::numeric_limits<double>::infinity();
    sinceImprove = 0;
  }
};

struct Search {
  const OpGraph &graph;
  const Machine &machine;
  const CostModel &costs;
  const SearchOptions &opt;
  /// opt.budgetSeconds, or 0 (none) when it is not a positive finite number.
  double budget;
  ConfigSpace space;
  /// A start did not fit in device memory and recomputation was tried
  /// (SearchOptions::recompute): proposals may turn it on or off.
  bool memoryBound = false;
  int32_t N;
  double beta = 0;
  Clock::time_point t0;
  /// When the chains stop, in seconds since t0: the budget less the
  /// polish's reserve (polishReserve); infinity when no time budget.
  double deadline;

  std::vector<Chain> chains;
  /// tiedNodeGroups, and each node's group (-1: none).
  std::vector<std::vector<int32_t>> groups;
  std::vector<int32_t> groupOf;
  /// tiedGroupUnits, each group's unit (-1: none), and per unit the links
  /// between its groups: (group, group, node of the first, node of the
  /// second) for each ordered pair of groups with a tensor between them.
  std::vector<std::vector<int32_t>> units;
  std::vector<int32_t> unitOf;
  struct Link {
    int32_t fromGroup, toGroup, fromNode, toNode;
  };
  std::vector<std::vector<Link>> unitLinks;
  /// Per node, the nodes it shares a tensor with that is not a parameter
  /// (producers of its inputs, readers of its outputs), ascending.
  std::vector<std::vector<int32_t>> neighbours;
  double bestSeconds = std::numeric_limits<double>::infinity();
  Strategy best;
  int64_t bestPeak = 0;
  std::string bestStart;

  Search(const OpGraph &g, const Machine &m, const CostModel &c,
         const SearchOptions &o)
      : graph(g), machine(m), costs(c), opt(o),
        budget(o.budgetSeconds > 0 && std::isfinite(o.budgetSeconds)
                   ? o.budgetSeconds
                   : 0),
        space(g, m.numDevices()),
        N(static_cast<int32_t>(g.nodes.size())) {
    if (opt.tiedMoveProbability > 0)
      groups = tiedNodeGroups(g);
    groupOf = groupIndex(g.nodes.size(), groups);
    if (opt.unitMoveProbability > 0)
      units = tiedGroupUnits(g, groups);
    unitOf.assign(groups.size(), -1);
    unitLinks.resize(units.size());
    for (size_t u = 0; u < units.size(); ++u)
      for (int32_t k : units[u])
        unitOf[k] = static_cast<int32_t>(u);
    // One link per ordered pair of a unit's groups (the first tensor found,
    // both directions: a move may start from either end).
    std::map<std::pair<int32_t, int32_t>, Link> links;
    for (int32_t n = 0; n < N; ++n) {
      int32_t gn = groupOf[n];
      if (gn < 0 || unitOf[gn] < 0)
        continue;
      for (const Operand &in : g.nodes[n].inputs) {
        int32_t p = g.tensors[in.tensor].producer;
        if (p < 0 || groupOf[p] < 0 || groupOf[p] == gn ||
            unitOf[groupOf[p]] != unitOf[gn])
          continue;
        links.insert({{groupOf[p], gn}, {groupOf[p], gn, p, n}});
        links.insert({{gn, groupOf[p]}, {gn, groupOf[p], n, p}});
      }
    }
    for (const auto &entry : links)
      unitLinks[unitOf[entry.second.fromGroup]].push_back(entry.second);
    neighbours = nodeNeighbours(g);
  }

  /// Proposes `ch.proposal` for group `k` and configs aligned with it for
  /// the other groups of its unit `u` (those reachable through links whose
  /// alignment exists), in one simulateDelta. Returns the new time, or NaN
  /// when no node changes.
  double proposeUnit(Chain &ch, int32_t u, int32_t k) {
    Simulator &sim = *ch.sim;
    const std::vector<int32_t> &members = units[u];
    size_t M = members.size();
    auto index = [&](int32_t group) {
      return size_t(std::lower_bound(members.begin(), members.end(), group) -
                    members.begin());
    };
    std::vector<ParallelConfig> configs(M);
    std::vector<char> assigned(M, 0);
    configs[index(k)] = ch.proposal;
    assigned[index(k)] = 1;
    for (bool progress = true; progress;) {
      progress = false;
      for (const Link &l : unitLinks[u]) {
        size_t from = index(l.fromGroup), to = index(l.toGroup);
        if (!assigned[from] || assigned[to])
          continue;
        if (alignedConfig(graph, l.fromNode, configs[from], l.toNode,
                          configs[to])) {
          assigned[to] = 1;
          progress = true;
        }
      }
    }
    ch.moved.clear();
    ch.movedTo.clear();
    for (size_t i = 0; i < M; ++i) {
      if (!assigned[i])
        continue;
      if (i != index(k))
        configs[i].recompute =
            sim.strategy().configs[groups[members[i]].front()].recompute &&
            !splitsReduction(graph.nodes[groups[members[i]].front()],
                             configs[i].degrees);
      for (int32_t m : groups[members[i]]) {
        const ParallelConfig &old = sim.strategy().configs[m];
        if (old == configs[i])
          continue;
        ch.moved.push_back(m);
        ch.movedTo.push_back(configs[i]);
      }
    }
    if (ch.moved.empty())
      return std::numeric_limits<double>::quiet_NaN();
    return sim.simulateDelta(ch.moved.data(), ch.movedTo.data(),
                             ch.moved.size());
  }

  /// Proposes `ch.proposal` for every node of group `k` at once. Returns
  /// the new time, or NaN when no node changes.
  double proposeTied(Chain &ch, int32_t k) {
    Simulator &sim = *ch.sim;
    ch.moved.clear();
    for (int32_t m : groups[k])
      if (!(sim.strategy().configs[m] == ch.proposal))
        ch.moved.push_back(m);
    if (ch.moved.empty())
      return std::numeric_limits<double>::quiet_NaN();
    size_t count = ch.moved.size();
    if (ch.movedTo.size() < count)
      ch.movedTo.resize(count);
    for (size_t i = 0; i < count; ++i) {
      ch.movedTo[i].degrees.assign(ch.proposal.degrees.begin(),
                                   ch.proposal.degrees.end());
      ch.movedTo[i].devices.assign(ch.proposal.devices.begin(),
                                   ch.proposal.devices.end());
      ch.movedTo[i].recompute = ch.proposal.recompute;
    }
    return sim.simulateDelta(ch.moved.data(), ch.movedTo.data(), count);
  }

  PolishRun polish(Simulator &sim, Strategy &s, double &seconds,
                   Clock::time_point until) {
    return polishWith(graph, neighbours, groups, groupOf, sim, s, seconds,
                      until);
  }

  /// Seconds the chains leave the polish of a timed search: an estimate of
  /// two polish rounds (a delta per node and neighbour each) at the chains'
  /// seconds per simulation so far (the polish runs on one thread), at most
  /// a quarter of the budget.
  double polishReserve(int32_t threads) const {
    int64_t sims = 0;
    for (const Chain &ch : chains)
      sims += ch.simulations;
    int64_t tries = 0;
    for (const std::vector<int32_t> &list : neighbours)
      tries += static_cast<int64_t>(list.size());
    double perSimulation =
        secondsSince(t0) * threads / double(std::max<int64_t>(1, sims));
    return std::min(budget / 4, 2 * tries * perSimulation);
  }

  /// Runs `chain`'s quota of proposals (or until the deadline).
  void runBlock(Chain &ch, double globalBest) {
    ch.improvedThisRound = false;
    ch.roundBest = globalBest;
    Simulator &sim = *ch.sim;
    bool timed = deadline < std::numeric_limits<double>::infinity();
    for (int64_t q = 0; q < ch.quota; ++q) {
      if (timed && secondsSince(t0) >= deadline) {
        ch.hitTime = true;
        return;
      }
      ++ch.proposals;
      ++ch.sinceImprove;
      int32_t n = static_cast<int32_t>(below(ch.rng, uint64_t(N)));
      space.sample(n, ch.rng, ch.proposal);
      {
        // The node keeps its recomputation where the new config allows it;
        // once a start needed recomputation, one move in ten turns it on
        // or off instead (the node's config otherwise unchanged).
        const ParallelConfig &now = sim.strategy().configs[n];
        if (memoryBound && uniform01(ch.rng) < 0.1) {
          ch.proposal.degrees.assign(now.degrees.begin(), now.degrees.end());
          ch.proposal.devices.assign(now.devices.begin(), now.devices.end());
          ch.proposal.recompute = !now.recompute;
        } else {
          ch.proposal.recompute = now.recompute;
        }
        if (ch.proposal.recompute &&
            !mayRecompute(graph, n, ch.proposal.degrees))
          ch.proposal.recompute = false;
      }
      bool tied =
          groupOf[n] >= 0 && uniform01(ch.rng) < opt.tiedMoveProbability;
      double t;
      int32_t unit = tied ? unitOf[groupOf[n]] : -1;
      if (unit >= 0 && uniform01(ch.rng) < opt.unitMoveProbability) {
        t = proposeUnit(ch, unit, groupOf[n]);
        if (std::isnan(t)) {
          ++ch.accepted;
          continue;
        }
      } else if (tied) {
        t = proposeTied(ch, groupOf[n]);
        if (std::isnan(t)) {
          ++ch.accepted;
          continue;
        }
      } else {
        const ParallelConfig &old = sim.strategy().configs[n];
        if (ch.proposal == old) {
          ++ch.accepted;
          continue;
        }
        t = sim.simulateDelta(n, ch.proposal);
      }
      ++ch.simulations;
      bool fits, accept;
      if (ch.curFits) {
        // The memory only where the time accepts (the simulator's memory
        // timeline catches up with the changed layers only when asked).
        accept =
            t <= ch.cur || uniform01(ch.rng) < std::exp(beta * (ch.cur - t));
        fits = accept && !sim.overCapacity();
        accept = fits;
      } else {
        int64_t peak = sim.peakMemoryBytes();
        fits = !sim.overCapacity();
        accept = fits || peak <= ch.curPeak;
        if (accept)
          ch.curPeak = peak;
      }
      if (!accept) {
        sim.undoDelta();
        continue;
      }
      ++ch.accepted;
      ch.cur = t;
      ch.curFits = fits;
      if (fits && t < ch.chainBest) {
        ch.chainBest = t;
        ch.sinceImprove = 0;
      }
      if (fits && t < ch.roundBest) {
        ch.roundBest = t;
        ch.roundBestStrategy = sim.strategy();
        ch.improvedThisRound = true;
      }
    }
  }

  SearchResult run() {
    SearchResult r;
    t0 = Clock::now();
    // Until the first round has measured the chains' pace, the polish's
    // reserve is its most (a round of a large graph can take the budget).
    deadline = budget <= 0   ? std::numeric_limits<double>::infinity()
               : opt.polish ? budget * 3 / 4
                            : budget;
    int64_t maxProposals = opt.maxProposals > 0
                               ? opt.maxProposals
                               : std::numeric_limits<int64_t>::max();
    if (budget <= 0 && opt.maxProposals <= 0)
      maxProposals = 10000; // neither budget: a small default
    int32_t D = machine.numDevices();
    bool subset = D > 1;
    int32_t K = 2 + (subset ? 1 : 0) + std::max(0, opt.randomStarts);
    int64_t patience =
        opt.restartPatience > 0 ? opt.restartPatience
                                : std::max<int64_t>(1000, 50 * int64_t(N));

    chains.resize(K);
    Strategy dp = dataParallelStrategy(graph, D);
    Strategy expert = expertStrategy(graph, D);
    // A start is a full simulation or more (the subset's one per size): on
    // a large graph a few of them take a short budget. Data parallelism and
    // the expert strategy always start (the result reports them); the
    // others only while the chains' share of the budget lasts.
    auto startsOver = [&] { return budget > 0 && secondsSince(t0) >= deadline; };
    for (int32_t k = 0; k < K; ++k) {
      if (k >= 2 && startsOver()) {
        chains.resize(k);
        break;
      }
      Chain &ch = chains[k];
      ch.sim = std::make_unique<Simulator>(graph, machine, costs);
      ch.rng.seed(opt.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull +
                  uint64_t(k) * 0xD1B54A32D192ED03ull);
      ch.proposal.degrees.reserve(kMaxRank);
      ch.proposal.devices.reserve(D);
      if (k == 0) {
        ch.startName = "data-parallel";
        ch.reset(dp);
        r.dataParallelSeconds = ch.cur;
        r.dataParallelFits = ch.curFits;
      } else if (k == 1) {
        ch.startName = "expert";
        ch.reset(expert);
        r.expertSeconds = ch.cur;
        r.expertFits = ch.curFits;
      } else if (k == 2 && subset) {
        // Data parallelism on the first d devices, d = D/2, D/4, ..., 1:
        // the best as the start (a model too small for D devices).
        ch.startName = "data-parallel-subset";
        Strategy bestSub;
        double bestT = std::numeric_limits<double>::infinity();
        bool bestFits = false;
        for (int32_t d = D / 2; d >= 1; d /= 2) {
          if (!bestSub.configs.empty() && startsOver())
            break;
          Strategy s = dataParallelStrategy(graph, d);
          double t = ch.sim->simulateFull(s);
          ++ch.simulations;
          bool fits = !ch.sim->overCapacity();
          if (bestSub.configs.empty() || (fits && !bestFits) ||
              (fits == bestFits && t < bestT)) {
            bestSub = std::move(s);
            bestT = t;
            bestFits = fits;
          }
        }
        ch.reset(bestSub);
      } else {
        ch.startName = "random";
        Strategy s;
        s.configs.resize(N);
        for (int32_t n = 0; n < N; ++n)
          space.sample(n, ch.rng, s.configs[n]);
        ch.reset(s);
      }
      if (!ch.curFits && opt.recompute && (k == 0 || memoryBound)) {
        // Data parallelism does not fit: activation recomputation until
        // each start fits (or as low as it goes). Searches whose data
        // parallelism fits never recompute (their trajectories do not
        // change).
        memoryBound = true;
        fitByRecomputation(graph, *ch.sim, &ch.simulations);
        ch.cur = ch.sim->iterationTime();
        ch.curFits = !ch.sim->overCapacity();
        ch.curPeak = ch.sim->peakMemoryBytes();
        ch.chainBest =
            ch.curFits ? ch.cur : std::numeric_limits<double>::infinity();
      }
      if (ch.curFits && ch.cur < bestSeconds) {
        bestSeconds = ch.cur;
        best = ch.sim->strategy();
        bestPeak = ch.sim->peakMemoryBytes();
        bestStart = ch.startName;
      }
    }
    // beta follows the best time (set between rounds, so deterministic).
    auto setBeta = [&] {
      double ref = bestSeconds < INFINITY ? bestSeconds : r.dataParallelSeconds;
      beta = opt.betaScale / ref;
    };
    setBeta();

    int64_t proposals = 0, lastImproveProposals = 0;
    double lastImproveTime = 0, lastProgress = 0;
    K = static_cast<int32_t>(chains.size());
    r.chains = K;
    int32_t threads = std::max(1, std::min(opt.threads, K));
    auto report = [&](bool done) {
      if (opt.quiet || !opt.progress)
        return;
      SearchProgress p;
      p.elapsedSeconds = secondsSince(t0);
      p.proposals = proposals;
      for (const Chain &ch : chains)
        p.simulations += ch.simulations;
      p.proposalsPerSecond =
          p.elapsedSeconds > 0 ? double(proposals) / p.elapsedSeconds : 0;
      p.bestSeconds = bestSeconds;
      p.dataParallelSeconds = r.dataParallelSeconds;
      p.speedup = bestSeconds > 0 && bestSeconds < INFINITY
                      ? r.dataParallelSeconds / bestSeconds
                      : 0;
      p.done = done;
      opt.progress(p);
    };

    // A graph without ops has nothing to propose (its one strategy is the
    // start's).
    std::string stop = N == 0 ? "empty" : "";
    while (stop.empty()) {
      // Quotas, in chain order.
      int64_t left = maxProposals - proposals;
      for (Chain &ch : chains) {
        ch.quota = std::min<int64_t>(std::max(1, opt.blockProposals), left);
        left -= ch.quota;
      }
      if (threads == 1) {
        for (Chain &ch : chains)
          runBlock(ch, bestSeconds);
      } else {
        // Each thread takes the next chain not yet run (chains differ in
        // cost); a chain's block depends only on its own state and `gb`, so
        // which thread runs it changes nothing.
        std::vector<std::thread> pool;
        double gb = bestSeconds;
        std::atomic<size_t> next{0};
        auto work = [this, gb, &next] {
          for (size_t k; (k = next.fetch_add(1)) < chains.size();)
            runBlock(chains[k], gb);
        };
        for (int32_t t = 1; t < threads; ++t)
          pool.emplace_back(work);
        work();
        for (std::thread &th : pool)
          th.join();
      }
      bool hitTime = false;
      for (Chain &ch : chains) {
        proposals += ch.quota; // upper bound when cut by time; fixed below
        hitTime |= ch.hitTime;
        if (ch.improvedThisRound && ch.roundBest < bestSeconds) {
          bestSeconds = ch.roundBest;
          best = ch.roundBestStrategy;
          bestStart = ch.startName;
          lastImproveProposals = proposals;
          lastImproveTime = secondsSince(t0);
        }
      }
      setBeta();
      if (opt.polish && deadline < INFINITY)
        deadline = budget - polishReserve(threads);
      if (hitTime) {
        proposals = 0;
        for (const Chain &ch : chains)
          proposals += ch.proposals;
      }
      double now = secondsSince(t0);
      if (hitTime || now >= deadline)
        stop = "time";
      else if (proposals >= maxProposals)
        stop = "proposals";
      else if (opt.stopOnStall && bestSeconds < INFINITY &&
               ((opt.maxProposals > 0 &&
                 proposals - lastImproveProposals >= opt.maxProposals / 2) ||
                (budget > 0 && now - lastImproveTime >= budget / 2)))
        stop = "stall";
      if (!stop.empty())
        break;
      // Restarts of chains that stopped improving.
      if (bestSeconds < INFINITY)
        for (Chain &ch : chains)
          if (ch.sinceImprove >= patience) {
            ch.reset(best);
            ++r.restarts;
          }
      if (now - lastProgress >= opt.progressInterval) {
        lastProgress = now;
        report(false);
      }
    }

    r.mcmcSeconds = bestSeconds < INFINITY ? bestSeconds : 0;
    if (opt.polish && bestSeconds < INFINITY && budget > 0 &&
        secondsSince(t0) >= budget) {
      r.polishCut = true; // no time left for its first simulation
    } else if (opt.polish && bestSeconds < INFINITY) {
      double started = secondsSince(t0);
      PolishRun run = polish(*chains[0].sim, best, bestSeconds,
                             budgetEnd(t0, budget));
      r.polishSimulations = run.simulations;
      r.polishCut = run.cut;
      r.polishSeconds = secondsSince(t0) - started;
    }
    r.searchSeconds = secondsSince(t0);
    for (const Chain &ch : chains) {
      r.proposals += ch.proposals;
      r.accepted += ch.accepted;
      r.simulations += ch.simulations;
    }
    r.simulations += r.polishSimulations;
    r.stopReason = stop;
    r.beta = beta;
    if (bestSeconds < INFINITY) {
      r.recomputedNodes = best.numRecomputed();
      r.best = std::move(best);
      r.bestSeconds = bestSeconds;
      r.fits = true;
      r.bestStart = bestStart;
      // Peak memory of the best, from a fresh simulation of it.
      Simulator &sim = *chains[0].sim;
      sim.simulateFull(r.best);
      ++r.simulations;
      r.bestPeakMemoryBytes = sim.peakMemoryBytes();
    } else {
      r.best = dp;
      r.bestSeconds = r.dataParallelSeconds;
      r.fits = false;
      r.bestStart = "data-parallel";
      Simulator &sim = *chains[0].sim;
      sim.simulateFull(r.best);
      ++r.simulations;
      r.bestPeakMemoryBytes = sim.peakMemoryBytes();
    }
    (void)bestPeak;
    report(true);
    return r;
  }
};

} // namespace

SearchResult soap::searchStrategy(const OpGraph &graph, const Machine &machine,
                                  const CostModel &costs,
                                  const SearchOptions &options) {
  Search s(graph, machine, costs, options);
  return s.run();
}
