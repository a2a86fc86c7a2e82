//===- Simulator.h - Execution simulator (FlexFlow §5) ----------*- C++ -*-===//
//
// Simulates one training iteration of an OpGraph under a Strategy on a
// Machine (DESIGN.md "Simulator", the paper's Algorithms 1 and 2).
//
// Task graph. Per tile t of node n: a forward task F(n,t) and a backward task
// B(n,t) on the tile's device, F(n,t) -> B(n,t). For every edge (node p
// writes tensor T, node n reads it through input i):
//  * forward: for each producer tile a and consumer tile b whose regions of
//    T intersect (Region.h), a transfer of the intersection from a's device
//    to b's (none when they share a device: a direct dependency instead);
//  * backward: the gradient of the same intersection from B(n,b) to B(p,a).
// A node whose Reduction loops are split (r = product of their degrees > 1)
// leaves partial sums: each group of r tiles sharing an output region sends
// its partial results to the group's first tile (reduction coordinates 0),
// which sums them in a combine task; consumers read the combined region.
// A parameter input read by k > 1 tiles on the same region (replicas) gets a
// ring all-reduce of its gradient after their backward tasks: one task per
// distinct link of the ring (devices in increasing order), each lasting
// 2(k-1)/k * bytes / (slowest ring link bandwidth) + 2(k-1) * (largest ring
// link latency); then an update task per replica. A parameter shared by
// several nodes (RNN weights) is synchronized per node (an approximation).
//
// Schedule. Each device and each link is a resource running its tasks in
// FIFO order of ready time (ties broken by a canonical task rank that orders
// every task after its predecessors and is independent of how the task graph
// was built); join tasks of collectives have no resource. Exactly:
//   ready(t) = max over predecessors p of end(p)   (0 without predecessors)
//   start(t) = max(ready(t), end of the previous task on t's resource)
//   end(t)   = start(t) + duration(t)
// simulateFull() builds the task graph from scratch and runs Algorithm 1
// (a queue ordered by ready time). simulateDelta() changes one node's config,
// rebuilds only that node's tasks and those of its incident edges, and
// re-simulates from the changed tasks, propagating through successors and
// resource order only where times change (Algorithm 2); it yields the same
// times, bit for bit, as simulateFull() of the new strategy.
//
// Memory per device (bytes, exact integers): parameters and their gradients
// for the regions each tile reads, the output regions each tile keeps for
// backward, graph-input regions it reads, and activations it receives from
// other devices. Nothing is freed within the iteration, so the total is the
// peak; a device over the machine's capacity makes the strategy over
// capacity (report().overCapacity).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_SIMULATOR_H
#define SOAP_SIMULATOR_SIMULATOR_H

#include "soap/Simulator/CostModel.h"
#include "soap/Simulator/Machine.h"
#include "soap/Simulator/OpGraph.h"
#include "soap/Simulator/Region.h"
#include "soap/Simulator/Strategy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace soap {

/// What a task does (for the report and the trace).
enum class TaskKind : uint8_t {
  Forward,
  Backward,
  Transfer,         ///< forward activation region
  GradientTransfer, ///< backward gradient region
  PartialSum,       ///< partial result of a split reduction to its owner
  Combine,          ///< summing partial results
  Join,             ///< zero-time barrier of a collective (no resource)
  AllReduce,        ///< one ring link's share of a gradient all-reduce
  Update,           ///< parameter update
};
const char *taskKindName(TaskKind kind);

struct SimulationReport {
  double iterationSeconds = 0;
  /// Sum of task durations per device / per link.
  std::vector<double> deviceBusySeconds;
  std::vector<double> linkBusySeconds;
  /// Bytes moved between devices: transfers, partial sums and all-reduce
  /// traffic (2(k-1) * bytes for a ring of k).
  int64_t communicationBytes = 0;
  /// Memory per device (see the file comment) and its maximum.
  std::vector<int64_t> memoryBytesPerDevice;
  int64_t peakMemoryBytes = 0;
  bool overCapacity = false;
  int64_t numTasks = 0;
};

/// One scheduled task, for traces and tests.
struct ScheduledTask {
  TaskKind kind;
  int32_t node;     ///< owning node (for edges: the consumer)
  int32_t resource; ///< device id, numDevices + link id, or -1
  double start;
  double end;
  double bytes; ///< moved bytes (communication tasks)
};

class Simulator {
public:
  /// The graph, machine and cost model must outlive the simulator. The
  /// graph must validate and satisfy validateForTiling().
  Simulator(const OpGraph &graph, const Machine &machine,
            const CostModel &costs);
  ~Simulator();
  Simulator(const Simulator &) = delete;
  Simulator &operator=(const Simulator &) = delete;

  /// Builds the task graph for `strategy` (which must pass
  /// validateStrategy for the machine) and simulates it from scratch.
  /// Returns the iteration time in seconds.
  double simulateFull(const Strategy &strategy);
  /// Replaces the config of `node` (valid for the machine) and re-simulates
  /// incrementally. Requires a previous simulateFull().
  double simulateDelta(int32_t node, const ParallelConfig &config);

  double iterationTime() const { return iterationSeconds; }
  const Strategy &strategy() const { return current; }
  /// Maximum per-device memory and whether some device is over capacity
  /// (cheap: maintained incrementally).
  int64_t peakMemoryBytes() const;
  bool overCapacity() const;
  int64_t communicationBytes() const { return commBytes; }
  /// Tasks (re)processed by all delta simulations so far (a task may be
  /// processed more than once per delta simulation).
  int64_t deltaTasksProcessed() const;

  SimulationReport report() const;
  /// All live tasks, in no particular order.
  std::vector<ScheduledTask> scheduledTasks() const;
  /// Resource names: devices "gpu N", then Machine::linkName of each link.
  std::string resourceName(int32_t resource) const;
  int32_t numResources() const;

  /// Checks the schedule against its definition (ready = latest
  /// predecessor end, each resource in (ready, rank) order, start = max(ready,
  /// previous end)); empty when it holds, else the first violation. For tests.
  std::string verifySchedule() const;

  const OpGraph &getGraph() const { return graph; }
  const Machine &getMachine() const { return machine; }

  struct Impl;

private:
  const OpGraph &graph;
  const Machine &machine;
  const CostModel &costs;
  Strategy current;
  double iterationSeconds = 0;
  int64_t commBytes = 0;
  Impl *impl;
};

} // namespace soap

#endif // SOAP_SIMULATOR_SIMULATOR_H
