//===- Simulator.h - Execution simulator (FlexFlow §5) ----------*- C++ -*-===//
//
// Simulates one training iteration of an OpGraph under a Strategy on a
// Machine (DESIGN.md "Simulator", the paper's Algorithms 1 and 2).
//
// Task graph. Per tile t of node n: a forward task F(n,t) and a backward task
// B(n,t) on the tile's device, F(n,t) -> B(n,t). For every edge (node p
// writes tensor T, node n reads it through input i), the producer tiles a
// and consumer tiles b whose regions of T intersect (Region.h) exchange the
// intersection; a pair on one device is a direct dependency, the others are
// aggregated per link: ONE forward transfer task per (edge, link) carries
// the bytes of every pair whose route is that link (so the latency is paid
// once per link), waits for all its source tiles and feeds all its
// destination tiles. Backward, the gradient of the same intersections goes
// from B(n,b) to B(p,a), likewise one gradient-transfer task per (edge,
// link). A producer tile's part of T that an earlier reader of T (by node,
// then input) already moved to the consumer tile's device, covering it, is
// not moved again: the consumer waits for that earlier transfer, and its
// gradient is summed on the device and sent back by the earlier reader's
// gradient transfer (soap-partition keeps one copy per device:
// ensureValid; a device runs the later reader's backward task before the
// earlier reader's). Where the pairs left are an all-gather, as
// soap-form-collectives makes them one (Region.h's findAllGathers, which
// both use: a group of n >= 2 devices, each
// holding one producer tile whose whole part sent is one of n equal
// consecutive chunks of a region along one dimension, sent to every other
// device of the group and to no other), they move in ONE ring task on the
// ring's links (devices in increasing order), lasting (n-1)/n * bytes /
// (slowest ring link) + (n-1) * (largest ring latency), after the group's
// producer tiles; their gradients go back in one ring reduce-scatter of
// the same size after the reading consumer tiles' backward tasks (the
// generated code reduce-scatters the input-gradient partial sums).
// A tile of a reshape whose output dimension several
// loops index (a collapse, `40*d0 + d1`) sends only the runs it wrote
// (exactDimRuns), not their bounding box.
// A node whose Reduction loops are split (r = product of their degrees > 1)
// leaves partial sums: each group of r tiles sharing an output region
// all-reduces its partial results over the group's devices (one ring task on
// all of its links, as the generated code does with NCCL; a group on one
// device sums them in a combine task). The sums are then on every device of
// the group: a consumer tile on one of them reads them there, any other from
// the group's first tile (reduction coordinates 0).
// Replicas of a parameter are the tiles with the same coordinates on the
// split loops that index it. A node's own parameters (read by no other
// node) whose replicas form the same groups are synchronized together (one
// gradient bucket per layer):
// each group of k > 1 replicas gets one ring all-reduce of the summed bytes
// after their backward tasks: ONE task that holds every distinct link of the
// ring (devices in increasing order) at once, lasting 2(k-1)/k * bytes /
// (slowest ring link bandwidth) + 2(k-1) * (largest ring link latency); it
// starts once the group's backward tasks have ended and all those links are
// free. Then ONE update task per tile (after the all-reduces of its groups)
// updates all of the node's own parameters on that tile.
// A parameter shared by several nodes (RNN weights, tied embeddings) is
// synchronized per parameter, not per node: its gradient contributions are
// summed locally and all-reduced once (as soap-partition's chains of
// partial sums do). Its replica groups: for each distinct region of it read
// by some reader tile (any reading node), the distinct devices of the
// reader tiles holding exactly that region; a group of k > 1 devices gets
// one ring all-reduce (as above) of the region's bytes, after the backward
// tasks of every reader tile whose region meets it (its predecessors: the
// last of them on each device, since a device's ends never decrease in
// priority order). When regions overlap
// (readers whose tile layouts differ), the regions are the cells of the
// grid their bounds make, each synchronized over the devices with a region
// that covers it; past 64 cells the distinct regions are kept (overlaps
// then counted once per region: an approximation). It is emitted right
// after B of its first reader (the last of its readers in the backward
// pass).
// Then one update per (region, device) follows it (or, for k = 1, the
// contributing backward tasks), emitted after the first reader's updates.
//
// Schedule (static program order). The generated program is SPMD
// straight-line code: every device runs its operations, and issues its
// communication, in program order. Every task has a fixed priority:
//   1. forward, for n = 0..N-1: the forward transfers into n (per input edge,
//      per link), then F(n,*), n's partial-sum all-reduces and combines;
//   2. backward, for n = N-1..0: the gradient transfers into n (per output
//      edge, per link), then B(n,*) and n's all-reduces (per group), then
//      the all-reduces of the shared parameters whose first reader is n;
//   3. updates, for n = N-1..0 (n's, then those of the shared parameters
//      whose first reader is n);
// within a group, tasks are ordered by tile (or link). Each device and each
// link runs its tasks in this static order (not in order of readiness):
//   ready(t) = max over predecessors p of end(p)   (0 without predecessors)
//   start(t) = max(ready(t), end of the previous task in priority order of
//              each of t's resources)  (an all-reduce has several)
//   end(t)   = start(t) + duration(t)
// So all-reduces overlap with the backward pass of earlier nodes, and the
// updates run after the whole backward pass. simulateFull() builds the task
// graph and computes this in one sweep in priority order. simulateDelta()
// rebuilds only the changed node's tasks, those of its incident edges and
// the all-reduces and updates of the shared parameters it reads, and
// re-sweeps from the first rebuilt task (resuming the resources' state
// from a checkpoint), stopping at the first checkpoint past the rebuilt
// tasks where every resource is where the previous schedule had it and no
// later task reads a changed one; it
// yields the same times, bit for bit, as simulateFull() of the new strategy.
// undoDelta() takes the last delta back (a rejected search proposal): the
// delta logs what it overwrites as it goes (task ranges, the ends it
// re-sweeps, checkpoints; a node's geometry and an edge's pairs and
// delivery lists are moved aside whole, not copied), and the undo puts it
// back, bit for bit, without building or sweeping anything.
// None of them allocates once the task pools and logs have reached their
// size.
//
// Memory per device (bytes, exact integers), at its peak over the step as
// the training step runs it (forward tasks in node order, then backward
// tasks in reverse, each parameter updated right after its gradient):
// - all iteration: parameters for the regions each tile reads, graph-input
//   regions, activations received from other devices, the graph's outputs,
//   and a shared parameter's gradient (once per synchronized region);
// - from a node's forward task through its backward task: its output
//   regions and their share of the values saved inside it
//   (Node::savedBytes: a fused ReLU's pre-activation);
// - from the backward task of its last reader through its own: the
//   gradient of a node's outputs (where a parameter is upstream);
// - while its backward task runs: the gradients of a node's parameters.
// A recomputed node's outputs (ParallelConfig::recompute; not those the
// graph returns, which stay) die after their last forward reader and live
// again from the backward task that first reads them (or reads a recomputed
// node that reads them), and the node's backward tasks run its forward
// computation first. A device over the machine's capacity makes the
// strategy over capacity (report().overCapacity).
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
  PartialSum,       ///< all-reduce of a split reduction's partial results
  Combine,          ///< summing partial results
  Join,             ///< zero-time barrier, no resource (not generated now)
  AllReduce,        ///< a gradient all-reduce, on all of its ring's links
  Update,           ///< parameter update
  Gather,           ///< an edge's ring all-gather, on all of its ring's links
  GradientScatter,  ///< its gradients' ring reduce-scatter, likewise
};
const char *taskKindName(TaskKind kind);

