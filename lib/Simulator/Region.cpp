//===- Region.cpp - Tiles of an iteration space, regions of tensors -------===//

#include "soap/Simulator/Region.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <limits>

using namespace soap;

Box soap::wholeTensor(const Tensor &tensor) {
  Box b;
  b.rank = static_cast<int32_t>(tensor.shape.size());
  assert(b.rank <= kMaxRank);
  for (int32_t d = 0; d < b.rank; ++d)
    b.dims[d] = {0, tensor.shape[d]};
  return b;
}

std::optional<Box> soap::missingHull(const Box &part,
                                     const std::vector<Box> &held) {
  // The elements of `part` no held box covers, as disjoint boxes: each held
  // box cuts every remaining box into the slabs outside it, dimension by
  // dimension (at most 2 * rank per cut).
  std::vector<Box> left, next;
  if (!part.empty())
    left.push_back(part);
  for (const Box &h : held) {
    next.clear();
    for (const Box &b : left) {
      if (intersectionVolume(b, h) == 0) {
        next.push_back(b);
        continue;
      }
      Box rest = b;
      for (int32_t d = 0; d < b.rank; ++d) {
        Range &r = rest.dims[d];
        const Range &c = h.dims[d];
        if (r.lo < c.lo) {
          Box slab = rest;
          slab.dims[d] = {r.lo, c.lo};
          next.push_back(slab);
        }
        if (c.hi < r.hi) {
          Box slab = rest;
          slab.dims[d] = {c.hi, r.hi};
          next.push_back(slab);
        }
        r = {std::max(r.lo, c.lo), std::min(r.hi, c.hi)};
      }
    }
    left.swap(next);
  }
  if (left.empty())
    return std::nullopt;
  Box covering = left.front();
  for (const Box &b : left)
    covering = hull(covering, b);
  return covering;
}

int32_t soap::numTiles(const std::vector<int32_t> &degrees) {
  int32_t n = 1;
  for (int32_t d : degrees)
    n *= d;
  return n;
}

void soap::tileCoordinates(const std::vector<int32_t> &degrees, int32_t tile,
                           std::array<int32_t, kMaxRank> &coords) {
  for (int32_t l = static_cast<int32_t>(degrees.size()) - 1; l >= 0; --l) {
    coords[l] = tile % degrees[l];
    tile /= degrees[l];
  }
}

Box soap::tileLoopBox(const Node &node, const std::vector<int32_t> &degrees,
                      int32_t tile) {
  assert(static_cast<int32_t>(degrees.size()) == node.numLoops());
  std::array<int32_t, kMaxRank> coords;
  tileCoordinates(degrees, tile, coords);
  Box b;
  b.rank = node.numLoops();
  for (int32_t l = 0; l < b.rank; ++l) {
    int64_t chunk = node.extents[l] / degrees[l];
    b.dims[l] = {coords[l] * chunk, (coords[l] + 1) * chunk};
  }
  return b;
}

Box soap::accessRegion(const Operand &operand, const Tensor &tensor,
                       const Box &loops) {
  Box r;
  r.rank = static_cast<int32_t>(operand.dims.size());
  // Not read by these iterations: the empty box (every range [0, 0)).
  if (!operand.onlyAt.empty()) {
    int64_t lo[kMaxRank], hi[kMaxRank];
    for (int32_t l = 0; l < loops.rank; ++l) {
      lo[l] = loops.dims[l].lo;
      hi[l] = loops.dims[l].hi;
    }
    if (!operand.readBy(lo, hi))
      return r;
  }
  for (int32_t d = 0; d < r.rank; ++d) {
    const DimAccess &access = operand.dims[d];
    int64_t extent = tensor.shape[d];
    if (access.whole) {
      r.dims[d] = {0, extent};
      continue;
    }
    int64_t lo = access.constant, last = access.constant;
    for (const LoopTerm &term : access.terms) {
      const Range &lr = loops.dims[term.loop];
      if (term.coefficient >= 0) {
        lo += term.coefficient * lr.lo;
        last += term.coefficient * (lr.hi - 1);
      } else {
        lo += term.coefficient * (lr.hi - 1);
        last += term.coefficient * lr.lo;
      }
    }
    lo = std::max<int64_t>(lo, 0);
    int64_t hi = std::min<int64_t>(last + 1, extent);
    if (hi < lo)
      hi = lo;
    r.dims[d] = {lo, hi};
  }
  return r;
}

