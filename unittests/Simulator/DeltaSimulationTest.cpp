// Delta simulation (Algorithm 2) must reproduce full simulation exactly: a
// randomized walk of config changes over several synthetic models and
// machines, comparing against a fresh simulator after every change. Along
// the walk, rejected proposals are taken back with undoDelta, which must
// leave every task, the memory and the strategy exactly as they were.
#include "soap/Simulator/GraphBuilder.h"
#include "soap/Simulator/Simulator.h"

#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using namespace soap;

namespace {

std::vector<std::pair<double, double>> schedule(const Simulator &sim) {
  std::vector<std::pair<double, double>> times;
  for (const ScheduledTask &t : sim.scheduledTasks())
    times.push_back({t.start, t.end});
  std::sort(times.begin(), times.end());
  return times;
}

/// Everything observable about a simulator's state, in priority order.
struct State {
  std::vector<ScheduledTask> tasks;
  std::vector<ParallelConfig> configs;
  double time;
  int64_t peak, comm;
  std::vector<int64_t> memory;

  static State of(const Simulator &sim) {
    State st{sim.scheduledTasks(), sim.strategy().configs, sim.iterationTime(),
             sim.peakMemoryBytes(), sim.communicationBytes(),
             sim.report().memoryBytesPerDevice};
    return st;
  }
};

/// The first difference between two states, or "".
std::string differs(const State &a, const State &b) {
  if (a.tasks.size() != b.tasks.size())
    return "task count " + std::to_string(a.tasks.size()) + " vs " +
           std::to_string(b.tasks.size());
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const ScheduledTask &x = a.tasks[i], &y = b.tasks[i];
    if (x.kind != y.kind || x.node != y.node || x.resource != y.resource ||
        x.start != y.start || x.end != y.end || x.bytes != y.bytes)
      return "task " + std::to_string(i) + " (node " + std::to_string(x.node) +
             ", " + taskKindName(x.kind) + ")";
  }
  if (!(a.configs == b.configs))
    return "strategy";
  if (a.time != b.time)
    return "iteration time";
  if (a.peak != b.peak || a.memory != b.memory)
    return "memory";
  if (a.comm != b.comm)
    return "communication";
  return "";
}

/// A random change: `count` distinct nodes (at most all of them), a random
/// config for each.
void drawChange(const OpGraph &graph, int32_t D, size_t count,
                std::mt19937_64 &rng, std::vector<int32_t> &nodes,
                std::vector<ParallelConfig> &configs) {
  count = std::min(count, graph.nodes.size());
  while (nodes.size() < count) {
    int32_t n = static_cast<int32_t>(rng() % graph.nodes.size());
    if (std::find(nodes.begin(), nodes.end(), n) != nodes.end())
      continue;
    nodes.push_back(n);
    configs.push_back(randomConfig(graph.nodes[n], D, rng));
  }
}

/// A proposal that is then rejected: a random change of 1-4 nodes, undone.
/// The state afterwards must be exactly `before`.
void proposeAndUndo(Simulator &sim, const OpGraph &graph, int32_t D,
                    std::mt19937_64 &rng, int step) {
  State before = State::of(sim);
  std::vector<int32_t> nodes;
  std::vector<ParallelConfig> configs;
  drawChange(graph, D, 1 + rng() % 4, rng, nodes, configs);
  size_t count = nodes.size();
  sim.simulateDelta(nodes.data(), configs.data(), count);
  ASSERT_TRUE(sim.undoDelta()) << "step " << step;
  ASSERT_EQ(differs(State::of(sim), before), "") << "undo at step " << step;
  ASSERT_EQ(sim.verifySchedule(), "") << "undo at step " << step;
  // Only the latest delta can be undone, once.
  ASSERT_FALSE(sim.undoDelta()) << "step " << step;
}

Machine twoNodes() {
  Machine m;
  m.name = "2x4";
  m.numNodes = 2;
  m.devicesPerNode = 4;
  m.device = {"G", 10e12, 40e12, 900e9, int64_t(16) << 30, 5e-6};
  m.intraTopology = IntraTopology::P2P;
  m.intraBandwidth = 25e9;
  m.intraLatency = 2e-6;
  m.interBandwidth = 12.5e9;
  m.interLatency = 8e-6;
  return m;
}

/// One loop of `node` split by 2 or 4 over consecutive devices from 0 or
/// 4 (the rest whole): neighbours so placed often read each other's tiles
/// whole on the same devices, which the simulator makes all-gathers.
ParallelConfig groupSplitConfig(const Node &node, int32_t D,
                                std::mt19937_64 &rng) {
  ParallelConfig c;
  c.degrees.assign(node.extents.size(), 1);
  size_t loop = rng() % node.extents.size();
  int32_t degree = rng() % 2 ? 2 : 4;
  if (node.extents[loop] % degree != 0 || degree > D)
    return singleDeviceConfig(node);
  c.degrees[loop] = degree;
  int32_t first = D >= 8 && rng() % 2 ? 4 : 0;
  for (int32_t t = 0; t < degree; ++t)
    c.devices.push_back(first + t);
  return c;
}

