#include "soap/Simulator/GraphBuilder.h"
#include "soap/Simulator/Region.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace soap;

TEST(Region, TileLoopBoxRowMajor) {
  OpGraph g = makeMLPGraph(8, {4, 6});
  const Node &mm = g.nodes[0]; // loops (b=8, n=6, k=4)
  std::vector<int32_t> degrees = {2, 3, 1};
  EXPECT_EQ(numTiles(degrees), 6);
  // Tile 4 = coords (1, 1, 0): b in [4,8), n in [2,4), k in [0,4).
  Box b = tileLoopBox(mm, degrees, 4);
  ASSERT_EQ(b.rank, 3);
  EXPECT_EQ(b.dims[0], (Range{4, 8}));
  EXPECT_EQ(b.dims[1], (Range{2, 4}));
  EXPECT_EQ(b.dims[2], (Range{0, 4}));
  // Matmul regions: x[b, k], w[k, n], y[b, n].
  Box x = tileInputRegion(g, 0, degrees, 4, 0);
  EXPECT_EQ(x.dims[0], (Range{4, 8}));
  EXPECT_EQ(x.dims[1], (Range{0, 4}));
  Box w = tileInputRegion(g, 0, degrees, 4, 1);
  EXPECT_EQ(w.dims[0], (Range{0, 4}));
  EXPECT_EQ(w.dims[1], (Range{2, 4}));
  EXPECT_EQ(tileOutputRegion(g, 0, degrees, 4, 0).volume(), 4 * 2);
}

TEST(Region, ConvStrideAndKernelWithPaddingClamp) {
  // x: [1, 1, 9, 9], w: [1, 1, 3, 3], stride 2, pad 1 -> out 5x5.
  GraphBuilder b("conv");
  int32_t x = b.input("x", {1, 1, 9, 9});
  int32_t w = b.parameter("w", {1, 1, 3, 3});
  int32_t y = b.conv2d("conv", x, w, 2, 1);
  OpGraph g = b.take();
  EXPECT_EQ(g.tensors[y].shape, (std::vector<int64_t>{1, 1, 5, 5}));
  // Split oh (loop 2) in 5: tile t covers oh = t.
  std::vector<int32_t> degrees = {1, 1, 5, 1, 1, 1, 1};
  // oh = 0: rows 2*0 + r - 1 for r in [0,3) = [-1, 1] -> clamped [0, 2).
  Box t0 = tileInputRegion(g, 0, degrees, 0, 0);
  EXPECT_EQ(t0.dims[2], (Range{0, 2}));
  EXPECT_EQ(t0.dims[3], (Range{0, 9}));
  // oh = 2: rows [3, 5] -> [3, 6).
  Box t2 = tileInputRegion(g, 0, degrees, 2, 0);
  EXPECT_EQ(t2.dims[2], (Range{3, 6}));
  // oh = 4: rows [7, 9] -> clamped [7, 9).
  Box t4 = tileInputRegion(g, 0, degrees, 4, 0);
  EXPECT_EQ(t4.dims[2], (Range{7, 9}));
  // Halo: tiles 2 and 3 (rows [5, 8)) share row 5.
  Box t3 = tileInputRegion(g, 0, degrees, 3, 0);
  EXPECT_EQ(intersectionVolume(t2, t3), 1 * 1 * 1 * 9);
  EXPECT_EQ(intersect(t2, t3).dims[2], (Range{5, 6}));
  EXPECT_EQ(intersectionVolume(t0, t4), 0);
  // The weight is read whole by every spatial tile.
  EXPECT_EQ(tileInputRegion(g, 0, degrees, 3, 1).volume(), 9);
}

TEST(Region, NegativeCoefficientAndWhole) {
  Tensor t;
  t.shape = {10, 4};
  Operand op;
  op.tensor = 0;
  DimAccess rev; // index = 9 - i
  rev.terms = {{0, -1}};
  rev.constant = 9;
  DimAccess whole;
  whole.whole = true;
  op.dims = {rev, whole};
  Box loops;
  loops.rank = 1;
  loops.dims[0] = {2, 5}; // i in [2, 5) -> index in [5, 7]
  Box r = accessRegion(op, t, loops);
  EXPECT_EQ(r.dims[0], (Range{5, 8}));
  EXPECT_EQ(r.dims[1], (Range{0, 4}));
}

