//===- Region.cpp - Tiles of an iteration space, regions of tensors -------===//

#include "soap/Simulator/Region.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>

using namespace soap;

Box soap::wholeTensor(const Tensor &tensor) {
  Box b;
  b.rank = static_cast<int32_t>(tensor.shape.size());
  assert(b.rank <= kMaxRank);
  for (int32_t d = 0; d < b.rank; ++d)
    b.dims[d] = {0, tensor.shape[d]};
  return b;
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

std::vector<Box> soap::exactAccessRegions(const Operand &operand,
                                          const Tensor &tensor,
                                          const Box &loops) {
  Box bbox = accessRegion(operand, tensor, loops);
  std::vector<std::vector<Range>> perDim;
  for (int32_t d = 0; d < bbox.rank; ++d) {
    const DimAccess &access = operand.dims[d];
    if (access.whole || access.terms.size() <= 1) {
      perDim.push_back(std::vector<Range>{bbox.dims[d]});
      continue;
    }
    // The innermost term (smallest coefficient) gives contiguous runs when
    // its coefficient is 1; every other term is enumerated.
    size_t inner = 0;
    for (size_t i = 1; i < access.terms.size(); ++i)
      if (std::abs(access.terms[i].coefficient) <
          std::abs(access.terms[inner].coefficient))
        inner = i;
    const LoopTerm &in = access.terms[inner];
    bool contiguous = in.coefficient == 1;
    std::vector<int64_t> bases{access.constant};
    for (size_t i = 0; i < access.terms.size(); ++i) {
      if (i == inner && contiguous)
        continue;
      const LoopTerm &t = access.terms[i];
      const Range &r = loops.dims[t.loop];
      std::vector<int64_t> next;
      for (int64_t base : bases)
        for (int64_t v = r.lo; v < r.hi; ++v)
          next.push_back(base + t.coefficient * v);
      bases = std::move(next);
    }
    const Range &innerRange = loops.dims[in.loop];
    int64_t extent = tensor.shape[d];
    std::vector<Range> ranges;
    for (int64_t base : bases) {
      Range r = contiguous ? Range{base + innerRange.lo, base + innerRange.hi}
                         : Range{base, base + 1};
      r.lo = std::max<int64_t>(r.lo, 0);
      r.hi = std::min<int64_t>(r.hi, extent);
      if (r.size() > 0)
        ranges.push_back(r);
    }
    std::sort(ranges.begin(), ranges.end(), [](auto &a, auto &b) { return a.lo < b.lo; });
    std::vector<Range> merged;
    for (const Range &r : ranges) {
      if (!merged.empty() && r.lo <= merged.back().hi)
        merged.back().hi = std::max(merged.back().hi, r.hi);
      else
        merged.push_back(r);
    }
    perDim.push_back(merged);
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

int32_t soap::scatterDimension(const Operand &out, const Box &region,
                               int32_t parts,
                               const std::vector<ChunkRead> &reads,
                               uint32_t dims) {
  if (parts < 2)
    return -1;
  for (int32_t d = 0; d < region.rank; ++d) {
    const DimAccess &access = out.dims[d];
    if (!(dims >> d & 1u) || access.whole || access.constant != 0 ||
        access.terms.size() != 1 || access.terms[0].coefficient != 1 ||
        region.dims[d].size() % parts != 0)
      continue;
    int64_t chunk = region.dims[d].size() / parts;
    bool fits = true;
    for (const ChunkRead &read : reads) {
      Box need = intersect(read.region, region);
      if (need.empty())
        continue;
      int64_t lo = region.dims[d].lo + read.chunk * chunk;
      if (need.dims[d].lo < lo || need.dims[d].hi > lo + chunk) {
        fits = false;
        break;
      }
    }
    if (fits)
      return d;
  }
  return -1;
}
