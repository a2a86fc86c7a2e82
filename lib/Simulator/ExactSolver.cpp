//===- ExactSolver.cpp - Optimal strategies of small graphs ---------------===//
//
// See ExactSolver.h for the bound and why it is valid.
//
//===----------------------------------------------------------------------===//

#include "soap/Simulator/ExactSolver.h"

#include "soap/Simulator/Search.h"
#include "soap/Simulator/Simulator.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

using namespace soap;

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Durations of one config of one node, read from a simulation.
struct ConfigCost {
  int64_t index = 0;
  double fwd = 0;  ///< one forward tile task
  double bwd = 0;  ///< one backward tile task
  double tail = 0; ///< gradient all-reduce + update after a backward task
  double work = 0; ///< all tiles' forward + backward
  /// The node's own tasks (compute, combine, update, partial sums,
  /// all-reduce; not the edge transfers) as (resource, seconds).
  std::vector<std::pair<int32_t, double>> own;
};

struct Solver {
  const OpGraph &graph;
  const Machine &machine;
  const ExactOptions &opt;
  ConfigSpace space;
  Simulator sim;
  int32_t N, D;
  std::vector<std::vector<ConfigCost>> cands; // per node, by fwd+bwd
  std::vector<std::vector<int32_t>> preds, succs;
  std::vector<double> minF, minFB, minTail, minWork, suffixWork;
  std::vector<int32_t> assigned;   // candidate position per node, -1: none
  std::vector<int64_t> simIndex;   // config index the simulator holds
  std::vector<std::vector<double>> loads; // per depth, per resource
  int32_t R = 0;                          // resources
  std::vector<double> H, G;
  ParallelConfig scratch;
  double best = kInf;
  Strategy bestStrategy;
  ExactResult res;
  Clock::time_point t0;
  bool stopped = false;

  Solver(const OpGraph &g, const Machine &m, const CostModel &c,
         const ExactOptions &o)
      : graph(g), machine(m), opt(o), space(g, m.numDevices()),
        sim(g, m, c), N(static_cast<int32_t>(g.nodes.size())),
        D(m.numDevices()) {}

  void precompute() {
    preds.assign(N, {});
    succs.assign(N, {});
    for (int32_t n = 0; n < N; ++n)
      for (const Operand &op : graph.nodes[n].inputs) {
        int32_t p = graph.tensors[op.tensor].producer;
        if (p >= 0 && std::find(preds[n].begin(), preds[n].end(), p) ==
                          preds[n].end()) {
          preds[n].push_back(p);
          succs[p].push_back(n);
        }
      }
    Strategy base = singleDeviceStrategy(graph);
    sim.simulateFull(base);
    simIndex.assign(N, 0);
    for (int32_t n = 0; n < N; ++n)
      simIndex[n] = space.indexOf(n, base.configs[n]);
    cands.assign(N, {});
    minF.assign(N, kInf);
    minFB.assign(N, kInf);
    minTail.assign(N, kInf);
    minWork.assign(N, kInf);
    res.spaceSize = 1;
    for (int32_t n = 0; n < N; ++n) {
      int64_t C = space.numConfigs(n);
      res.spaceSize *= double(C);
      for (int64_t i = 0; i < C; ++i) {
        space.config(n, i, scratch);
        sim.simulateDelta(n, scratch);
        ConfigCost cc;
        cc.index = i;
        double f = kInf, b = kInf, ar = kInf, upd = kInf;
        bool hasAR = false, hasUpd = false;
        for (const ScheduledTask &t : sim.scheduledTasks()) {
          if (t.node != n)
            continue;
          double d = t.end - t.start;
          if (t.resource >= 0 && t.kind != TaskKind::Transfer &&
              t.kind != TaskKind::GradientTransfer &&
              t.kind != TaskKind::Gather && t.kind != TaskKind::GradientScatter)
            cc.own.push_back({t.resource, d});
          switch (t.kind) {
          case TaskKind::Forward:
            f = std::min(f, d);
            break;
          case TaskKind::Backward:
            b = std::min(b, d);
            break;
          case TaskKind::AllReduce:
            ar = std::min(ar, d);
            hasAR = true;
            break;
          case TaskKind::Update:
            upd = std::min(upd, d);
            hasUpd = true;
            break;
          default:
            break;
          }
        }
        cc.fwd = f;
        cc.bwd = b;
        cc.tail = (hasAR ? ar : 0) + (hasUpd ? upd : 0);
        cc.work = scratch.numTiles() * (f + b);
        std::sort(cc.own.begin(), cc.own.end());
        minF[n] = std::min(minF[n], f);
        minFB[n] = std::min(minFB[n], f + b);
        minTail[n] = std::min(minTail[n], cc.tail);
        minWork[n] = std::min(minWork[n], cc.work);
        cands[n].push_back(cc);
      }
      std::sort(cands[n].begin(), cands[n].end(),
                [](const ConfigCost &a, const ConfigCost &b) {
                  double x = a.fwd + a.bwd, y = b.fwd + b.bwd;
                  return x != y ? x < y : a.index < b.index;
                });
      // Leave the simulator on the base config of n.
      space.config(n, simIndex[n], scratch);
      sim.simulateDelta(n, scratch);
    }
    suffixWork.assign(N + 1, 0);
    for (int32_t n = N - 1; n >= 0; --n)
      suffixWork[n] = suffixWork[n + 1] + minWork[n];
    assigned.assign(N, -1);
    R = sim.numResources();
    loads.assign(N + 1, std::vector<double>(R, 0.0));
    H.assign(N, 0);
    G.assign(N, 0);
  }