/// Whether `sim`'s schedule holds an all-gather.
bool hasGather(const Simulator &sim) {
  for (const ScheduledTask &t : sim.scheduledTasks())
    if (t.kind == TaskKind::Gather)
      return true;
  return false;
}

/// A walk of `steps` changes from data parallelism, each checked against a
/// full simulation. With `minGatherSteps`, a fifth of the single-node
/// changes are groupSplitConfig and at least that many steps must hold an
/// all-gather.
void randomWalk(const OpGraph &input, const Machine &machine, int steps,
                uint64_t seed, int minGatherSteps = 0) {
  // Every third node keeps a value inside it the size of its outputs (a
  // fused ReLU's pre-activation): shared out over its tiles.
  OpGraph graph = input;
  for (size_t n = 0; n < graph.nodes.size(); n += 3)
    for (const Operand &out : graph.nodes[n].outputs)
      graph.nodes[n].savedBytes += graph.tensors[out.tensor].bytes();
  ASSERT_EQ(graph.validate(), "");
  CostModel costs(machine);
  Simulator delta(graph, machine, costs);
  Simulator full(graph, machine, costs);
  int32_t D = machine.numDevices();
  Strategy s = dataParallelStrategy(graph, D);
  double first = delta.simulateFull(s);
  ASSERT_GT(first, 0);
  ASSERT_EQ(delta.verifySchedule(), "");
  EXPECT_FALSE(delta.undoDelta()); // nothing to undo after a full simulation
  std::mt19937_64 rng(seed), undoRng(seed ^ 0x5eed);
  int gatherSteps = 0;
  for (int step = 0; step < steps; ++step) {
    // A rejected proposal (its own random stream: the walk stays the same).
    if (undoRng() % 3 == 0) {
      proposeAndUndo(delta, graph, D, undoRng, step);
      if (::testing::Test::HasFatalFailure())
        return;
    }
    if (rng() % 5 == 0) {
      // Several nodes at once (the search's tied moves).
      std::vector<int32_t> nodes;
      std::vector<ParallelConfig> configs;
      drawChange(graph, D, 2 + rng() % 4, rng, nodes, configs);
      size_t count = nodes.size();
      for (size_t i = 0; i < count; ++i)
        s.configs[nodes[i]] = configs[i];
      double d = delta.simulateDelta(nodes.data(), configs.data(), count);
      double f = full.simulateFull(s);
      ASSERT_EQ(delta.verifySchedule(), "") << "step " << step;
      ASSERT_EQ(d, f) << "step " << step << " (" << count << " nodes)";
      ASSERT_EQ(delta.peakMemoryBytes(), full.peakMemoryBytes());
      ASSERT_EQ(delta.communicationBytes(), full.communicationBytes());
      continue;
    }
    int32_t n = static_cast<int32_t>(rng() % graph.nodes.size());
    ParallelConfig c;
    switch (rng() % (minGatherSteps > 0 ? 5 : 4)) {
    case 4:
      c = groupSplitConfig(graph.nodes[n], D, rng);
      break;
    case 0: // back to one device
      c = singleDeviceConfig(graph.nodes[n], static_cast<int32_t>(rng() % D));
      break;
    case 1: // data parallel config of that node
      c = dataParallelStrategy(graph, D).configs[n];
      break;
    default:
      c = randomConfig(graph.nodes[n], D, rng);
    }
    // Activation recomputation: on for every third change, and every
    // eleventh toggles it alone (same degrees and devices).
    if (step % 11 == 5) {
      c = s.configs[n];
      c.recompute = !c.recompute;
    } else if (step % 3 == 0) {
      c.recompute = true;
    }
    if (c.recompute && splitsReduction(graph.nodes[n], c.degrees))
      c.recompute = false;
    s.configs[n] = c;
    double d = delta.simulateDelta(n, c);
    double f = full.simulateFull(s);
    ASSERT_EQ(full.verifySchedule(), "") << "step " << step;
    ASSERT_EQ(delta.verifySchedule(), "") << "step " << step;
    ASSERT_EQ(d, f) << "step " << step << " node " << graph.nodes[n].name;
    ASSERT_EQ(delta.peakMemoryBytes(), full.peakMemoryBytes());
    ASSERT_EQ(delta.communicationBytes(), full.communicationBytes());
    if (step % 50 == 0)
      ASSERT_EQ(schedule(delta), schedule(full)) << "step " << step;
    if (minGatherSteps > 0 && hasGather(full))
      ++gatherSteps;
  }
  EXPECT_GE(gatherSteps, minGatherSteps);
  // The full schedule, not only its length, matches at the end.
  EXPECT_EQ(schedule(delta), schedule(full));
  // And re-running full simulation on the delta simulator changes nothing.
  double again = delta.iterationTime();
  EXPECT_EQ(delta.simulateFull(s), again);
}