// An input read only where loop 1 is 2 (Operand::onlyAt): a tile whose
// loop 1 misses 2 reads nothing of it.
TEST(Region, AnInputReadOnlyAtOneIndexOfALoop) {
  Tensor t;
  t.shape = {4, 16};
  Operand op;
  op.tensor = 0;
  op.dims = {DimAccess{{{0, 1}}, 0, false}, DimAccess{{{2, 1}}, 0, false}};
  op.onlyAt = {{1, 2}};
  Box loops;
  loops.rank = 3;
  loops.dims[0] = {0, 4};
  loops.dims[1] = {0, 2};
  loops.dims[2] = {0, 16};
  EXPECT_TRUE(accessRegion(op, t, loops).empty());
  loops.dims[1] = {2, 4};
  Box r = accessRegion(op, t, loops);
  EXPECT_EQ(r.volume(), 4 * 16);
  int64_t lo[3] = {0, 2, 0}, hi[3] = {4, 4, 16};
  EXPECT_TRUE(op.readBy(lo, hi));
  lo[1] = 3;
  EXPECT_FALSE(op.readBy(lo, hi));
}

// A collapsed reshape's output dimension 8*d0 + d1: a tile over d0 in [0, 2)
// and d1 in [0, 4) writes [0, 4) and [8, 12), not their bounding box.
TEST(Region, ExactRegionsOfACollapsedDimension) {
  Tensor t;
  t.shape = {16};
  Operand op;
  DimAccess dim;
  dim.terms = {{0, 8}, {1, 1}};
  op.dims = {dim};
  Box loops;
  loops.rank = 2;
  loops.dims[0] = {0, 2};
  loops.dims[1] = {0, 4};
  EXPECT_EQ(accessRegion(op, t, loops).dims[0], (Range{0, 12}));
  std::vector<Box> exact = exactAccessRegions(op, t, loops);
  ASSERT_EQ(exact.size(), 2u);
  EXPECT_EQ(exact[0].dims[0], (Range{0, 4}));
  EXPECT_EQ(exact[1].dims[0], (Range{8, 12}));
  // A full inner loop gives one contiguous box.
  loops.dims[1] = {0, 8};
  exact = exactAccessRegions(op, t, loops);
  ASSERT_EQ(exact.size(), 1u);
  EXPECT_EQ(exact[0].dims[0], (Range{0, 16}));
}

// exactDimRuns on the accesses the front end extracts.
TEST(Region, ExactDimensionRuns) {
  auto runsOf = [](std::vector<LoopTerm> terms, int64_t constant,
                   int64_t extent, std::vector<Range> loops,
                   size_t maxRuns = 1000) {
    DimAccess dim;
    dim.terms = std::move(terms);
    dim.constant = constant;
    std::vector<Range> runs;
    bool exact = exactDimRuns(dim, extent, loops.data(), maxRuns, runs);
    return std::make_pair(exact, runs);
  };
  using Runs = std::vector<Range>;
  // A collapsed reshape's rows 40*d0 + d1, d1 split: one run per d0.
  auto [exact, runs] = runsOf({{0, 40}, {1, 1}}, 0, 2560, {{0, 3}, {5, 10}});
  EXPECT_TRUE(exact);
  EXPECT_EQ(runs, (Runs{{5, 10}, {45, 50}, {85, 90}}));
  // Whole inner loops merge into one run: 36*c + 6*h + w, h and w whole.
  std::tie(exact, runs) =
      runsOf({{0, 36}, {1, 6}, {2, 1}}, 0, 2304, {{16, 32}, {0, 6}, {0, 6}});
  EXPECT_EQ(runs, (Runs{{576, 1152}}));
  // Overlapping convolution windows (stride 2, kernel 3, pad 1) are one run,
  // clamped to the tensor.
  std::tie(exact, runs) = runsOf({{0, 2}, {1, 1}}, -1, 8, {{0, 4}, {0, 3}});
  EXPECT_EQ(runs, (Runs{{0, 8}}));
  // Windows with gaps (stride 3, kernel 2) are not.
  std::tie(exact, runs) = runsOf({{0, 3}, {1, 1}}, 0, 9, {{0, 3}, {0, 2}});
  EXPECT_EQ(runs, (Runs{{0, 2}, {3, 5}, {6, 8}}));
  // A reversed index: 7 - d0 for d0 in [2, 4) is {4, 5}.
  std::tie(exact, runs) = runsOf({{0, -1}}, 7, 8, {{2, 4}});
  EXPECT_EQ(runs, (Runs{{4, 6}}));
  // Too many runs: the bounding range, and false.
  std::tie(exact, runs) =
      runsOf({{0, 40}, {1, 1}}, 0, 2560, {{0, 64}, {0, 5}}, 16);
  EXPECT_FALSE(exact);
  EXPECT_EQ(runs, (Runs{{0, 2525}}));
  // Overlap of sorted runs with a range.
  Runs three{{5, 10}, {45, 50}, {85, 90}};
  EXPECT_EQ(runsOverlap(three.data(), 3, {0, 2560}), 15);
  EXPECT_EQ(runsOverlap(three.data(), 3, {8, 46}), 3);
  EXPECT_EQ(runsOverlap(three.data(), 3, {10, 45}), 0);
  EXPECT_EQ(runsOverlap(three.data(), 3, {89, 100}), 1);
}