Box soap::tileInputRegion(const OpGraph &graph, int32_t node,
                          const std::vector<int32_t> &degrees, int32_t tile,
                          int32_t index) {
  const Node &n = graph.nodes[node];
  const Operand &op = n.inputs[index];
  return accessRegion(op, graph.tensors[op.tensor],
                      tileLoopBox(n, degrees, tile));
}

Box soap::tileOutputRegion(const OpGraph &graph, int32_t node,
                           const std::vector<int32_t> &degrees, int32_t tile,
                           int32_t index) {
  const Node &n = graph.nodes[node];
  const Operand &op = n.outputs[index];
  return accessRegion(op, graph.tensors[op.tensor],
                      tileLoopBox(n, degrees, tile));
}

std::string soap::validateForTiling(const OpGraph &graph) {
  for (const Node &n : graph.nodes)
    if (n.numLoops() > kMaxRank)
      return "node '" + n.name + "' has " + std::to_string(n.numLoops()) +
             " loops; at most " + std::to_string(kMaxRank) + " are supported";
  for (const Tensor &t : graph.tensors)
    if (static_cast<int32_t>(t.shape.size()) > kMaxRank)
      return "tensor '" + t.name + "' has " + std::to_string(t.shape.size()) +
             " dimensions; at most " + std::to_string(kMaxRank) +
             " are supported";
  return "";
}

bool soap::exactDimRuns(const DimAccess &access, int64_t extent,
                        const Range *loops, size_t maxRuns,
                        std::vector<Range> &runs) {
  runs.clear();
  auto bounding = [&]() {
    int64_t lo = access.constant, last = access.constant;
    for (const LoopTerm &term : access.terms) {
      const Range &lr = loops[term.loop];
      lo += term.coefficient * (term.coefficient >= 0 ? lr.lo : lr.hi - 1);
      last += term.coefficient * (term.coefficient >= 0 ? lr.hi - 1 : lr.lo);
    }
    Range r{std::max<int64_t>(lo, 0), std::min<int64_t>(last + 1, extent)};
    runs.clear();
    if (r.size() > 0)
      runs.push_back(r);
  };
  if (access.whole) {
    runs.push_back({0, extent});
    return true;
  }
  // Terms by increasing step; each adds shifts s0 + step * j, j < count.
  std::array<int32_t, kMaxRank> order;
  size_t numTerms = std::min<size_t>(access.terms.size(), kMaxRank);
  if (access.terms.size() > kMaxRank) {
    bounding();
    return false;
  }
  for (size_t i = 0; i < numTerms; ++i)
    order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.begin() + numTerms, [&](int32_t a, int32_t b) {
    return std::abs(access.terms[a].coefficient) <
           std::abs(access.terms[b].coefficient);
  });
  runs.push_back({access.constant, access.constant + 1});
  std::vector<Range> next;
  for (size_t i = 0; i < numTerms; ++i) {
    const LoopTerm &term = access.terms[order[i]];
    const Range &lr = loops[term.loop];
    int64_t count = lr.size();
    if (count <= 0) {
      runs.clear();
      return true;
    }
    int64_t step = std::abs(term.coefficient);
    int64_t s0 = term.coefficient >= 0 ? term.coefficient * lr.lo
                                       : term.coefficient * (lr.hi - 1);
    if (step == 0 || count == 1) {
      for (Range &r : runs) {
        r.lo += s0;
        r.hi += s0;
      }
      continue;
    }
    if (runs.size() == 1 && step <= runs[0].size()) {
      runs[0] = {runs[0].lo + s0, runs[0].hi + s0 + step * (count - 1)};
      continue;
    }
    if (runs.size() * size_t(count) > maxRuns) {
      bounding();
      return false;
    }
    next.clear();
    for (int64_t j = 0; j < count; ++j)
      for (const Range &r : runs)
        next.push_back({r.lo + s0 + step * j, r.hi + s0 + step * j});
    std::sort(next.begin(), next.end(),
              [](const Range &a, const Range &b) { return a.lo < b.lo; });
    runs.clear();
    for (const Range &r : next) {
      if (!runs.empty() && r.lo <= runs.back().hi)
        runs.back().hi = std::max(runs.back().hi, r.hi);
      else
        runs.push_back(r);
    }
  }
  // Clamp to the tensor (padding reads nothing).
  size_t kept = 0;
  for (Range r : runs) {
    r.lo = std::max<int64_t>(r.lo, 0);
    r.hi = std::min<int64_t>(r.hi, extent);
    if (r.size() > 0)
      runs[kept++] = r;
  }
  runs.resize(kept);
  return true;
}

