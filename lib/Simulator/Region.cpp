//===- Region.cpp - Tiles of an iteration space, regions of tensors -------===//

#include "soap/Simulator/Region.h"

#include <cassert>

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