TEST(Region, AllGathersAmongSentRegions) {
  // Columns [4q, 4q + 4) of an 8 x 12 region, one from each of devices
  // 2, 0, 1, each sent to the other two: one gather along dim 1, parts in
  // column order. Device 3 also sends a region to 0 only: not a gather.
  auto box = [](int64_t c) {
    Box b;
    b.rank = 2;
    b.dims[0] = {0, 8};
    b.dims[1] = {c, c + 4};
    return b;
  };
  std::vector<int32_t> receivers{0, 1, /*1*/ 1, 2, /*0*/ 0, 2, /*3*/ 0};
  std::vector<SentRegion> sent{{box(0), 2, 0, 2},
                               {box(8), 0, 2, 4},
                               {box(4), 1, 4, 6},
                               {box(12), 3, 6, 7}};
  std::vector<int32_t> parts, ends, dims, scratch;
  findAllGathers(sent, receivers, parts, ends, dims, scratch);
  EXPECT_EQ(parts, (std::vector<int32_t>{0, 2, 1}));
  EXPECT_EQ(ends, (std::vector<int32_t>{3}));
  EXPECT_EQ(dims, (std::vector<int32_t>{1}));
  // Device 1's part also goes to device 3: its group differs, no gather.
  std::vector<int32_t> wider{0, 1, 0, 2, 3, 0, 2};
  std::vector<SentRegion> widened{{box(0), 2, 0, 2},
                                  {box(8), 0, 2, 4},
                                  {box(4), 1, 4, 7}};
  parts.clear(), ends.clear(), dims.clear();
  findAllGathers(widened, wider, parts, ends, dims, scratch);
  EXPECT_TRUE(ends.empty());
  // Chunks of unequal width, or with a gap, are not one region's.
  sent[2].region.dims[1] = {4, 6};
  parts.clear(), ends.clear(), dims.clear();
  findAllGathers(sent, receivers, parts, ends, dims, scratch);
  EXPECT_TRUE(ends.empty());
}

/// Rows [lo, hi) of an 8-column matrix.
static Box rows(int64_t lo, int64_t hi) {
  Box b;
  b.rank = 2;
  b.dims[0] = {lo, hi};
  b.dims[1] = {0, 8};
  return b;
}

TEST(Region, ReduceScatterChunksGoToTheirReaders) {
  // Sums of a 12 x 8 region over rows 0-11, held by 3 devices; the output
  // writes dim 0 by loop 0 and dim 1 by loop 1.
  Operand out;
  out.dims.resize(2);
  out.dims[0].terms = {{0, 1}};
  out.dims[1].terms = {{1, 1}};
  Box region = rows(0, 12);
  std::vector<int32_t> holders;
  // Device i reads rows of chunk i: chunk i to device i, along dim 0.
  EXPECT_EQ(scatterDimension(
                out, region, 3,
                {{0, rows(0, 4)}, {1, rows(4, 8)}, {2, rows(8, 12)}}, holders),
            0);
  EXPECT_EQ(holders, (std::vector<int32_t>{0, 1, 2}));
  // Device 0 reads chunk 2 and device 2 chunk 0 (1 reads nothing): each
  // gets the chunk it reads, device 1 the one left.
  EXPECT_EQ(scatterDimension(out, region, 3,
                             {{0, rows(8, 10)}, {2, rows(1, 3)}}, holders),
            0);
  EXPECT_EQ(holders, (std::vector<int32_t>{2, 1, 0}));
  // Devices 0 and 2 both read chunk 1, or device 1 reads across chunks 0
  // and 1: no dimension.
  EXPECT_EQ(scatterDimension(out, region, 3, {{0, rows(4, 6)}, {2, rows(6, 8)}},
                             holders),
            -1);
  EXPECT_EQ(scatterDimension(out, region, 3, {{1, rows(3, 5)}}, holders), -1);
  // Not allowed along dim 0 (the partitioner's epilogue condition): none.
  EXPECT_EQ(scatterDimension(out, region, 3, {{0, rows(0, 4)}}, holders,
                             /*dims=*/2u),
            -1);
}

