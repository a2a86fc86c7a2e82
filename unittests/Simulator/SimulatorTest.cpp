// Hand-computed expectations for the simulator. The test machine has round
// numbers: links of 1 GB/s with 1 us latency (NVLink-like point-to-point),
// no launch overhead; compute times come from a profile table so that the
// timeline is easy to follow, except where the analytic model is tested.
#include "soap/Simulator/CostModel.h"
#include "soap/Simulator/GraphBuilder.h"
#include "soap/Simulator/Simulator.h"
#include "soap/Simulator/Trace.h"

#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <set>

using namespace soap;

static Machine testMachine(int32_t devices, int64_t memory = int64_t(1) << 40) {
  Machine m;
  m.name = "test";
  m.numNodes = 1;
  m.devicesPerNode = devices;
  m.device = {"TestGPU", 1e12, 1e12, 1e12, memory, 0.0};
  m.intraTopology = IntraTopology::P2P;
  m.intraBandwidth = 1e9;
  m.intraLatency = 1e-6;
  return m;
}

static void addProfile(ProfileTable &table, const Node &node,
                       std::vector<int64_t> tileExtents, double fwdUs,
                       double bwdUs) {
  table.add({node.kind, std::move(tileExtents), 4, "TestGPU", fwdUs * 1e-6,
             bwdUs * 1e-6});
}

// Update task time of `bytes` of fp32 parameters on testMachine: elementwise
// class (25% of 1e12 FLOP/s, 80% of 1e12 B/s); 2 flops per element, reads
// w and g, writes w.
static double updateSeconds(double bytes) {
  double elements = bytes / 4;
  return std::max(2 * elements / (1e12 * 0.25), 3 * bytes / (1e12 * 0.8));
}

TEST(Simulator, OneOpOnOneDeviceAnalytic) {
  // x[64,128] * w[128,256]: 2*64*256*128 FLOPs.
  OpGraph g = makeMLPGraph(64, {128, 256});
  g.nodes.pop_back(); // drop the relu: a single matmul
  g.tensors[g.nodes[0].outputs[0].tensor].isOutput = true;
  g.tensors.pop_back();
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(1);
  CostModel costs(m);
  Simulator sim(g, m, costs);
  double t = sim.simulateFull(singleDeviceStrategy(g));
  double flops = 2.0 * 64 * 256 * 128;
  double bytes = 4.0 * (64 * 128 + 128 * 256 + 64 * 256);
  double fwd = std::max(flops / (1e12 * 0.7), bytes / (1e12 * 0.8));
  // Backward: x is data, so only the weight gradient: one product.
  double bwd = fwd;
  double upd = updateSeconds(128 * 256 * 4);
  EXPECT_NEAR(t, fwd + bwd + upd, 1e-15);
  SimulationReport r = sim.report();
  EXPECT_EQ(r.communicationBytes, 0);
  // Memory: x (32 KiB) + w and its gradient (2 * 128 KiB) + y (64 KiB),
  // and in the backward pass y's gradient (64 KiB).
  EXPECT_EQ(r.memoryBytesPerDevice[0], 32768 + 2 * 131072 + 2 * 65536);
  EXPECT_NEAR(r.deviceBusySeconds[0], fwd + bwd + upd, 1e-15);
  EXPECT_FALSE(r.overCapacity);
}

TEST(CostModel, ContractionOperandsDecideTheTensorCoreRate) {
  // fc0: x[64,128] * w[128,256], compute-bound on a machine whose tensor
  // cores are 8x its fp32 rate: the peak follows the two operands (bf16
  // products summed into f32 run on tensor cores, cuBLAS's mixed-precision
  // GEMM), not the output; an f32 operand times a bf16 one does not.
  OpGraph g = makeMLPGraph(64, {128, 256});
  Machine m = testMachine(1);
  m.device.tensorFlops = 8e12;
  m.device.memoryBandwidth = 1e18;
  CostModel costs(m);
  const Node &fc = g.nodes[0];
  int32_t x = fc.inputs[0].tensor, w = fc.inputs[1].tensor,
          y = fc.outputs[0].tensor;
  std::vector<int64_t> extents = {64, 256, 128};
  double flops = 2.0 * 64 * 256 * 128, bytes = 1.0;
  auto forward = [&](int32_t xb, int32_t wb, int32_t yb) {
    g.tensors[x].elementBytes = xb;
    g.tensors[w].elementBytes = wb;
    g.tensors[y].elementBytes = yb;
    return costs.tileCosts(g, fc, extents.data(), flops, bytes).forward;
  };
  double fp32 = flops / (1e12 * 0.7), tensor = flops / (8e12 * 0.7);
  EXPECT_NEAR(forward(4, 4, 4), fp32, 1e-15);
  EXPECT_NEAR(forward(2, 2, 2), tensor, 1e-15);
  EXPECT_NEAR(forward(2, 2, 4), tensor, 1e-15);
  EXPECT_NEAR(forward(4, 2, 4), fp32, 1e-15);
  EXPECT_NEAR(forward(4, 4, 2), fp32, 1e-15);
  // An elementwise node: its output's width.
  const Node &relu = g.nodes[1];
  g.tensors[relu.outputs[0].tensor].elementBytes = 2;
  EXPECT_EQ(CostModel::computeElementBytes(g, relu, classifyNode(relu)), 2);
}

TEST(Simulator, ContractionClassFollowsTheNodeNotItsName) {
  // A linalg.generic the extraction found to sum products (a mixed-precision
  // matmul, an einsum) is costed at the GEMM rate like linalg.matmul; the
  // same node without the flag is a reduction (a quarter of the peak).
  OpGraph g = makeMLPGraph(64, {128, 256});
  Machine m = testMachine(1);
  m.device.memoryBandwidth = 1e18;
  CostModel costs(m);
  Node fc = g.nodes[0];
  ASSERT_TRUE(fc.contraction);
  fc.kind = "linalg.generic";
  EXPECT_EQ(classifyNode(fc), OpClass::Contraction);
  std::vector<int64_t> extents = {64, 256, 128};
  double flops = 2.0 * 64 * 256 * 128;
  double asContraction =
      costs.tileCosts(g, fc, extents.data(), flops, 1.0).forward;
  fc.contraction = false;
  EXPECT_EQ(classifyNode(fc), OpClass::Reduction);
  double asReduction =
      costs.tileCosts(g, fc, extents.data(), flops, 1.0).forward;
  EXPECT_NEAR(asContraction, flops / (1e12 * 0.70), 1e-15);
  EXPECT_NEAR(asReduction, flops / (1e12 * 0.25), 1e-15);
  // The name says nothing: a named matmul is a contraction by its flag.
  fc.kind = "linalg.batch_matmul";
  EXPECT_EQ(classifyNode(fc), OpClass::Reduction);
}

