//===- ExactSolver.h - Optimal strategies of small graphs -------*- C++ -*-===//
//
// Branch and bound over the ConfigSpace (Search.h) of every node: the optimum
// over the same space the MCMC search walks, so tests can check that the
// search finds it (issue 5). Exponential: for graphs of a few nodes on a few
// devices.
//
// Nodes are assigned in graph (topological) order, each node's configs tried
// by increasing tile compute time. A partial assignment is pruned when a
// lower bound on the iteration time of every completion is >= the best time
// found (data parallelism and the expert strategy seed it). The bound is the
// larger of:
//  * a path bound. Every strategy's task graph has, for each node n and each
//    path source -> ... -> n -> ... -> sink of the node graph, a chain of
//    tasks F(source) ... F(n) ... F(sink) B(sink) ... B(n), then, when n
//    reads a parameter, its gradient all-reduce and update (Simulator.h:
//    consumer tiles depend on the producer tiles whose regions they read,
//    backward gradients flow the same pairs in reverse). A chain's length
//    bounds the iteration time (start >= ready). Assigned nodes contribute
//    their tile times, all-reduce and update; unassigned ones the minimum
//    over their configs. Transfers and partial sums are left out (>= 0).
//  * a load bound: every resource (device or link) runs its tasks one at a
//    time, so the time is at least the sum of the durations of the tasks the
//    assigned nodes put on it (compute, combine, update, partial sums,
//    all-reduce; not the edge transfers, which depend on two nodes); and at
//    least all devices' compute, assigned plus the unassigned nodes' minimum,
//    spread evenly over the devices.
// Task durations come from the simulator itself (one simulation per config,
// before the search), so the bound is consistent with it by construction.
// A leaf is simulated (simulateDelta of the nodes that changed) and kept when
// it fits in memory and is strictly faster.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_EXACTSOLVER_H
#define SOAP_SIMULATOR_EXACTSOLVER_H

#include "soap/Simulator/CostModel.h"
#include "soap/Simulator/Machine.h"
#include "soap/Simulator/OpGraph.h"
#include "soap/Simulator/Strategy.h"

#include <cstdint>

namespace soap {

struct ExactOptions {
  /// Stop (complete = false) after this many simulated leaves; <= 0: none.
  int64_t maxLeaves = 0;
  /// Stop (complete = false) after this many seconds; <= 0: none.
  double timeLimitSeconds = 0;
};

struct ExactResult {
  /// The optimum (when complete) among strategies that fit in memory.
  Strategy best;
  double bestSeconds = 0;
  bool found = false;    ///< some strategy fits
  bool complete = false; ///< the whole space was searched: best is optimal
  int64_t searchNodes = 0; ///< partial assignments visited
  int64_t pruned = 0;      ///< partial assignments cut by the bound
  int64_t leaves = 0;      ///< complete strategies simulated
  double spaceSize = 0;    ///< product of the nodes' config counts
  double seconds = 0;
};

ExactResult solveExact(const OpGraph &graph, const Machine &machine,
                       const CostModel &costs,
                       const ExactOptions &options = {});

} // namespace soap

#endif // SOAP_SIMULATOR_EXACTSOLVER_H
