//===- MemoryTimeline.h - Bytes alive per device over a step ----*- C++ -*-===//
//
// Per device, the bytes alive at each of a training step's positions (its
// forward tasks, then its backward tasks) as a sum of intervals, and the
// peak over the positions. Adding or removing an interval costs
// O(log positions); the peak of a device is read in O(1). The simulator
// keeps each layer's activations and gradients here and changes only a
// changed layer's intervals (internal to lib/Simulator).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_SIMULATOR_MEMORYTIMELINE_H
#define SOAP_LIB_SIMULATOR_MEMORYTIMELINE_H

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

namespace soap {

class MemoryTimeline {
public:
  /// `devices` timelines of `positions` positions each, all empty.
  void reset(int32_t devices, int32_t positions) {
    int32_t p = 1;
    while (p < positions + 1) // + 1: the end of an interval ending last
      p *= 2;
    leaves = p;
    tree.assign(size_t(devices) * 2 * p, Sums{});
  }

  /// Adds `bytes` (negative: removes them) on `device` at positions
  /// [first, last].
  void add(int32_t device, int32_t first, int32_t last, int64_t bytes) {
    assert(first <= last);
    addFrom(device, first, bytes);
    addFrom(device, last + 1, -bytes);
  }

  /// Adds `bytes` on `device` at every position from `position` on (the
  /// two ends of an interval, or of several that share one, one at a time).
  void addFrom(int32_t device, int32_t position, int64_t bytes) {
    if (bytes != 0)
      change(device, position, bytes);
  }

  /// Empties every timeline, for a refill by addFromUnsummed and build().
  void clear() { std::fill(tree.begin(), tree.end(), Sums{}); }

  /// addFrom without updating the sums above the position: build() does
  /// that for all positions at once (a refill from scratch).
  void addFromUnsummed(int32_t device, int32_t position, int64_t bytes) {
    assert(position >= 0 && position < leaves);
    tree[size_t(device) * 2 * leaves + leaves + position].sum += bytes;
  }

  /// The sums above the positions, of every device, from the positions'.
  void build() {
    for (size_t d = 0; d < tree.size(); d += 2 * size_t(leaves)) {
      Sums *s = tree.data() + d;
      for (int32_t i = leaves; i < 2 * leaves; ++i)
        s[i].peak = s[i].sum;
      for (int32_t i = leaves - 1; i >= 1; --i)
        combine(s, i);
    }
  }

  /// The most bytes alive on `device` at any position (0 when empty).
  int64_t peak(int32_t device) const {
    return std::max<int64_t>(0, tree[size_t(device) * 2 * leaves + 1].peak);
  }

private:
  // A segment tree per device over the differences between neighbouring
  // positions: per tree node the sum of its differences and the largest
  // prefix sum within it (the bytes alive at a position are the prefix sum
  // up to it).
  struct Sums {
    int64_t sum = 0, peak = 0;
  };
  void change(int32_t device, int32_t position, int64_t delta) {
    assert(position >= 0 && position < leaves);
    Sums *s = tree.data() + size_t(device) * 2 * leaves;
    int32_t i = leaves + position;
    s[i].sum += delta;
    s[i].peak = s[i].sum;
    for (i /= 2; i >= 1; i /= 2)
      combine(s, i);
  }
  static void combine(Sums *s, int32_t i) {
    const Sums &l = s[2 * i], &r = s[2 * i + 1];
    s[i].sum = l.sum + r.sum;
    s[i].peak = std::max(l.peak, l.sum + r.peak);
  }

  int32_t leaves = 1;
  std::vector<Sums> tree;
};

} // namespace soap

#endif // SOAP_LIB_SIMULATOR_MEMORYTIMELINE_H