TEST(Simulator, TwoOpChainAcrossTwoDevices) {
  OpGraph g = makeMLPGraph(64, {128, 256}); // fc0 -> relu0
  Machine m = testMachine(2);
  ProfileTable prof;
  addProfile(prof, g.nodes[0], {64, 256, 128}, 10, 20);
  addProfile(prof, g.nodes[1], {64, 256}, 1, 2);
  CostModel costs(m, &prof);
  Simulator sim(g, m, costs);
  Strategy s = singleDeviceStrategy(g);
  s.configs[1].devices = {1};
  double t = sim.simulateFull(s);
  // fc0 fwd [0,10] on gpu0; y (64*256*4 = 65536 B) to gpu1: 1 + 65.536 us;
  // relu fwd 1, bwd 2; gradient back: 66.536; fc0 bwd 20; then the update.
  double transfer = 1e-6 + 65536 / 1e9;
  double expected = 10e-6 + transfer + 1e-6 + 2e-6 + transfer + 20e-6 +
                    updateSeconds(128 * 256 * 4);
  EXPECT_NEAR(t, expected, 1e-15);
  EXPECT_EQ(sim.report().communicationBytes, 2 * 65536);
  // The received activation is kept on gpu1 for the backward pass, with
  // relu's output and (in the backward pass) its gradient.
  EXPECT_EQ(sim.report().memoryBytesPerDevice[1], 3 * 65536);
  // Same device: no transfer at all.
  double local = sim.simulateFull(singleDeviceStrategy(g));
  EXPECT_NEAR(local, 33e-6 + updateSeconds(128 * 256 * 4), 1e-15);
}

// A collapsed reshape split over its inner loop writes strided rows; a
// reader of all rows gets from each tile only the rows it wrote (what
// soap-partition moves: exactAccessRegions), not their bounding box.
TEST(Simulator, CollapsedReshapeTilesSendWhatTheyWrote) {
  GraphBuilder b("collapse");
  int32_t x = b.input("x", {4, 8, 16});
  int32_t y = b.collapseLeading("flatten", x); // [32, 16], rows 8*d0 + d1
  int32_t w = b.parameter("w", {16, 32});
  b.markOutput(b.matmul("fc", y, w));
  OpGraph g = b.take();
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(2);
  CostModel costs(m);
  Simulator sim(g, m, costs);
  Strategy s = singleDeviceStrategy(g);
  s.configs[0].degrees = {1, 2, 1}; // rows 8*d0 + [0, 4) and 8*d0 + [4, 8)
  s.configs[0].devices = {0, 1};
  s.configs[1].degrees = {1, 2, 1}; // columns split: each reads every row
  s.configs[1].devices = {0, 1};
  sim.simulateFull(s);
  // Each device receives the other's 16 rows of 16 floats (1 KiB): 2 x 1
  // KiB (no gradient goes back: x is a graph input). The bounding boxes
  // (rows [0, 28) and [4, 32)) would move 28 rows each way.
  EXPECT_EQ(sim.report().communicationBytes, 2 * 16 * 16 * 4);
  // A split of the outer loop writes contiguous rows: the same volume.
  s.configs[0].degrees = {2, 1, 1};
  sim.simulateFull(s);
  EXPECT_EQ(sim.report().communicationBytes, 2 * 16 * 16 * 4);
  // Tiles that match the reader's rows move nothing; what moves is the
  // replicated weight's gradient (2 KiB), all-reduced: 2 (k - 1) x 2 KiB.
  s.configs[1].degrees = {2, 1, 1};
  sim.simulateFull(s);
  EXPECT_EQ(sim.report().communicationBytes, 2 * 16 * 32 * 4);
}

// soap-partition moves a region to a device once (ensureValid): a second
// reader there uses the copy, and the readers' gradients are summed there
// and sent back once.
TEST(Simulator, ATensorReadTwiceOnADeviceMovesOnce) {
  GraphBuilder b("two_readers");
  int32_t x = b.input("x", {64, 128});
  int32_t w = b.parameter("w", {128, 256});
  int32_t y = b.matmul("fc", x, w);
  int32_t r1 = b.elementwise("relu", "linalg.generic.relu", {y});
  int32_t r2 = b.elementwise("neg", "linalg.generic.neg", {y});
  b.markOutput(b.elementwise("sum", "linalg.generic.add", {r1, r2}));
  OpGraph g = b.take();
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(3);
  CostModel costs(m);
  Simulator sim(g, m, costs);
  Strategy s = singleDeviceStrategy(g);
  for (int32_t n = 1; n < 4; ++n)
    s.configs[n].devices = {1};
  sim.simulateFull(s);
  int64_t yBytes = 64 * 256 * 4;
  // y to device 1 once, its gradient back once.
  EXPECT_EQ(sim.report().communicationBytes, 2 * yBytes);
  // Kept on device 1 once: the copy of y, the two readers' outputs, sum;
  // when sum's backward runs, also its gradient and the readers' it writes.
  EXPECT_EQ(sim.report().memoryBytesPerDevice[1], 7 * yBytes);
  // Readers on different devices each get their copy.
  s.configs[2].devices = {2};
  s.configs[3].devices = {2};
  sim.simulateFull(s);
  EXPECT_EQ(sim.report().communicationBytes, 2 * 2 * yBytes + 2 * yBytes);
  // A reader of part of y is covered by an earlier reader of all of it,
  // not the other way round.
  s = singleDeviceStrategy(g);
  s.configs[1].devices = {1};
  s.configs[2].degrees = {2, 1}; // neg: rows split over devices 1 and 2
  s.configs[2].devices = {1, 2};
  s.configs[3].devices = {1};
  sim.simulateFull(s);
  // Forward: y to 1, half of y to 2; back: the same; neg's other half to 1
  // for the sum and its gradient.
  EXPECT_EQ(sim.report().communicationBytes,
            2 * (yBytes + yBytes / 2) + 2 * (yBytes / 2));
}

static OpGraph singleMatmul(int64_t batch, int64_t k, int64_t n) {
  GraphBuilder b("mm");
  int32_t x = b.input("x", {batch, k});
  int32_t w = b.parameter("w", {k, n});
  b.markOutput(b.matmul("fc", x, w));
  return b.take();
}

TEST(Simulator, DataParallelAllReduce) {
  OpGraph g = singleMatmul(64, 128, 256);
  const double wBytes = 128 * 256 * 4; // 131072
  for (int32_t k : {2, 4}) {
    Machine m = testMachine(k);
    ProfileTable prof;
    addProfile(prof, g.nodes[0], {64 / k, 256, 128}, 10, 20);
    CostModel costs(m, &prof);
    Simulator sim(g, m, costs);
    double t = sim.simulateFull(dataParallelStrategy(g, k));
    // Ring all-reduce: 2(k-1)/k * bytes / 1 GB/s + 2(k-1) * 1 us, one task
    // holding all the ring's links, which are free when every replica's
    // backward ends (10 + 20 us); each replica's update follows it.
    double allReduce = 2.0 * (k - 1) / k * wBytes / 1e9 + 2.0 * (k - 1) * 1e-6;
    if (k == 2)
      EXPECT_NEAR(allReduce, 133.072e-6, 1e-15);
    else
      EXPECT_NEAR(allReduce, 202.608e-6, 1e-15);
    EXPECT_NEAR(t, 10e-6 + 20e-6 + allReduce + updateSeconds(wBytes), 1e-15)
        << k;
    EXPECT_EQ(sim.report().communicationBytes,
              2 * int64_t(k - 1) * int64_t(wBytes));
  }
}

/// h = x * w; y = h * w: one parameter read by two nodes (tied weights).
static OpGraph tiedWeights() {
  GraphBuilder b("tied");
  int32_t x = b.input("x", {64, 128});
  int32_t w = b.parameter("w", {128, 128});
  int32_t h = b.matmul("fc1", x, w);
  b.markOutput(b.matmul("fc2", h, w));
  return b.take();
}