struct SimulationReport {
  double iterationSeconds = 0;
  /// Sum of task durations per device / per link (an all-reduce counts on
  /// each of its links).
  std::vector<double> deviceBusySeconds;
  std::vector<double> linkBusySeconds;
  /// Bytes moved between devices: transfers, partial sums and all-reduce
  /// traffic (2(k-1) * bytes for a ring of k).
  int64_t communicationBytes = 0;
  /// Memory per device (see the file comment) and its maximum.
  std::vector<int64_t> memoryBytesPerDevice;
  int64_t peakMemoryBytes = 0;
  /// Where it is reached first: the device, and the task during which its
  /// activations and gradients peak, node peakMemoryNode's forward task or
  /// (peakMemoryInBackward) its backward task; -1: the device holds only
  /// what it keeps all iteration.
  int32_t peakMemoryDevice = -1;
  int32_t peakMemoryNode = -1;
  bool peakMemoryInBackward = false;
  bool overCapacity = false;
  int64_t numTasks = 0;
};

/// One scheduled task, for traces and tests. A task on several resources
/// (an all-reduce) is listed once per resource.
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
  /// Replaces the configs of `count` distinct nodes at once (configs[i] for
  /// nodes[i]) and re-simulates incrementally: the same result as changing
  /// them one by one, in one sweep.
  double simulateDelta(const int32_t *nodes, const ParallelConfig *configs,
                       size_t count);
  /// Takes back the last simulateDelta(): the strategy, the schedule, the
  /// memory and every cache are bit for bit what they were before it, at a
  /// fraction of a delta's cost (what it overwrote is logged as it goes).
  /// Only the latest delta can be undone; false (nothing changed) after
  /// simulateFull(), an undo, or before any delta.
  bool undoDelta();

  double iterationTime() const { return iterationSeconds; }
  const Strategy &strategy() const { return current; }
  /// Maximum per-device memory and whether some device is over capacity
  /// (cheap: maintained incrementally; with recomputed nodes, a pass over
  /// them and their edges).
  int64_t peakMemoryBytes() const;
  bool overCapacity() const;
  int64_t communicationBytes() const { return commBytes; }
  /// Tasks (re)computed by all delta simulations so far (rebuilt tasks and
  /// tasks whose inputs or resource predecessors changed).
  int64_t deltaTasksProcessed() const;

  SimulationReport report() const;
  /// All tasks, in priority order (see ScheduledTask).
  std::vector<ScheduledTask> scheduledTasks() const;
  /// Resource names: devices "gpu N", then Machine::linkName of each link.
  std::string resourceName(int32_t resource) const;
  int32_t numResources() const;

  /// Checks the schedule against its definition (ready = latest
  /// predecessor end, predecessors earlier in priority order, each resource
  /// in priority order, start = max(ready, previous end)) by recomputing it
  /// from scratch; empty when it holds, else the first violation. For tests.
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