  double pathBound() {
    double lb = 0;
    for (int32_t n = 0; n < N; ++n) {
      double h = 0;
      for (int32_t p : preds[n]) {
        double fp = assigned[p] >= 0 ? cands[p][assigned[p]].fwd : minF[p];
        h = std::max(h, H[p] + fp);
      }
      H[n] = h;
    }
    for (int32_t n = N - 1; n >= 0; --n) {
      const ConfigCost *c = assigned[n] >= 0 ? &cands[n][assigned[n]] : nullptr;
      double g = 0;
      for (int32_t m : succs[n])
        g = std::max(g, G[m]);
      G[n] = g + (c ? c->fwd + c->bwd : minFB[n]);
      lb = std::max(lb, H[n] + G[n] + (c ? c->tail : minTail[n]));
    }
    return lb;
  }

  void simulateLeaf() {
    for (int32_t n = 0; n < N; ++n) {
      int64_t idx = cands[n][assigned[n]].index;
      if (simIndex[n] == idx)
        continue;
      space.config(n, idx, scratch);
      sim.simulateDelta(n, scratch);
      simIndex[n] = idx;
    }
    ++res.leaves;
    double t = sim.iterationTime();
    if (!sim.overCapacity() && t < best) {
      best = t;
      bestStrategy = sim.strategy();
    }
  }

  void dfs(int32_t k) {
    if (stopped)
      return;
    if (k == N) {
      simulateLeaf();
      if ((opt.maxLeaves > 0 && res.leaves >= opt.maxLeaves) ||
          (opt.timeLimitSeconds > 0 &&
           (res.leaves & 255) == 0 &&
           std::chrono::duration<double>(Clock::now() - t0).count() >=
               opt.timeLimitSeconds))
        stopped = true;
      return;
    }
    const std::vector<double> &in = loads[k];
    std::vector<double> &out = loads[k + 1];
    for (int32_t ci = 0, e = static_cast<int32_t>(cands[k].size()); ci < e;
         ++ci) {
      if (stopped)
        return;
      const ConfigCost &c = cands[k][ci];
      ++res.searchNodes;
      assigned[k] = ci;
      // Load bound: each resource runs its tasks one at a time; the
      // unassigned nodes' compute is at best spread over all devices.
      out = in;
      for (const auto &[r, d] : c.own)
        out[r] += d;
      double maxLoad = 0, total = 0;
      for (int32_t r = 0; r < R; ++r) {
        maxLoad = std::max(maxLoad, out[r]);
        if (r < D)
          total += out[r];
      }
      double lb = std::max(maxLoad, (total + suffixWork[k + 1]) / D);
      if (lb < best)
        lb = std::max(lb, pathBound());
      // Durations are exact simulator values; the margin only guards
      // against rounding in the sums above.
      if (lb >= best * (1 + 1e-12)) {
        ++res.pruned;
        continue;
      }
      dfs(k + 1);
    }
    assigned[k] = -1;
  }

  ExactResult run() {
    t0 = Clock::now();
    precompute();
    // Seed the incumbent with data parallelism and the expert strategy.
    for (const Strategy &s :
         {dataParallelStrategy(graph, D), expertStrategy(graph, D)}) {
      double t = sim.simulateFull(s);
      for (int32_t n = 0; n < N; ++n)
        simIndex[n] = space.indexOf(n, s.configs[n]);
      if (!sim.overCapacity() && t < best) {
        best = t;
        bestStrategy = s;
      }
    }
    // simIndex may hold -1 (a config outside the space): the first leaf
    // then re-applies that node.
    dfs(0);
    res.complete = !stopped;
    res.found = best < kInf;
    res.bestSeconds = res.found ? best : 0;
    res.best = std::move(bestStrategy);
    res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return res;
  }
};

} // namespace

ExactResult soap::solveExact(const OpGraph &graph, const Machine &machine,
                             const CostModel &costs,
                             const ExactOptions &options) {
  Solver s(graph, machine, costs, options);
  return s.run();
}