TEST(Simulator, SharedWeightAllReducedOnce) {
  OpGraph g = tiedWeights();
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(2);
  ProfileTable prof;
  addProfile(prof, g.nodes[0], {32, 128, 128}, 10, 20);
  CostModel costs(m, &prof);
  Simulator sim(g, m, costs);
  double t = sim.simulateFull(dataParallelStrategy(g, 2));
  EXPECT_EQ(sim.verifySchedule(), "");
  // Forward fc1, fc2 (0-20 us), backward fc2, fc1 (20-60 us) on each
  // device; then ONE all-reduce of w's 65536 bytes over the pair:
  // 2(2-1)/2 * 65536 / 1 GB/s + 2 * 1 us = 67.536 us; then one update of w
  // per device.
  const double wBytes = 128 * 128 * 4;
  double allReduce = wBytes / 1e9 + 2e-6;
  EXPECT_NEAR(t, 60e-6 + allReduce + updateSeconds(wBytes), 1e-15);
  SimulationReport r = sim.report();
  EXPECT_EQ(r.communicationBytes, 2 * int64_t(wBytes));
  int32_t allReduces = 0, updates = 0, ringLinks = 0;
  double arStart = -1;
  for (const ScheduledTask &st : sim.scheduledTasks()) {
    if (st.kind == TaskKind::Update)
      ++updates;
    if (st.kind != TaskKind::AllReduce)
      continue;
    ++ringLinks; // listed once per link of its ring
    EXPECT_EQ(st.bytes, wBytes);
    if (st.start != arStart) {
      ++allReduces;
      arStart = st.start;
    }
    EXPECT_NEAR(st.start, 60e-6, 1e-15);
  }
  EXPECT_EQ(allReduces, 1);
  EXPECT_GE(ringLinks, 1);
  EXPECT_LE(ringLinks, 2);
  EXPECT_EQ(updates, 2);
  // Memory: w and its gradient once per device (131072), plus the x shard,
  // h and y (16384 each), and when fc2's backward runs, y's gradient and
  // h's (which it writes).
  EXPECT_EQ(r.memoryBytesPerDevice[0], 2 * int64_t(wBytes) + 5 * 16384);
  EXPECT_EQ(r.memoryBytesPerDevice[1], 2 * int64_t(wBytes) + 5 * 16384);
  // Delta back and forth agrees with a full simulation.
  ASSERT_EQ(g.nodes[1].numLoops(), 3);
  ParallelConfig one{{1, 1, 1}, {0}};
  double d = sim.simulateDelta(1, one);
  Strategy s = dataParallelStrategy(g, 2);
  s.configs[1] = one;
  Simulator ref(g, m, costs);
  EXPECT_EQ(d, ref.simulateFull(s));
  EXPECT_EQ(sim.communicationBytes(), ref.communicationBytes());
  EXPECT_EQ(sim.simulateDelta(1, dataParallelStrategy(g, 2).configs[1]), t);
}

TEST(Simulator, SharedWeightOverlappingRegions) {
  // Tied weights, fc1's columns split over devices 0 and 1, fc2 whole on
  // device 0: device 0 holds gradients of all of w, device 1 of its right
  // half. The regions (left, right, whole) overlap, so the sync works on the
  // cells of their grid: the left half only on device 0 (no all-reduce),
  // the right half all-reduced over both devices, as soap-partition
  // combines the chain of partial sums (before: one sync per distinct
  // region, each held by one device, so none at all).
  OpGraph g = tiedWeights();
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(2);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{1, 2, 1}, {0, 1}}); // fc1: w's columns split
  s.configs.push_back({{1, 1, 1}, {0}});    // fc2: whole on device 0
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.verifySchedule(), "");
  // One all-reduce, of the right half (listed once per link of its ring).
  const int64_t half = 128 * 64 * 4;
  int32_t ringLinks = 0;
  for (const ScheduledTask &st : sim.scheduledTasks())
    if (st.kind == TaskKind::AllReduce) {
      ++ringLinks;
      EXPECT_EQ(st.bytes, half);
    }
  EXPECT_GE(ringLinks, 1);
  Strategy whole = s;
  whole.configs[0] = {{1, 1, 1}, {0}};
  // Delta from the single-device strategy agrees with the full simulation.
  Simulator delta(g, m, costs);
  delta.simulateFull(whole);
  EXPECT_EQ(delta.simulateDelta(0, s.configs[0]), sim.simulateFull(s));
  EXPECT_EQ(delta.communicationBytes(), sim.communicationBytes());
}

TEST(Simulator, SharedWeightSyncWaitsForEveryReadersBackward) {
  // An RNN's W and U are read by every step. Steps' W products each whole on
  // a device of their own (W held by devices 0-5), U's data parallel: each
  // weight's all-reduce starts only once every step's backward task that
  // reads it has ended, on every device (the simulator keeps, per device,
  // only the last of them as a predecessor: a device's ends never decrease
  // in program order), and each update of W waits for its all-reduce.
  const int32_t steps = 6;
  OpGraph g = makeRNNLikeGraph(8, 64, steps);
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(8);
  CostModel costs(m);
  Strategy s = dataParallelStrategy(g, 8);
  for (int32_t n = 0; n < static_cast<int32_t>(g.nodes.size()); ++n)
    if (g.nodes[n].name.size() > 3 &&
        g.nodes[n].name.compare(g.nodes[n].name.size() - 3, 3, ".xw") == 0)
      s.configs[n] = singleDeviceConfig(g.nodes[n], g.nodes[n].name[1] - '0');
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.verifySchedule(), "");
  auto endsWith = [&](int32_t n, const char *suffix) {
    const std::string &name = g.nodes[n].name;
    return name.size() > 3 && name.compare(name.size() - 3, 3, suffix) == 0;
  };
  std::vector<ScheduledTask> tasks = sim.scheduledTasks();
  for (const char *suffix : {".xw", ".hu"}) {
    double lastBackward = 0, syncStart = -1, syncEnd = -1;
    int32_t syncNode = -1, updates = 0;
    for (const ScheduledTask &t : tasks)
      if (t.kind == TaskKind::Backward && endsWith(t.node, suffix))
        lastBackward = std::max(lastBackward, t.end);
    for (const ScheduledTask &t : tasks)
      if (t.kind == TaskKind::AllReduce && endsWith(t.node, suffix)) {
        syncNode = t.node;
        syncStart = t.start;
        syncEnd = t.end;
      }
    ASSERT_GE(syncNode, 0) << suffix;
    EXPECT_EQ(g.nodes[syncNode].name, std::string("t0") + suffix);
    EXPECT_GE(syncStart, lastBackward) << suffix;
    for (const ScheduledTask &t : tasks)
      if (t.kind == TaskKind::Update && t.node == syncNode) {
        ++updates;
        EXPECT_GE(t.start, syncEnd) << suffix;
      }
    // One update per device holding the weight.
    EXPECT_EQ(updates, std::string(suffix) == ".xw" ? steps : 8) << suffix;
  }
}

TEST(Simulator, SplitReductionCombinesPartialSums) {
  OpGraph g = singleMatmul(64, 128, 256);
  Machine m = testMachine(2);
  ProfileTable prof;
  addProfile(prof, g.nodes[0], {64, 256, 64}, 10, 20);
  CostModel costs(m, &prof);
  Simulator sim(g, m, costs);
  Strategy s;
  s.configs.push_back({{1, 1, 2}, {0, 1}}); // split k (Reduction) in two
  double t = sim.simulateFull(s);
  // Both halves compute [0,10]; then the two partial y (65536 B each) are
  // all-reduced over gpu0 and gpu1: one ring task on both links, 2 (k - 1)
  // / k = 1 times the bytes over 1 GB/s plus 2 (k - 1) latencies of 1 us,
  // [10, 77.536]. The backward halves (20 us) need only the output's
  // gradient: [10, 30] on each device, then the updates of the two halves
  // of w (no replica: no gradient all-reduce). The all-reduce ends last.
  double expected = 10e-6 + 65.536e-6 + 2e-6;
  EXPECT_NEAR(t, expected, 1e-15);
  // The weight halves differ: only the partial sums move, each way.
  EXPECT_EQ(sim.report().communicationBytes, 2 * 65536);
}