int64_t soap::runsOverlap(const Range *runs, size_t count, const Range &range) {
  // The first run ending after range.lo.
  const Range *it =
      std::upper_bound(runs, runs + count, range.lo,
                       [](int64_t v, const Range &r) { return v < r.hi; });
  int64_t total = 0;
  for (; it != runs + count && it->lo < range.hi; ++it)
    total += std::min(it->hi, range.hi) - std::max(it->lo, range.lo);
  return total;
}

std::vector<Box> soap::exactAccessRegions(const Operand &operand,
                                          const Tensor &tensor,
                                          const Box &loops) {
  Box bbox = accessRegion(operand, tensor, loops);
  std::vector<std::vector<Range>> perDim(bbox.rank);
  for (int32_t d = 0; d < bbox.rank; ++d) {
    if (operand.dims[d].terms.size() <= 1)
      perDim[d] = {bbox.dims[d]};
    else
      exactDimRuns(operand.dims[d], tensor.shape[d], loops.dims.data(),
                   std::numeric_limits<size_t>::max(), perDim[d]);
  }
  std::vector<Box> boxes{bbox};
  for (int32_t d = 0; d < bbox.rank; ++d) {
    std::vector<Box> next;
    for (const Box &b : boxes)
      for (const Range &r : perDim[d]) {
        Box c = b;
        c.dims[d] = r;
        next.push_back(c);
      }
    boxes = std::move(next);
  }
  return boxes;
}

