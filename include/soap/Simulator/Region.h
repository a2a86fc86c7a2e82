//===- Region.h - Tiles of an iteration space, regions of tensors -*- C++ -*-===//
//
// THE one place that answers "which region of tensor T does tile t of node O
// read or write" (DESIGN.md). The simulator uses it for transfer sizes, the
// partitioning pass for slices and messages, the tests for expectations.
//
// Tiling. A node's config gives a degree per loop; degree d of a loop of
// extent E splits it into d equal chunks (d divides E): chunk i covers
// [i*E/d, (i+1)*E/d). Tiles are numbered row-major over the loops (the last
// loop varies fastest), so tile t has coordinates c with
// t = ((c0*d1 + c1)*d2 + c2)... .
//
// Regions. For a tile covering loop ranges [lo_l, hi_l), a tensor dimension
// indexed by `constant + sum(coef * loop)` is touched on
//   lo = constant + sum(coef * (coef >= 0 ? lo_l : hi_l - 1))
//   hi = constant + sum(coef * (coef >= 0 ? hi_l - 1 : lo_l)) + 1
// clamped to [0, shape) (padding reads nothing); a `whole` dimension is the
// full extent. The region is the box of these ranges. For strided or dilated
// accesses the box is the bounding box of the touched elements (exact for
// the stride/kernel patterns of convolutions, whose windows overlap or abut).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_REGION_H
#define SOAP_SIMULATOR_REGION_H

#include "soap/Simulator/OpGraph.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace soap {

/// Most loops of a node and most dimensions of a tensor the simulator and
/// the partitioner handle (checked by validateForTiling()).
constexpr int32_t kMaxRank = 12;

/// Half-open integer interval [lo, hi).
struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t size() const { return hi > lo ? hi - lo : 0; }
  bool operator==(const Range &o) const { return lo == o.lo && hi == o.hi; }
};

/// A box: one Range per dimension (loops of a node or dims of a tensor).
struct Box {
  int32_t rank = 0;
  std::array<Range, kMaxRank> dims;

  int64_t volume() const {
    int64_t v = 1;
    for (int32_t d = 0; d < rank; ++d)
      v *= dims[d].size();
    return v;
  }
  bool empty() const { return volume() == 0; }
  bool operator==(const Box &o) const {
    if (rank != o.rank)
      return false;
    for (int32_t d = 0; d < rank; ++d)
      if (!(dims[d] == o.dims[d]))
        return false;
    return true;
  }
  bool operator!=(const Box &o) const { return !(*this == o); }
};

/// Intersection of two boxes of the same rank (empty ranges where disjoint).
inline Box intersect(const Box &a, const Box &b) {
  Box r;
  r.rank = a.rank;
  for (int32_t d = 0; d < a.rank; ++d) {
    r.dims[d].lo = std::max(a.dims[d].lo, b.dims[d].lo);
    r.dims[d].hi = std::max(r.dims[d].lo, std::min(a.dims[d].hi, b.dims[d].hi));
  }
  return r;
}

/// The smallest box covering `a` and `b` (non-empty, same rank).
inline Box hull(const Box &a, const Box &b) {
  Box r = a;
  for (int32_t d = 0; d < r.rank; ++d) {
    r.dims[d].lo = std::min(a.dims[d].lo, b.dims[d].lo);
    r.dims[d].hi = std::max(a.dims[d].hi, b.dims[d].hi);
  }
  return r;
}

/// Whether `inner` lies inside `outer`, both `rank` ranges (an empty range
/// of `inner` lies anywhere). The rule that a region already moved to a
/// device serves a later read there: the simulator (an earlier reader's
/// transfer) asks it; soap-partition (ensureValid) moves the missingHull.
inline bool covers(const Range *outer, const Range *inner, int32_t rank) {
  for (int32_t d = 0; d < rank; ++d)
    if (inner[d].size() > 0 &&
        (inner[d].lo < outer[d].lo || inner[d].hi > outer[d].hi))
      return false;
  return true;
}
inline bool covers(const Box &outer, const Box &inner) {
  return covers(outer.dims.data(), inner.dims.data(), inner.rank);
}