TEST(Simulator, SplitReductionSumsGoToTheirReaders) {
  // fc0 splits k over gpu0 and gpu1. Its consumer relu0 on gpu1 reads all
  // of the sums: gpu0 sends it its partial sums (one way), where an
  // all-reduce would move them both ways (sumAtReaders). On gpu2, outside
  // the group, it would get both halves either way: a reduce-scatter and
  // each chunk from its holder, or both partial sums.
  OpGraph g = makeMLPGraph(64, {128, 256}); // fc0 -> relu0, y: 65536 B
  Machine m = testMachine(3);
  CostModel costs(m);
  Simulator sim(g, m, costs);
  Strategy s = singleDeviceStrategy(g);
  s.configs[0] = {{1, 1, 2}, {0, 1}};
  s.configs[1].devices = {1};
  double onGroup = sim.simulateFull(s);
  // gpu0's partial sums to gpu1, and relu0's input gradient to fc0's tile
  // on gpu0 (the tile on gpu1 has it there).
  EXPECT_EQ(sim.report().communicationBytes, 2 * 65536);
  int32_t partialSums = 0;
  for (const ScheduledTask &task : sim.scheduledTasks())
    partialSums += task.kind == TaskKind::PartialSum;
  EXPECT_EQ(partialSums, 0);
  Strategy outside = s;
  outside.configs[1].devices = {2};
  Simulator ref(g, m, costs);
  double offGroup = ref.simulateFull(outside);
  // No device of the group reads the sums: they are reduce-scattered (one
  // way, 65536 B), gpu2 gets each half from its holder (65536 B), and the
  // gradient goes to both tiles.
  EXPECT_EQ(ref.report().communicationBytes, 4 * 65536);
  EXPECT_LT(onGroup, offGroup);
  // Delta simulation agrees both ways (fc0's combination switches).
  EXPECT_EQ(sim.simulateDelta(1, outside.configs[1]), offGroup);
  EXPECT_EQ(sim.communicationBytes(), 4 * 65536);
  EXPECT_EQ(sim.simulateDelta(1, s.configs[1]), onGroup);
  EXPECT_EQ(sim.communicationBytes(), 2 * 65536);
}

/// fc0: x[64, 96] w0[96, 256] -> y (65536 B); fc1: y w1[256, 48], an
/// output.
static OpGraph twoMatmuls() {
  GraphBuilder b("mm2");
  int32_t x = b.input("x", {64, 96});
  int32_t w0 = b.parameter("w0", {96, 256});
  int32_t w1 = b.parameter("w1", {256, 48});
  int32_t y = b.matmul("fc0", x, w0);
  b.markOutput(b.matmul("fc1", y, w1));
  return b.take();
}

// Two [4, 16] tensors stacked into y[4, 2, 16] by one node that reads a0
// where its loop 1 is 0 and a1 where it is 1 (Operand::onlyAt: the sum of
// an LSTM's four gate gradients soap-training-step writes). With `guarded`
// false it reads both everywhere.
static OpGraph stackOfTwo(bool guarded) {
  GraphBuilder b("stack");
  int32_t x = b.input("x", {4, 16});
  int32_t scale =
      b.parameter("scale", {4, 16}); // so that a0, a1 need gradients
  int32_t a0 = b.elementwise("p0", "mul", {x, scale});
  int32_t a1 = b.elementwise("p1", "mul", {x, scale});
  OpGraph g = b.take();
  Tensor y;
  y.name = "y";
  y.shape = {4, 2, 16};
  y.producer = static_cast<int32_t>(g.nodes.size());
  y.isOutput = true;
  g.tensors.push_back(y);
  Node stack;
  stack.name = "stack";
  stack.kind = "linalg.generic";
  stack.extents = {4, 2, 16};
  stack.loopKinds = {LoopKind::Sample, LoopKind::Attribute,
                     LoopKind::Attribute};
  DimAccess d0{{{0, 1}}, 0, false}, d1{{{1, 1}}, 0, false},
      d2{{{2, 1}}, 0, false};
  for (int32_t k = 0; k < 2; ++k) {
    Operand in;
    in.tensor = k == 0 ? a0 : a1;
    in.dims = {d0, d2};
    if (guarded)
      in.onlyAt = {{1, k}};
    stack.inputs.push_back(in);
  }
  Operand out;
  out.tensor = static_cast<int32_t>(g.tensors.size()) - 1;
  out.dims = {d0, d1, d2};
  stack.outputs.push_back(out);
  stack.flops = 128;
  stack.bytes = 3 * 128 * 4;
  g.nodes.push_back(stack);
  return g;
}

TEST(Simulator, NoGradientGoesToALayerThatNeedsNone) {
  // pre (a ReLU of the graph input, nothing trainable before it) on gpu0,
  // fc on gpu1: pre's output is sent forward, and its gradient, which
  // nothing needs, is not sent back. After a layer with a weight (fc0 ->
  // fc1 on another device) it is.
  GraphBuilder b("pre");
  int32_t x = b.input("x", {8, 16});
  int32_t w = b.parameter("w", {16, 4});
  b.markOutput(b.matmul("fc", b.elementwise("pre", "relu", {x}), w));
  OpGraph g = b.take();
  Machine m = testMachine(2);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{1, 1}, {0}});
  s.configs.push_back({{1, 1, 1}, {1}});
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.report().communicationBytes, 8 * 16 * 4);
  OpGraph trained = twoMatmuls();
  Strategy apart;
  apart.configs.push_back({{1, 1, 1}, {0}});
  apart.configs.push_back({{1, 1, 1}, {1}});
  Simulator both(trained, m, costs);
  both.simulateFull(apart);
  EXPECT_EQ(both.report().communicationBytes, 2 * 64 * 256 * 4);
}

TEST(Simulator, ATileMovesNoneOfAnInputItDoesNotRead) {
  // p0 and p1 on gpu0, the stack split over its loop 1 on gpu1 and gpu2:
  // gpu1 gets a0 and gpu2 a1 (and their gradients back), not both each.
  Machine m = testMachine(3);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{1, 1}, {0}});
  s.configs.push_back({{1, 1}, {0}});
  s.configs.push_back({{1, 2, 1}, {1, 2}});
  int64_t aBytes = 4 * 16 * 4;
  OpGraph guarded = stackOfTwo(true), plain = stackOfTwo(false);
  ASSERT_EQ(guarded.validate(), "");
  Simulator sim(guarded, m, costs), ref(plain, m, costs);
  double t = sim.simulateFull(s);
  EXPECT_EQ(sim.report().communicationBytes, 2 * 2 * aBytes);
  ref.simulateFull(s);
  EXPECT_EQ(ref.report().communicationBytes, 2 * 4 * aBytes);
  // The stack on gpu1 alone reads both; delta simulation agrees both ways.
  Strategy one = s;
  one.configs[2] = {{1, 1, 1}, {1}};
  Simulator full(guarded, m, costs);
  double alone = full.simulateFull(one);
  EXPECT_EQ(full.report().communicationBytes, 2 * 2 * aBytes);
  EXPECT_EQ(sim.simulateDelta(2, one.configs[2]), alone);
  EXPECT_EQ(sim.simulateDelta(2, s.configs[2]), t);
  EXPECT_EQ(sim.communicationBytes(), 2 * 2 * aBytes);
}