TEST(Region, MissingHullOfAPartlyHeldPart) {
  auto box = [](Range rows, Range cols) {
    Box b;
    b.rank = 2;
    b.dims[0] = rows;
    b.dims[1] = cols;
    return b;
  };
  Box tile = box({0, 8}, {0, 4});
  // Nothing held, or held elsewhere: the whole part.
  EXPECT_EQ(missingHull(tile, {}), tile);
  EXPECT_EQ(missingHull(tile, {box({0, 8}, {4, 8})}), tile);
  // A halo of rows 1-7 held: row 0 is missing.
  EXPECT_EQ(missingHull(tile, {box({1, 8}, {0, 4})}), box({0, 1}, {0, 4}));
  // Rows 0-6 held by one box and more held beyond the part: row 7.
  EXPECT_EQ(missingHull(tile, {box({0, 7}, {0, 8}), box({9, 12}, {0, 4})}),
            box({7, 8}, {0, 4}));
  // Covered by two boxes together (neither alone): nothing.
  EXPECT_FALSE(missingHull(tile, {box({0, 5}, {0, 4}), box({3, 8}, {0, 4})}));
  // A scalar (rank 0) held already: nothing.
  Box scalar;
  EXPECT_FALSE(missingHull(scalar, {scalar}));
  EXPECT_EQ(missingHull(scalar, {}), scalar);
  // A hole in the middle held: the hull of the ring is the part.
  EXPECT_EQ(missingHull(tile, {box({2, 6}, {1, 3})}), tile);
  // Two corners missing (rows 0-1 of columns 0-1, rows 6-7 of 2-3): their
  // hull.
  EXPECT_EQ(missingHull(tile, {box({2, 8}, {0, 2}), box({0, 6}, {2, 4})}),
            tile);
  EXPECT_EQ(missingHull(tile, {box({2, 8}, {0, 4}), box({0, 2}, {2, 4})}),
            box({0, 2}, {0, 2}));
}

TEST(Region, SumsGoToTheirReadersWhenThatMovesLess) {
  Box region = rows(0, 8); // 64 elements
  std::vector<DeviceRead> boxes;
  // Group {1, 2, 3}; four readers of two rows each (devices 0-3): at the
  // readers 2 x 16 x 3 + 3 x 16 = 144, in the group 2 x 2 x 64 + 16 = 272.
  std::vector<DeviceRead> reads = {
      {3, rows(4, 6)}, {0, rows(0, 2)}, {1, rows(2, 4)}, {2, rows(6, 8)}};
  EXPECT_TRUE(sumAtReaders(region, {1, 2, 3}, false, reads, &boxes));
  ASSERT_EQ(boxes.size(), 4u);
  EXPECT_EQ(boxes[0].device, 0);
  EXPECT_EQ(boxes[3].region, rows(4, 6));
  // Every device of the group reads it all: the all-reduce (256 < 384).
  reads = {{1, rows(0, 8)}, {2, rows(0, 8)}, {3, rows(0, 8)}};
  EXPECT_FALSE(sumAtReaders(region, {1, 2, 3}, false, reads, &boxes));
  EXPECT_TRUE(boxes.empty());
  // Reads outside the region count for nothing; a device's reads count as
  // their hull (rows 0-4 of device 1): at the readers 40 + 24 = 64, not
  // fewer than a reduce-scatter's (scattered) 64, fewer than an
  // all-reduce's 128.
  reads = {{1, rows(0, 2)}, {1, rows(3, 5)}, {4, rows(9, 12)}, {2, rows(5, 8)}};
  EXPECT_FALSE(sumAtReaders(rows(0, 8), {1, 2}, true, reads));
  EXPECT_TRUE(sumAtReaders(rows(0, 8), {1, 2}, false, reads, &boxes));
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].region, rows(0, 5));
  // One device: nothing to combine.
  EXPECT_FALSE(sumAtReaders(region, {1}, false, reads));
}