bool soap::combinationRegions(const std::vector<Box> &regions, size_t maxCells,
                              std::vector<Box> &cells,
                              std::vector<int64_t> &bounds) {
  cells.clear();
  bool overlap = false;
  for (size_t a = 0; a < regions.size() && !overlap; ++a)
    for (size_t b = a + 1; b < regions.size() && !overlap; ++b)
      overlap = intersectionVolume(regions[a], regions[b]) > 0;
  if (!overlap) {
    cells = regions;
    return true;
  }
  int32_t rank = regions.front().rank;
  // The sorted distinct bounds of dimension d.
  auto boundsOf = [&](int32_t d) {
    bounds.clear();
    for (const Box &r : regions) {
      bounds.push_back(r.dims[d].lo);
      bounds.push_back(r.dims[d].hi);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  };
  size_t count = 1;
  for (int32_t d = 0; d < rank && count <= maxCells; ++d) {
    boundsOf(d);
    count *= bounds.size() - 1;
  }
  if (count > maxCells)
    return false;
  cells.push_back(regions.front());
  for (int32_t d = 0; d < rank; ++d) {
    boundsOf(d);
    size_t before = cells.size();
    for (size_t c = 0; c < before; ++c)
      for (size_t i = 0; i + 1 < bounds.size(); ++i) {
        Box cell = cells[c];
        cell.dims[d].lo = bounds[i];
        cell.dims[d].hi = bounds[i + 1];
        cells.push_back(cell);
      }
    cells.erase(cells.begin(), cells.begin() + before);
  }
  // The cells some region covers (the grid is aligned to the regions).
  cells.erase(std::remove_if(cells.begin(), cells.end(),
                             [&](const Box &cell) {
                               for (const Box &r : regions)
                                 if (intersectionVolume(r, cell) > 0)
                                   return false;
                               return true;
                             }),
              cells.end());
  return true;
}

void soap::findAllGathers(const std::vector<SentRegion> &sent,
                          const std::vector<int32_t> &receivers,
                          std::vector<int32_t> &parts,
                          std::vector<int32_t> &ends,
                          std::vector<int32_t> &dims,
                          std::vector<int32_t> &scratch) {
  // A part's group: its sender and its receivers, sorted. Parts ordered by
  // group (lexicographically, as sorted lists), then sender.
  // Each group as a bit set of devices (W words per part): comparing two is
  // a few words, where the lists took their length.
  int32_t devices = 0;
  for (const SentRegion &p : sent) {
    devices = std::max(devices, p.from + 1);
    if (p.end > p.begin)
      devices = std::max(devices, receivers[p.end - 1] + 1);
  }
  size_t W = (static_cast<size_t>(devices) + 63) / 64;
  static thread_local std::vector<uint64_t> bits;
  bits.assign(sent.size() * W, 0);
  for (size_t i = 0; i < sent.size(); ++i) {
    uint64_t *b = bits.data() + i * W;
    const SentRegion &p = sent[i];
    b[p.from / 64] |= uint64_t(1) << (p.from % 64);
    for (int32_t k = p.begin; k < p.end; ++k)
      b[receivers[k] / 64] |= uint64_t(1) << (receivers[k] % 64);
  }
  auto inGroup = [&](size_t part, int32_t device) {
    return bits[part * W + size_t(device) / 64] >> (device % 64) & 1;
  };
  // -1, 0, 1 as part x's group is before, the same as or after part y's.
  // At the first device m in one group only, the sorted lists first
  // differ: the one holding m is before unless the other has nothing past
  // m (then the other is its prefix).
  auto groupOrder = [&](size_t x, size_t y) -> int {
    const uint64_t *a = bits.data() + x * W, *b = bits.data() + y * W;
    for (size_t w = 0; w < W; ++w) {
      uint64_t diff = a[w] ^ b[w];
      if (!diff)
        continue;
      unsigned bit = static_cast<unsigned>(__builtin_ctzll(diff));
      bool inA = a[w] >> bit & 1;
      const uint64_t *other = inA ? b : a;
      bool otherPast = bit < 63 && (other[w] >> bit >> 1) != 0;
      for (size_t v = w + 1; v < W && !otherPast; ++v)
        otherPast = other[v] != 0;
      return (inA == otherPast) ? -1 : 1;
    }
    return 0;
  };
  std::vector<int32_t> &order = scratch;
  order.resize(sent.size());
  for (size_t i = 0; i < sent.size(); ++i)
    order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    if (int c = groupOrder(x, y))
      return c < 0;
    const SentRegion &a = sent[x], &b = sent[y];
    return a.from != b.from ? a.from < b.from : x < y;
  });
  for (size_t i = 0; i < order.size();) {
    const SentRegion &head = sent[order[i]];
    size_t j = i + 1;
    while (j < order.size() && groupOrder(order[i], order[j]) == 0)
      ++j;
    size_t from = i, n = static_cast<size_t>(head.end - head.begin) + 1;
    i = j;
    // One part from each device of the group: n parts whose distinct
    // senders are all in it.
    if (n < 2 || j - from != n)
      continue;
    bool each = true;
    for (size_t q = from; q < j && each; ++q)
      each = inGroup(order[from], sent[order[q]].from) &&
             (q == from || sent[order[q]].from != sent[order[q - 1]].from);
    if (!each)
      continue;
    // Equal consecutive chunks along the one dimension where they differ.
    int32_t *group = order.data() + from;
    const Box &first = sent[group[0]].region;
    int32_t rank = first.rank, dim = -1;
    for (int32_t d = 0; d < rank && dim < 0; ++d)
      for (size_t q = 1; q < n && dim < 0; ++q)
        if (!(sent[group[q]].region.dims[d] == first.dims[d]))
          dim = d;
    if (dim < 0)
      continue;
    std::sort(group, group + n, [&](int32_t x, int32_t y) {
      return sent[x].region.dims[dim].lo < sent[y].region.dims[dim].lo;
    });
    const Box &lowest = sent[group[0]].region;
    int64_t chunk = lowest.dims[dim].size();
    bool chunks = chunk > 0;
    for (size_t q = 0; q < n && chunks; ++q) {
      const Box &part = sent[group[q]].region;
      chunks = part.rank == rank;
      for (int32_t d = 0; d < rank && chunks; ++d) {
        Range want = lowest.dims[d];
        if (d == dim)
          want = {want.lo + int64_t(q) * chunk, want.lo + int64_t(q + 1) * chunk};
        chunks = part.dims[d] == want;
      }
    }
    if (!chunks)
      continue;
    parts.insert(parts.end(), group, group + n);
    ends.push_back(static_cast<int32_t>(parts.size()));
    dims.push_back(dim);
  }
}