/// Moves node `n` of `sim`, which simulates `s`, to `other` and back:
/// each delta simulation gives the time and the bytes a full simulation of
/// its strategy gives, and a valid schedule. Returns the bytes `other`
/// moves.
static int64_t expectDeltaAgreesBothWays(Simulator &sim, const OpGraph &g,
                                         const Machine &m,
                                         const CostModel &costs,
                                         const Strategy &s, int32_t n,
                                         const ParallelConfig &other) {
  Strategy moved = s;
  moved.configs[n] = other;
  Simulator there(g, m, costs), back(g, m, costs);
  double tMoved = there.simulateFull(moved), tBack = back.simulateFull(s);
  EXPECT_EQ(sim.simulateDelta(n, other), tMoved);
  EXPECT_EQ(sim.communicationBytes(), there.communicationBytes());
  EXPECT_EQ(sim.verifySchedule(), "");
  EXPECT_EQ(sim.simulateDelta(n, s.configs[n]), tBack);
  EXPECT_EQ(sim.communicationBytes(), back.communicationBytes());
  EXPECT_EQ(sim.verifySchedule(), "");
  return there.communicationBytes();
}

TEST(Simulator, PartialInputGradientsAreAllReducedWhenThatMovesLess) {
  // fc0 splits its reduction over gpu0-2, fc1 its output columns over the
  // same devices: fc1's three tiles read all of y, and each holds partial
  // sums of y's gradient, which every tile of fc0 reads whole. Sent to
  // each of them, they would move 6 x y; all-reduced, 4 x y (as
  // soap-partition combines them: sumAtReaders).
  OpGraph g = twoMatmuls();
  int64_t yBytes = 64 * 256 * 4;
  Machine m = testMachine(3);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{1, 1, 3}, {0, 1, 2}}); // fc0: k over 0-2
  s.configs.push_back({{1, 3, 1}, {0, 1, 2}}); // fc1: n over 0-2
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  // fc0's sums all-reduced (read whole on every device of its group), and
  // fc1's partial input gradients all-reduced: no other transfer.
  EXPECT_EQ(sim.report().communicationBytes, 4 * yBytes + 4 * yBytes);
  int32_t backwardSums = 0;
  for (const ScheduledTask &task : sim.scheduledTasks())
    backwardSums += task.kind == TaskKind::PartialSum && task.node == 1;
  EXPECT_EQ(backwardSums, 3); // one ring task, listed on each of its links
  // fc1 on gpu0 alone: fc0's sums go to it (gpu1's and gpu2's partial
  // sums), and its gradient to fc0's tiles on gpu1 and gpu2. Delta
  // simulation agrees both ways.
  EXPECT_EQ(expectDeltaAgreesBothWays(sim, g, m, costs, s, 1, {{1, 1, 1}, {0}}),
            2 * yBytes + 2 * yBytes);
  EXPECT_EQ(sim.communicationBytes(), 8 * yBytes);
}

/// fc0: x[64, 96] w0[96, 256] -> y (65536 B), read by three projections
/// q, k, v (y wi, wi[256, 48]) summed into the output: attention's inputs.
static OpGraph sharedProjections() {
  return sharedProjectionsGraph(64, 96, 256, 48);
}

TEST(Simulator, ReadersPartialInputGradientsOnTheSameDevicesSumOnce) {
  // Megatron's attention: fc0 splits its reduction over gpu0-2 (its sums
  // all-reduced, y whole on each), q, k and v their output columns over
  // the same devices. Each of the three holds partial sums of y's gradient
  // on the same devices: the training step adds them on each device and
  // all-reduces once (soap-partition's chained sums), 4 x y, not 12 x y.
  OpGraph g = sharedProjections();
  int64_t yBytes = 64 * 256 * 4;
  Machine m = testMachine(3);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{1, 1, 3}, {0, 1, 2}}); // fc0: k over 0-2
  for (int i = 0; i < 3; ++i)
    s.configs.push_back({{1, 3, 1}, {0, 1, 2}}); // q, k, v: n over 0-2
  s.configs.push_back({{1, 3}, {0, 1, 2}});      // sum: by columns
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.report().communicationBytes, 4 * yBytes + 4 * yBytes);
  // One ring, listed on each of its 3 links, after all three readers'
  // backward tasks.
  double lastBackward = 0;
  std::vector<const ScheduledTask *> rings;
  for (const ScheduledTask &task : sim.scheduledTasks()) {
    if (task.kind == TaskKind::Backward && task.node >= 1 && task.node <= 3)
      lastBackward = std::max(lastBackward, task.end);
    if (task.kind == TaskKind::PartialSum && task.node >= 1 && task.node <= 3)
      rings.push_back(&task);
  }
  ASSERT_EQ(rings.size(), 3u);
  for (const ScheduledTask *ring : rings)
    EXPECT_GE(ring->start, lastBackward);
  // v on other devices: q and k still share one ring, v's gradient goes
  // its own way; and the first reader (q) away. Delta simulation agrees
  // both ways.
  expectDeltaAgreesBothWays(sim, g, m, costs, s, 3, {{1, 1, 1}, {1}});
  EXPECT_EQ(sim.communicationBytes(), 8 * yBytes);
  expectDeltaAgreesBothWays(sim, g, m, costs, s, 1, {{1, 1, 1}, {2}});
}

/// fc0: x[64, 96] w0[96, 256] -> y (65536 B), read by three elementwise
/// ops (a layer norm's sum, variance and normalization) added into the
/// output.
static OpGraph normReaders() { return normReadersGraph(64, 96, 256); }

TEST(Simulator, ReadersGradientOfReduceScatteredSumsIsSentOnce) {
  // Megatron's row-parallel layer with sequence parallelism: fc0 splits its
  // reduction over gpu0-1, its three readers the rows over the same
  // devices, so the sums are reduce-scattered (y / 2 each way). In the
  // backward pass each member needs all of y's gradient: each reader's
  // rows go to the other member, but the training step first adds the
  // three readers' parts where they are (the gradient is summed where
  // fc0's elementwise rest ran, on its chunks) and sends the sum once:
  // y / 2 each way, not 3 x y / 2.
  OpGraph g = normReaders();
  int64_t yBytes = 64 * 256 * 4;
  Machine m = testMachine(2);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{1, 1, 2}, {0, 1}}); // fc0: k over 0-1
  for (int i = 0; i < 4; ++i)
    s.configs.push_back({{2, 1}, {0, 1}}); // readers and out: rows
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.verifySchedule(), "");
  int64_t gradientBytes = 0;
  std::set<int32_t> senders;
  for (const ScheduledTask &task : sim.scheduledTasks())
    if (task.kind == TaskKind::GradientTransfer) {
      gradientBytes += static_cast<int64_t>(task.bytes);
      senders.insert(task.node);
    }
  EXPECT_EQ(gradientBytes, yBytes);
  EXPECT_EQ(senders.size(), 1u);
  // The reduce-scatter and the gradient, y / 2 each way each (4 y when each
  // reader sent its own).
  EXPECT_EQ(sim.communicationBytes(), 2 * yBytes);
  // The first reader on other devices: the second sends for the third.
  // Delta simulation agrees both ways.
  expectDeltaAgreesBothWays(sim, g, m, costs, s, 1, {{1, 1}, {1}});
  EXPECT_EQ(sim.communicationBytes(), 2 * yBytes);
}

