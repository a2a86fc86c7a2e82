//===- MemoryTimeline.h - Bytes alive per device over a step ----*- C++ -*-===//
//
// Per device, the bytes alive at each of a training step's positions (its
// forward tasks, then its backward tasks) as a sum of intervals, and the
// peak over the positions. Adding or removing an interval costs
// O(log positions); the peak of a device is read in O(1); a device takes
// 10-20 bytes per position. The simulator keeps each layer's activations
// and gradients here and changes only a changed layer's intervals
// (internal to lib/Simulator).
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
    int32_t blocks = 1;
    while (blocks * kBlock < positions + 1) // + 1: an end past the last
      blocks *= 2;
    numBlocks = blocks;
    diffs.assign(size_t(devices) * blocks * kBlock, 0);
    tree.assign(size_t(devices) * 2 * blocks, Sums{});
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
    if (bytes == 0)
      return;
    diff(device, position) += bytes;
    Sums *s = tree.data() + size_t(device) * 2 * numBlocks;
    int32_t i = numBlocks + position / kBlock;
    s[i] = sumBlock(device, position / kBlock);
    for (i /= 2; i >= 1; i /= 2)
      combine(s, i);
  }

  /// Empties every timeline, for a refill by addFromUnsummed and build().
  void clear() {
    std::fill(diffs.begin(), diffs.end(), 0);
    std::fill(tree.begin(), tree.end(), Sums{});
  }

  /// addFrom without updating the sums above the position: build() does
  /// that for all positions at once (a refill from scratch).
  void addFromUnsummed(int32_t device, int32_t position, int64_t bytes) {
    diff(device, position) += bytes;
  }

  /// The sums above the positions, of every device, from the positions'.
  void build() {
    size_t devices = tree.size() / (2 * size_t(numBlocks));
    for (size_t d = 0; d < devices; ++d) {
      Sums *s = tree.data() + d * 2 * numBlocks;
      for (int32_t b = 0; b < numBlocks; ++b)
        s[numBlocks + b] = sumBlock(int32_t(d), b);
      for (int32_t i = numBlocks - 1; i >= 1; --i)
        combine(s, i);
    }
  }

  /// The first position where `device` holds peak(device) bytes (-1 when
  /// the peak is 0).
  int32_t peakPosition(int32_t device) const {
    const Sums *s = tree.data() + size_t(device) * 2 * numBlocks;
    int64_t want = s[1].peak, before = 0;
    if (want <= 0)
      return -1;
    int32_t i = 1;
    while (i < numBlocks) {
      if (before + s[2 * i].peak == want) {
        i = 2 * i;
      } else {
        before += s[2 * i].sum;
        i = 2 * i + 1;
      }
    }
    int32_t block = i - numBlocks;
    const int64_t *v =
        diffs.data() + (size_t(device) * numBlocks + block) * kBlock;
    for (int32_t k = 0; k < kBlock; ++k) {
      before += v[k];
      if (before == want)
        return block * kBlock + k;
    }
    assert(false && "the tree's peak is in its block");
    return -1;
  }

  /// The most bytes alive on `device` at any position (0 when empty).
  int64_t peak(int32_t device) const {
    return std::max<int64_t>(0, tree[size_t(device) * 2 * numBlocks + 1].peak);
  }

private:
  // Per device, the differences between neighbouring positions (the bytes
  // alive at a position are the prefix sum up to it), in blocks of kBlock
  // positions, and a segment tree over the blocks: per tree node the sum
  // of its differences and the largest prefix sum within it. A change
  // re-sums its block and the tree nodes above it.
  static constexpr int32_t kBlock = 16;
  struct Sums {
    int64_t sum = 0, peak = 0;
  };
  int64_t &diff(int32_t device, int32_t position) {
    assert(position >= 0 && position < numBlocks * kBlock);
    return diffs[size_t(device) * numBlocks * kBlock + position];
  }
  Sums sumBlock(int32_t device, int32_t block) const {
    const int64_t *v =
        diffs.data() + (size_t(device) * numBlocks + block) * kBlock;
    Sums r{v[0], v[0]};
    for (int32_t k = 1; k < kBlock; ++k) {
      r.sum += v[k];
      r.peak = std::max(r.peak, r.sum);
    }
    return r;
  }
  static void combine(Sums *s, int32_t i) {
    const Sums &l = s[2 * i], &r = s[2 * i + 1];
    s[i].sum = l.sum + r.sum;
    s[i].peak = std::max(l.peak, l.sum + r.peak);
  }

  int32_t numBlocks = 1;
  std::vector<int64_t> diffs;
  std::vector<Sums> tree;
};

} // namespace soap

#endif // SOAP_LIB_SIMULATOR_MEMORYTIMELINE_H