/// covers() of the parts of `outer` and `inner` inside `within`: whether
/// what was moved of a producer tile's region (`within`) to a device
/// serves another read of that tile there.
inline bool coversWithin(const Range *within, const Range *outer,
                         const Range *inner, int32_t rank) {
  for (int32_t d = 0; d < rank; ++d) {
    int64_t lo = std::max(within[d].lo, inner[d].lo);
    int64_t hi = std::min(within[d].hi, inner[d].hi);
    if (hi > lo && (lo < std::max(within[d].lo, outer[d].lo) ||
                    hi > std::min(within[d].hi, outer[d].hi)))
      return false;
  }
  return true;
}

/// Volume of the intersection, without building it.
inline int64_t intersectionVolume(const Box &a, const Box &b) {
  int64_t v = 1;
  for (int32_t d = 0; d < a.rank; ++d) {
    int64_t lo = std::max(a.dims[d].lo, b.dims[d].lo);
    int64_t hi = std::min(a.dims[d].hi, b.dims[d].hi);
    if (hi <= lo)
      return 0;
    v *= hi - lo;
  }
  return v;
}

/// The smallest box covering the elements of `part` that none of `held`
/// (boxes of its rank) covers: none when they cover it all (a rank-0 box
/// cannot be empty), `part` when none overlaps it. What soap-partition moves of
/// a part of which the receiving device already holds some (a halo read first,
/// the whole tile later): one transfer, never of more than `part`.
std::optional<Box> missingHull(const Box &part, const std::vector<Box> &held);

/// The whole tensor as a box.
Box wholeTensor(const Tensor &tensor);

/// Number of tiles of a config (product of degrees).
int32_t numTiles(const std::vector<int32_t> &degrees);

/// Coordinates of tile `tile` (row-major, last loop fastest).
void tileCoordinates(const std::vector<int32_t> &degrees, int32_t tile,
                     std::array<int32_t, kMaxRank> &coords);

/// Loop ranges of tile `tile` of `node` under per-loop `degrees`
/// (degrees.size() == node.numLoops(), each dividing its extent).
Box tileLoopBox(const Node &node, const std::vector<int32_t> &degrees,
                int32_t tile);

/// Region of `tensor` that `operand` touches when the loops range over
/// `loops` (a tile's loop box); empty where they miss its `onlyAt`.
Box accessRegion(const Operand &operand, const Tensor &tensor,
                 const Box &loops);

/// The indices of one tensor dimension indexed by `access` when loop l
/// ranges over `loops[l]`: sorted, disjoint, non-adjacent runs clamped to
/// [0, extent). Exact for any access (terms taken by increasing coefficient;
/// a term whose step does not exceed the runs so far widens one run, as a
/// convolution window or a collapsed reshape's full inner loops do). When
/// that would take more than `maxRuns` runs, `runs` is the bounding range
/// and the result false.
bool exactDimRuns(const DimAccess &access, int64_t extent, const Range *loops,
                  size_t maxRuns, std::vector<Range> &runs);

/// Number of indices of sorted disjoint `runs` inside `range`.
int64_t runsOverlap(const Range *runs, size_t count, const Range &range);

/// The exact set of elements `operand` touches when its loops range over
/// `loops`, as disjoint boxes. accessRegion gives the bounding box, which is
/// what a reader needs; an owner must not claim more than it wrote, and a
/// dimension indexed by several loops (a collapsed reshape, `8*d0 + d1`) is
/// not a box when a tile covers part of the inner loop.
std::vector<Box> exactAccessRegions(const Operand &operand,
                                    const Tensor &tensor, const Box &loops);

/// Convenience: region of input/output operand `index` of `node` for tile
/// `tile`.
Box tileInputRegion(const OpGraph &graph, int32_t node,
                    const std::vector<int32_t> &degrees, int32_t tile,
                    int32_t index);
Box tileOutputRegion(const OpGraph &graph, int32_t node,
                     const std::vector<int32_t> &degrees, int32_t tile,
                     int32_t index);

/// The regions by which gradient partial sums held as `regions` (distinct
/// boxes of one rank, each summed on some devices) are combined, into
/// `cells`: the regions themselves when no two overlap, otherwise the
/// cells of the grid their bounds make that some region covers (each region
/// is then a union of cells; a device takes part in a cell's all-reduce when
/// one of its regions covers it). False, leaving `cells` empty, when the
/// grid has more than `maxCells` cells. Shared by the simulator's
/// synchronization of a shared parameter and the partitioner's combination
/// of a chain of sums. `bounds`: scratch.
bool combinationRegions(const std::vector<Box> &regions, size_t maxCells,
                        std::vector<Box> &cells, std::vector<int64_t> &bounds);