TEST(Simulator, PartialInputGradientsAreReduceScatteredToTheirReaders) {
  // fc0 splits the batch in four over gpu0, gpu2, gpu1, gpu3; fc1 its
  // output columns over gpu0 and gpu1, each tile reading all of y. The
  // partial sums of y's gradient on gpu0 and gpu1 are read by fc0's tiles:
  // gpu0 reads rows 0-15 and gpu1 rows 32-47, each within one half, so the
  // pair reduce-scatters them (y / 2 each way), and gpu2 and gpu3 get their
  // rows from the half's holder: 1.5 y in all, as much as sending each
  // reader the other's partial sums, half an all-reduce's 2 y plus sends
  // (soap-partition takes the reduce-scatter on a tie: sumAtReaders).
  OpGraph g = twoMatmuls();
  int64_t yBytes = 64 * 256 * 4;
  Machine m = testMachine(4);
  CostModel costs(m);
  Strategy s;
  s.configs.push_back({{4, 1, 1}, {0, 2, 1, 3}});
  s.configs.push_back({{1, 2, 1}, {0, 1}});
  Simulator sim(g, m, costs);
  double t = sim.simulateFull(s);
  // Forward: fc1's tiles get the three quarters they lack, each; w0's
  // gradient is all-reduced over its four replicas.
  int64_t w0Sync = 2 * 3 * 96 * 256 * 4;
  EXPECT_EQ(sim.report().communicationBytes,
            3 * yBytes / 2 + 3 * yBytes / 2 + w0Sync);
  int32_t scatters = 0;
  for (const ScheduledTask &task : sim.scheduledTasks())
    if (task.kind == TaskKind::PartialSum && task.node == 1) {
      ++scatters;
      EXPECT_DOUBLE_EQ(task.bytes, yBytes / 2); // (k - 1) / k of y
    }
  EXPECT_EQ(scatters, 2); // one ring task, listed on each of its 2 links
  // The same by delta simulation from fc1 on gpu0 alone.
  Strategy single = s;
  single.configs[1] = {{1, 1, 1}, {0}};
  Simulator other(g, m, costs);
  other.simulateFull(single);
  EXPECT_EQ(other.simulateDelta(1, s.configs[1]), t);
  EXPECT_EQ(other.communicationBytes(), 3 * yBytes + w0Sync);
}

TEST(Simulator, SplitReductionReduceScattersWhatEachDeviceReadsAChunkOf) {
  // Megatron's row-parallel layer: fc0 splits k over gpu0 and gpu1, and
  // relu0 splits the batch over the same devices. Each device reads only
  // its half of the rows of the sums: they are reduce-scattered (half an
  // all-reduce's traffic, one ring pass), as soap-partition does.
  OpGraph g = makeMLPGraph(64, {128, 256}); // fc0 -> relu0, y: 65536 B
  Machine m = testMachine(2);
  CostModel costs(m);
  Strategy s = singleDeviceStrategy(g);
  s.configs[0] = {{1, 1, 2}, {0, 1}};
  s.configs[1] = {{2, 1}, {0, 1}};
  Simulator sim(g, m, costs);
  double scattered = sim.simulateFull(s);
  // The reduce-scatter (k - 1) / k of each device's 65536 B each way, and
  // relu0's input gradient halves to the other device's fc0 tile: no
  // activation transfer.
  EXPECT_EQ(sim.report().communicationBytes, 65536 + 65536);
  int32_t partialSums = 0;
  for (const ScheduledTask &task : sim.scheduledTasks())
    if (task.kind == TaskKind::PartialSum) {
      ++partialSums;
      EXPECT_DOUBLE_EQ(task.bytes, 32768); // (k - 1) / k of 65536
    }
  EXPECT_EQ(partialSums, 2); // one ring task, listed on each of its 2 links
  // relu0's devices swapped: gpu0 reads the rows of the first chunk's
  // other half and gpu1 the first: still reduce-scattered, the first chunk
  // to gpu1 (soap-partition orders the reduce-scatter's devices so).
  Strategy swapped = s;
  swapped.configs[1].devices = {1, 0};
  Simulator other(g, m, costs);
  EXPECT_EQ(other.simulateFull(swapped), scattered);
  EXPECT_EQ(other.report().communicationBytes, 65536 + 65536);
  // relu0 whole on gpu0, which reads both chunks: no dimension fits, and
  // gpu1 sends gpu0 its partial sums (half an all-reduce's traffic).
  Strategy whole = s;
  whole.configs[1] = {{1, 1}, {0}};
  Simulator ref(g, m, costs);
  double reduced = ref.simulateFull(whole);
  EXPECT_EQ(ref.report().communicationBytes, 65536 + 65536);
  // Delta simulation of relu0's change switches the combination, and the
  // chunks' holders, each way.
  EXPECT_EQ(sim.simulateDelta(1, whole.configs[1]), reduced);
  EXPECT_EQ(sim.communicationBytes(), 2 * 65536);
  EXPECT_EQ(sim.simulateDelta(1, swapped.configs[1]), scattered);
  EXPECT_EQ(sim.communicationBytes(), 2 * 65536);
  EXPECT_EQ(sim.simulateDelta(1, s.configs[1]), scattered);
  EXPECT_EQ(sim.communicationBytes(), 2 * 65536);
}

TEST(Simulator, ActivationEveryDeviceReadsWholeIsOneRingAllGather) {
  // fc0 and relu0 split their columns over gpu0-3; fc1 splits its own
  // columns over the same devices, so each of its tiles reads all of
  // relu0's output (64 x 256 fp32, 65536 B), a quarter from each device:
  // one NCCL all-gather in the generated code (soap-form-collectives),
  // simulated as one ring task on the ring's links (gpu0->1->2->3->0), not
  // 12 point-to-point sends; backward, the gradients of that input go back
  // in one ring reduce-scatter (the generated code reduce-scatters fc1's
  // input-gradient partial sums).
  OpGraph g = makeMLPGraph(64, {128, 256, 64}); // fc0 relu0 fc1 relu1
  Machine m = testMachine(4);
  CostModel costs(m);
  Strategy s = singleDeviceStrategy(g);
  s.configs[0] = {{1, 4, 1}, {0, 1, 2, 3}};
  s.configs[1] = {{1, 4}, {0, 1, 2, 3}};
  s.configs[2] = {{1, 4, 1}, {2, 0, 3, 1}}; // any order of the same devices
  s.configs[3] = {{1, 4}, {2, 0, 3, 1}};
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.verifySchedule(), "");
  const double bytes = 65536;
  const double ring = 0.75 * bytes / 1e9 + 3 * 1e-6;
  int32_t gathers = 0, scatters = 0, transfers = 0;
  for (const ScheduledTask &task : sim.scheduledTasks()) {
    if (task.kind == TaskKind::Transfer ||
        task.kind == TaskKind::GradientTransfer)
      ++transfers;
    if (task.kind != TaskKind::Gather && task.kind != TaskKind::GradientScatter)
      continue;
    ++(task.kind == TaskKind::Gather ? gathers : scatters);
    EXPECT_EQ(g.nodes[task.node].name, "fc1");
    EXPECT_DOUBLE_EQ(task.bytes, 0.75 * bytes);
    EXPECT_NEAR(task.end - task.start, ring, 1e-15);
  }
  EXPECT_EQ(gathers, 4); // one task, listed on each of its 4 links
  EXPECT_EQ(scatters, 4);
  EXPECT_EQ(transfers, 0);
  // Each way, (k - 1) x the region's bytes, as 12 sends of a quarter move.
  EXPECT_EQ(sim.report().communicationBytes, 2 * 3 * 65536);

  // fc1 on gpu0 and gpu1 only: their quarters are one all-gather of the
  // first half over those two (as soap-form-collectives finds it: each
  // sends its part to the other and to no one else); gpu2's and gpu3's go
  // to both, and nothing comes back: point-to-point transfers.
  Strategy two = s;
  two.configs[2] = {{1, 2, 1}, {0, 1}};
  two.configs[3] = {{1, 2}, {0, 1}};
  Simulator mixed(g, m, costs);
  mixed.simulateFull(two);
  gathers = transfers = 0;
  for (const ScheduledTask &task : mixed.scheduledTasks()) {
    if (task.kind == TaskKind::Gather) {
      ++gathers;
      EXPECT_DOUBLE_EQ(task.bytes, 0.5 * (bytes / 2));
    }
    transfers += task.kind == TaskKind::Transfer;
  }
  EXPECT_EQ(gathers, 2);
  EXPECT_EQ(transfers, 4); // gpu2 and gpu3 to gpu0 and gpu1

  // Delta simulation from data parallelism, node by node, agrees, and so
  // does its undo.
  Simulator delta(g, m, costs);
  Strategy dp = dataParallelStrategy(g, 4);
  double dpTime = delta.simulateFull(dp);
  double t = 0;
  for (int32_t n = 0; n < 4; ++n)
    t = delta.simulateDelta(n, s.configs[n]);
  EXPECT_EQ(t, sim.iterationTime());
  EXPECT_EQ(delta.communicationBytes(), sim.communicationBytes());
  EXPECT_EQ(delta.verifySchedule(), "");
  EXPECT_TRUE(delta.undoDelta());
  for (int32_t n = 2; n >= 0; --n)
    delta.simulateDelta(n, dp.configs[n]);
  EXPECT_EQ(delta.iterationTime(), dpTime);
}

