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
    sum.assign(size_t(devices) * 2 * p, 0);
    peakPrefix.assign(size_t(devices) * 2 * p, 0);
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

  /// The most bytes alive on `device` at any position (0 when empty).
  int64_t peak(int32_t device) const {
    return std::max<int64_t>(0, peakPrefix[size_t(device) * 2 * leaves + 1]);
  }

private:
  // A segment tree per device over the differences between neighbouring
  // positions: per tree node the sum of its differences and the largest
  // prefix sum within it (the bytes alive at a position are the prefix sum
  // up to it).
  void change(int32_t device, int32_t position, int64_t delta) {
    assert(position >= 0 && position < leaves);
    int64_t *s = sum.data() + size_t(device) * 2 * leaves;
    int64_t *m = peakPrefix.data() + size_t(device) * 2 * leaves;
    int32_t i = leaves + position;
    s[i] += delta;
    m[i] = s[i];
    for (i /= 2; i >= 1; i /= 2) {
      s[i] = s[2 * i] + s[2 * i + 1];
      m[i] = std::max(m[2 * i], s[2 * i] + m[2 * i + 1]);
    }
  }

  int32_t leaves = 1;
  std::vector<int64_t> sum, peakPrefix;
};

} // namespace soap

#endif // SOAP_LIB_SIMULATOR_MEMORYTIMELINE_H