/// A read of a split reduction's sums after their combination: the index of
/// the reading device in the reduction group, and the region.
struct ChunkRead {
  int32_t chunk;
  Box region;
};

/// The dimension of `region` (partial sums written through `out`, held by
/// `parts` devices) along which they are reduce-scattered rather than
/// all-reduced: indexed by one loop alone (and allowed by `dims`, a bit per
/// dimension), cut by `parts` evenly into chunks, and such that every read
/// of `reads` stays in the chunk its device gets. -1 if none. `holders`:
/// which device (index in the group) gets chunk c, holders[c]: device i
/// gets chunk i if that works; otherwise, each device that reads within one
/// chunk gets that chunk (devices reading distinct chunks), the others the
/// chunks left, in order. Shared by the simulator and the partitioner,
/// which must combine the same way.
int32_t scatterDimension(const Operand &out, const Box &region, int32_t parts,
                         const std::vector<ChunkRead> &reads,
                         std::vector<int32_t> &holders, uint32_t dims = ~0u);

/// A read of a tensor by a device: a reader tile's region, or the whole
/// tensor for the gather of a program result to device 0.
struct DeviceRead {
  int32_t device;
  Box region;
};

/// Whether the partial sums of `region` of a split reduction, held by the
/// distinct devices `group`, go to their readers, each reading device
/// receiving the other devices' partial sums of what it reads and combining
/// them itself: when that moves fewer bytes than combining them in the
/// group and sending the sums on. Each reading device reads the smallest
/// box covering its `reads` within `region` (volume V): at the readers,
/// (|group| - 1) V per device of the group and |group| V per other device;
/// in the group, its all-reduce, 2 (|group| - 1) x region (a reduce-scatter,
/// `scattered`: (|group| - 1) x region), and V per device outside it.
/// Shared by the simulator and soap-partition, which must combine the same
/// way. Sorts `reads` by device; `boxes`, when given, gets each reading
/// device's box, by device.
bool sumAtReaders(const Box &region, const std::vector<int32_t> &group,
                  bool scattered, std::vector<DeviceRead> &reads,
                  std::vector<DeviceRead> *boxes = nullptr);

/// sumAtReaders' rule from the volumes of the reading devices' boxes: the
/// sum over the group's devices, `inGroup`, and over the others, `others`.
inline bool sumAtReaders(int64_t regionVolume, int64_t groupSize,
                         bool scattered, int64_t inGroup, int64_t others) {
  if (groupSize < 2)
    return false;
  int64_t atReaders = (groupSize - 1) * inGroup + groupSize * others;
  int64_t combined =
      (scattered ? 1 : 2) * (groupSize - 1) * regionVolume + others;
  return atReaders < combined;
}

/// A region one device sends to others: to receivers[begin, end) of the
/// list passed with it (sorted, distinct, without `from`).
struct SentRegion {
  Box region;
  int32_t from;
  int32_t begin, end;
};

/// The all-gathers among `sent`: a group of n >= 2 devices each of which
/// sends one region, to every other device of the group and to no other,
/// the n regions being the equal consecutive chunks of one region along one
/// dimension. Per gather, appends its parts (indices into `sent`) in chunk
/// order to `parts`, then parts.size() to `ends`, and the dimension to
/// `dims`. `scratch`: reused storage. Shared by soap-form-collectives (one
/// NCCL all-gather where the program had the n (n - 1) transfers) and the
/// simulator (one ring task), which must find the same ones.
void findAllGathers(const std::vector<SentRegion> &sent,
                    const std::vector<int32_t> &receivers,
                    std::vector<int32_t> &parts, std::vector<int32_t> &ends,
                    std::vector<int32_t> &dims,
                    std::vector<int32_t> &scratch);

/// Empty when every node and tensor has at most kMaxRank loops/dims.
std::string validateForTiling(const OpGraph &graph);

} // namespace soap

#endif // SOAP_SIMULATOR_REGION_H