TEST(Simulator, AllGatherAcrossNodesCrossesEachNicOnce) {
  // 2 nodes x 2 devices, one NIC per node. A gather over all four devices:
  // point to point, each node's two quarters would leave through its NIC
  // to both devices of the other node (4 quarters on each NIC); the ring
  // (gpu0->1->2->3->0) crosses each NIC once per step, 3/4 of the region
  // in all, at the NIC's bandwidth (its slowest link).
  OpGraph g = makeMLPGraph(64, {128, 256, 64});
  Machine m = testMachine(2);
  m.numNodes = 2;
  m.interBandwidth = 0.5e9;
  m.interLatency = 4e-6;
  CostModel costs(m);
  Strategy s = singleDeviceStrategy(g);
  for (int32_t n = 0; n < 4; ++n)
    s.configs[n] = {std::vector<int32_t>(n % 2 ? 2 : 3, 1), {0, 1, 2, 3}};
  s.configs[0].degrees[1] = s.configs[1].degrees[1] = 4;
  s.configs[2].degrees[1] = s.configs[3].degrees[1] = 4;
  Simulator sim(g, m, costs);
  sim.simulateFull(s);
  EXPECT_EQ(sim.verifySchedule(), "");
  int32_t gathers = 0;
  for (const ScheduledTask &task : sim.scheduledTasks())
    if (task.kind == TaskKind::Gather) {
      ++gathers;
      EXPECT_NEAR(task.end - task.start, 0.75 * 65536 / 0.5e9 + 3 * 4e-6,
                  1e-15);
    }
  // Links gpu0->1 and gpu2->3 (NVLink) and the two NICs.
  EXPECT_EQ(gathers, 4);
}

TEST(Simulator, MemoryOverflowFlagged) {
  OpGraph g = singleMatmul(64, 1024, 1024); // w: 4 MiB
  Machine small = testMachine(4, 6 << 20);  // 6 MiB per device
  CostModel costs(small);
  Simulator sim(g, small, costs);
  sim.simulateFull(dataParallelStrategy(g, 4));
  // Every replica holds w and its gradient (8 MiB) plus x and y shards and
  // y's gradient.
  EXPECT_EQ(sim.peakMemoryBytes(), 2 * (4 << 20) + 16 * 1024 * 4 * 3);
  EXPECT_TRUE(sim.overCapacity());
  EXPECT_TRUE(sim.report().overCapacity);
  // Splitting the weight's output columns four ways fits.
  Strategy s;
  s.configs.push_back({{1, 4, 1}, {0, 1, 2, 3}});
  sim.simulateFull(s);
  EXPECT_EQ(sim.peakMemoryBytes(),
            2 * (1 << 20) + 64 * 1024 * 4 + 2 * 64 * 256 * 4);
  EXPECT_FALSE(sim.overCapacity());
}

TEST(Simulator, RecomputedOutputsAreNotKept) {
  // fc0 -> relu0 -> fc1 -> relu1 -> fc2 -> relu2 (the graph's output), all
  // on gpu0; each relu output is 64 * 256 * 4 = 65536 B.
  OpGraph g = makeMLPGraph(64, {128, 256, 256, 256});
  ASSERT_EQ(g.nodes.size(), 6u);
  Machine m = testMachine(1);
  ProfileTable prof;
  addProfile(prof, g.nodes[0], {64, 256, 128}, 10, 20);
  addProfile(prof, g.nodes[1], {64, 256}, 3, 2); // both relus
  addProfile(prof, g.nodes[2], {64, 256, 256}, 10, 20);
  CostModel costs(m, &prof);
  Simulator sim(g, m, costs);
  Strategy s = singleDeviceStrategy(g);
  double kept = sim.simulateFull(s);
  int64_t peak = sim.peakMemoryBytes();
  // Keeping all: the peak is when fc2's backward runs, with all six
  // outputs, relu2's gradient and fc2's (which it reads and writes).
  SimulationReport all = sim.report();
  EXPECT_EQ(all.peakMemoryNode, 4); // fc2
  EXPECT_TRUE(all.peakMemoryInBackward);
  // Both relus recomputed (fc1 between them keeps its output): their
  // outputs die after their readers' forward tasks. relu1's is computed
  // again before fc2's backward task, relu0's before fc1's: one of them is
  // alive at a time. Each relu's backward task first runs its forward
  // computation again (3 us), on the one device: serial.
  s.configs[1].recompute = s.configs[3].recompute = true;
  double recomputed = sim.simulateFull(s);
  EXPECT_EQ(sim.peakMemoryBytes(), peak - 65536);
  EXPECT_EQ(sim.report().memoryBytesPerDevice[0], peak - 65536);
  EXPECT_NEAR(recomputed, kept + 6e-6, 1e-15);
  // fc1 too: relu1's recomputation reads fc1's, which reads relu0's, so all
  // three are computed again before fc2's backward task: the peak is the
  // one of keeping them.
  s.configs[2].recompute = true;
  sim.simulateFull(s);
  EXPECT_EQ(sim.peakMemoryBytes(), peak);
  // The graph's output is kept anyway: recomputing relu2 changes nothing.
  Strategy last = singleDeviceStrategy(g);
  last.configs[5].recompute = true;
  EXPECT_EQ(sim.simulateFull(last), kept);
  EXPECT_EQ(sim.peakMemoryBytes(), peak);
  sim.simulateFull(s);
  // Delta simulation: toggling the flag alone equals a full simulation.
  Simulator full(g, m, costs);
  ParallelConfig c = s.configs[2];
  c.recompute = false;
  s.configs[2] = c;
  EXPECT_EQ(sim.simulateDelta(2, c), full.simulateFull(s));
  EXPECT_EQ(sim.peakMemoryBytes(), full.peakMemoryBytes());
  EXPECT_EQ(sim.peakMemoryBytes(), peak - 65536);
  EXPECT_TRUE(sim.undoDelta());
  EXPECT_EQ(sim.peakMemoryBytes(), peak);
  EXPECT_TRUE(sim.strategy().configs[2].recompute);
}