int32_t soap::scatterDimension(const Operand &out, const Box &region,
                               int32_t parts,
                               const std::vector<ChunkRead> &reads,
                               std::vector<int32_t> &holders, uint32_t dims) {
  if (parts < 2)
    return -1;
  // (The simulator calls this for every combined group: no allocation.)
  static thread_local std::vector<int32_t> chunkOf;
  chunkOf.resize(parts);
  for (int32_t d = 0; d < region.rank; ++d) {
    const DimAccess &access = out.dims[d];
    if (!(dims >> d & 1u) || access.whole || access.constant != 0 ||
        access.terms.size() != 1 || access.terms[0].coefficient != 1 ||
        region.dims[d].size() % parts != 0)
      continue;
    int64_t chunk = region.dims[d].size() / parts;
    // The chunk each device reads within (-1: none), or no dimension.
    std::fill(chunkOf.begin(), chunkOf.end(), -1);
    bool fits = true, identity = true;
    for (const ChunkRead &read : reads) {
      Box need = intersect(read.region, region);
      if (need.empty())
        continue;
      int64_t c = (need.dims[d].lo - region.dims[d].lo) / chunk;
      if (need.dims[d].hi > region.dims[d].lo + (c + 1) * chunk ||
          (chunkOf[read.chunk] >= 0 && chunkOf[read.chunk] != c)) {
        fits = false;
        break;
      }
      chunkOf[read.chunk] = static_cast<int32_t>(c);
      identity &= c == read.chunk;
    }
    if (!fits)
      continue;
    holders.assign(parts, -1);
    if (identity) {
      for (int32_t c = 0; c < parts; ++c)
        holders[c] = c;
      return d;
    }
    for (int32_t i = 0; i < parts && fits; ++i)
      if (chunkOf[i] >= 0) {
        fits = holders[chunkOf[i]] < 0;
        holders[chunkOf[i]] = i;
      }
    if (!fits)
      continue;
    int32_t next = 0;
    for (int32_t i = 0; i < parts; ++i) {
      if (chunkOf[i] >= 0)
        continue;
      while (holders[next] >= 0)
        ++next;
      holders[next] = i;
    }
    return d;
  }
  return -1;
}

bool soap::sumAtReaders(const Box &region, const std::vector<int32_t> &group,
                        bool scattered, std::vector<DeviceRead> &reads,
                        std::vector<DeviceRead> *boxes) {
  if (boxes)
    boxes->clear();
  int64_t k = static_cast<int64_t>(group.size());
  if (k < 2)
    return false;
  std::sort(reads.begin(), reads.end(),
            [](const DeviceRead &a, const DeviceRead &b) {
              return a.device < b.device;
            });
  int64_t inGroup = 0, others = 0;
  for (size_t i = 0; i < reads.size();) {
    int32_t device = reads[i].device;
    Box box;
    bool any = false;
    for (; i < reads.size() && reads[i].device == device; ++i) {
      Box part = intersect(reads[i].region, region);
      if (part.empty())
        continue;
      box = any ? hull(box, part) : part;
      any = true;
    }
    if (!any)
      continue;
    if (boxes)
      boxes->push_back({device, box});
    if (std::find(group.begin(), group.end(), device) != group.end())
      inGroup += box.volume();
    else
      others += box.volume();
  }
  if (sumAtReaders(region.volume(), k, scattered, inGroup, others))
    return true;
  if (boxes)
    boxes->clear();
  return false;
}