/// A 3-D activation collapsed to rows (8*16 rows indexed 16*d0 + d1), then
/// an MLP: tiles of the collapse write strided rows.
OpGraph collapsedMLP() {
  GraphBuilder b("collapsed_mlp");
  int32_t x = b.input("x", {8, 16, 32});
  x = b.elementwise("pre", "linalg.generic.relu", {x});
  x = b.collapseLeading("flatten", x);
  int32_t w0 = b.parameter("w0", {32, 64});
  x = b.elementwise("relu0", "linalg.generic.relu", {b.matmul("fc0", x, w0)});
  int32_t w1 = b.parameter("w1", {64, 16});
  b.markOutput(b.matmul("fc1", x, w1));
  return b.take();
}

/// One activation read by four layers (and by the sum after them): later
/// readers find parts of it that earlier ones moved to their devices.
OpGraph fanOut() {
  GraphBuilder b("fan_out");
  int32_t x = b.input("x", {16, 32});
  int32_t h = b.elementwise("pre", "linalg.generic.relu", {x});
  std::vector<int32_t> outs{h};
  for (int i = 0; i < 4; ++i) {
    int32_t w = b.parameter("w" + std::to_string(i), {32, 32});
    outs.push_back(b.matmul("fc" + std::to_string(i), h, w));
  }
  b.markOutput(b.elementwise("sum", "linalg.generic.add", outs));
  return b.take();
}

/// An activation made by a layer whose reduction may be split (its sums
/// then on every device of the group) and read by three layers: readers
/// that split their own reduction of its gradient over the same devices
/// share one ring (the training step's chained sums).
OpGraph sharedProjections() { return sharedProjectionsGraph(16, 32, 32, 32); }

/// A split reduction's sums read by three elementwise ops (a layer norm's):
/// their gradient parts are sent with an earlier reader's where it holds
/// them.
OpGraph normReaders() { return normReadersGraph(16, 32, 32); }

} // namespace

TEST(DeltaSimulation, SharedProjectionsOnTwoNodes) {
  randomWalk(sharedProjections(), twoNodes(), 2000, 10, 100);
}

TEST(DeltaSimulation, NormReadersOnTwoNodes) {
  randomWalk(normReaders(), twoNodes(), 3000, 11, 50);
}

TEST(DeltaSimulation, FanOutOnTwoNodes) {
  randomWalk(fanOut(), twoNodes(), 3000, 7);
}

TEST(DeltaSimulation, CollapsedRowsOnTwoNodes) {
  randomWalk(collapsedMLP(), twoNodes(), 2000, 6);
}

TEST(DeltaSimulation, MLPOnTwoNodes) {
  randomWalk(makeMLPGraph(64, {256, 512, 512, 256, 10}), twoNodes(), 3000, 1);
}

TEST(DeltaSimulation, GathersOnTwoNodes) {
  // Layers split by columns or rows over the same device groups: the
  // all-gathers (and their gradients' reduce-scatters) come and go, and
  // later readers find what an earlier reader's gather brought.
  randomWalk(fanOut(), twoNodes(), 2000, 8, 200);
  randomWalk(makeMLPGraph(64, {256, 512, 512, 256, 10}), twoNodes(), 2000, 9,
             200);
}

TEST(DeltaSimulation, InceptionLikeOnP100Cluster) {
  auto m = getMachinePreset("p100-4x4");
  ASSERT_TRUE(static_cast<bool>(m));
  randomWalk(makeInceptionLikeGraph(16, 32, 8, 3), *m, 800, 2);
}

TEST(DeltaSimulation, RNNLikeOnSharedBus) {
  auto m = getMachinePreset("k80-16x4");
  ASSERT_TRUE(static_cast<bool>(m));
  randomWalk(makeRNNLikeGraph(32, 128, 4), *m, 400, 3);
}

TEST(DeltaSimulation, InceptionLikeOnNVSwitchCluster) {
  auto m = getMachinePreset("h100-4x8");
  ASSERT_TRUE(static_cast<bool>(m));
  randomWalk(makeInceptionLikeGraph(32, 16, 4, 2), *m, 500, 4);
}

TEST(DeltaSimulation, ZeroDurationTiesOnTinyMachine) {
  // Identical tiles and ties in ready times everywhere.
  Machine m = twoNodes();
  m.device.launchOverhead = 0;
  randomWalk(makeMLPGraph(8, {8, 8, 8}), m, 2000, 5);
}