TEST(Simulator, ActivationsAndGradientsLiveInTheStepsOrder) {
  // fc0 (x[64,16] * w0[16,1024], a fused ReLU's pre-activation saved
  // inside it) -> fc1 (* w1[1024,16]) -> relu (the graph's output).
  GraphBuilder b("wide_then_narrow");
  int32_t x = b.input("x", {64, 16});
  int32_t h = b.matmul("fc0", x, b.parameter("w0", {16, 1024}));
  int32_t h2 = b.matmul("fc1", h, b.parameter("w1", {1024, 16}));
  b.markOutput(b.elementwise("relu", "linalg.generic.relu", {h2}));
  OpGraph g = b.take();
  const int64_t hBytes = 64 * 1024 * 4, h2Bytes = 64 * 16 * 4,
                wBytes = 16 * 1024 * 4, xBytes = 64 * 16 * 4;
  g.nodes[0].savedBytes = hBytes;
  ASSERT_EQ(g.validate(), "");
  Machine m = testMachine(2);
  CostModel costs(m);
  Simulator sim(g, m, costs);
  sim.simulateFull(singleDeviceStrategy(g));
  // Kept all iteration: x, the weights, the graph's output.
  int64_t kept = xBytes + 2 * wBytes + h2Bytes;
  // The peak is not when the backward pass starts (relu's gradient and
  // fc1's are small) nor at fc0's (h2 and its gradient are gone) but while
  // fc1's backward task runs: h, the pre-activation and h2, h2's gradient,
  // and the two it writes, h's and w1's. (Each weight's gradient lives
  // until its update, right after its all-reduce.)
  int64_t peak = kept + 3 * hBytes + 2 * h2Bytes + wBytes;
  SimulationReport r = sim.report();
  EXPECT_EQ(r.memoryBytesPerDevice[0], peak);
  EXPECT_EQ(r.peakMemoryDevice, 0);
  EXPECT_EQ(r.peakMemoryNode, 1); // fc1
  EXPECT_TRUE(r.peakMemoryInBackward);
  // Recomputing fc0 saves nothing: its output is alive again for fc1's
  // backward task, when the peak is.
  Strategy s = singleDeviceStrategy(g);
  s.configs[0].recompute = true;
  sim.simulateFull(s);
  EXPECT_EQ(sim.report().memoryBytesPerDevice[0], peak);
  // Data parallelism on two devices: each keeps the weights and its half
  // of every activation and of the saved pre-activation.
  sim.simulateFull(dataParallelStrategy(g, 2));
  for (int32_t d = 0; d < 2; ++d)
    EXPECT_EQ(sim.report().memoryBytesPerDevice[d],
              xBytes / 2 + 2 * wBytes + h2Bytes / 2 +
                  (3 * hBytes + 2 * h2Bytes) / 2 + wBytes);
  // Both devices peak alike: the first is named.
  EXPECT_EQ(sim.report().peakMemoryDevice, 0);
  // Nothing trainable: no gradients, and the one activation kept from
  // its forward task on (the first of equal positions is named).
  GraphBuilder nb("narrow");
  int32_t nx = nb.input("x", {64, 16});
  int32_t nh = nb.elementwise("pre", "linalg.generic.relu", {nx});
  nb.markOutput(nb.elementwise("relu", "linalg.generic.relu", {nh}));
  OpGraph ng = nb.take();
  Simulator nsim(ng, m, costs);
  nsim.simulateFull(singleDeviceStrategy(ng));
  SimulationReport nr = nsim.report();
  EXPECT_EQ(nr.peakMemoryNode, 0);
  EXPECT_FALSE(nr.peakMemoryInBackward);
}

TEST(Simulator, ProfileTableErrors) {
  auto missing = loadProfileTable("/nonexistent/profile.json");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("/nonexistent/profile.json"),
            std::string::npos);
  auto bad = readProfileTableJSON(R"({"entries":[{"kind":"k","extents":[1],
      "element_bytes":4,"device":"d","forward_us":1}]})");
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError())
                .find("entries[0]: missing field 'backward_us'"),
            std::string::npos);
  auto empty = readProfileTableJSON(R"({"entries":[{"kind":"k","extents":[4, 0],
      "element_bytes":4,"device":"d","forward_us":1,"backward_us":1}]})");
  ASSERT_FALSE(static_cast<bool>(empty));
  EXPECT_NE(llvm::toString(empty.takeError())
                .find("entries[0].extents[1]: must be positive"),
            std::string::npos);
  ProfileTable t;
  t.add({"linalg.matmul", {2, 3}, 4, "G", 1e-6, 2e-6});
  auto back = readProfileTableJSON(writeProfileTableJSON(t));
  ASSERT_TRUE(static_cast<bool>(back));
  int64_t ext[2] = {2, 3};
  const ProfileEntry *e = back->find("linalg.matmul", ext, 2, 4, "G");
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->backwardSeconds, 2e-6);
  EXPECT_EQ(back->find("linalg.matmul", ext, 2, 2, "G"), nullptr);
}

TEST(Simulator, BackwardCostFollowsGradientInputs) {
  // Second layer: both x (activation) and w need gradients: 2 products.
  OpGraph g = makeMLPGraph(64, {128, 128, 128});
  Machine m = testMachine(1);
  CostModel costs(m);
  int64_t ext[3] = {64, 128, 128};
  TaskCosts first = costs.tileCosts(g, g.nodes[0], ext, 1e9, 0);
  TaskCosts second = costs.tileCosts(g, g.nodes[2], ext, 1e9, 0);
  EXPECT_DOUBLE_EQ(first.backward, first.forward);
  EXPECT_DOUBLE_EQ(second.backward, 2 * second.forward);
}

TEST(Simulator, TraceAndReportJSON) {
  OpGraph g = makeMLPGraph(64, {128, 256});
  Machine m = testMachine(2);
  CostModel costs(m);
  Simulator sim(g, m, costs);
  Strategy s = singleDeviceStrategy(g);
  s.configs[1].devices = {1};
  sim.simulateFull(s);
  auto trace = llvm::json::parse(writeChromeTrace(sim));
  ASSERT_TRUE(static_cast<bool>(trace)) << llvm::toString(trace.takeError());
  const llvm::json::Array *events =
      trace->getAsObject()->getArray("traceEvents");
  ASSERT_NE(events, nullptr);
  int complete = 0;
  bool linkTrack = false;
  for (const llvm::json::Value &e : *events) {
    const llvm::json::Object *o = e.getAsObject();
    if (o->getString("ph") == llvm::StringRef("X"))
      ++complete;
    if (o->getString("name") == llvm::StringRef("thread_name") &&
        o->getObject("args")->getString("name") == llvm::StringRef("nvlink 0->1"))
      linkTrack = true;
  }
  // 2 forward, 2 backward, 2 transfers, 1 update.
  EXPECT_EQ(complete, 7);
  EXPECT_TRUE(linkTrack);
  llvm::json::Object report = reportToJSON(sim);
  EXPECT_EQ(*report.getInteger("communication_bytes"), 2 * 65536);
  EXPECT_DOUBLE_EQ(*report.getNumber("predicted_iteration_ms"),
                   sim.iterationTime() * 1e3);
  EXPECT_EQ(report.getArray("configs")->size(), 2u);
}
