//===- MemoryTimelineTest.cpp - Bytes alive per device over a step --------===//

#include "MemoryTimeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace soap;

TEST(MemoryTimeline, PeakOfOverlappingIntervals) {
  MemoryTimeline m;
  m.reset(2, 8);
  EXPECT_EQ(m.peak(0), 0);
  m.add(0, 0, 5, 10); // an activation from F(0) through B(0)
  m.add(0, 1, 4, 20);
  m.add(0, 5, 5, 7); // a point: a parameter gradient during B(0)
  EXPECT_EQ(m.peak(0), 30);
  EXPECT_EQ(m.peak(1), 0);
  m.add(0, 1, 4, -20); // removed again
  EXPECT_EQ(m.peak(0), 17);
  m.add(1, 7, 7, 3); // the last position
  EXPECT_EQ(m.peak(1), 3);
  m.addFrom(1, 2, 4); // two intervals ending together: their ends at once
  m.addFrom(1, 3, 5);
  m.addFrom(1, 7, -9);
  EXPECT_EQ(m.peak(1), 9);
}

TEST(MemoryTimeline, MatchesSummingEveryPosition) {
  // Random intervals added and removed against a plain array per position.
  std::mt19937 rng(7);
  const int32_t D = 3, P = 37;
  MemoryTimeline m;
  m.reset(D, P);
  std::vector<std::vector<int64_t>> alive(D, std::vector<int64_t>(P, 0));
  struct Interval {
    int32_t d, first, last;
    int64_t bytes;
  };
  std::vector<Interval> in;
  for (int step = 0; step < 2000; ++step) {
    if (!in.empty() && rng() % 3 == 0) {
      size_t k = rng() % in.size();
      Interval iv = in[k];
      in.erase(in.begin() + k);
      m.add(iv.d, iv.first, iv.last, -iv.bytes);
      for (int32_t p = iv.first; p <= iv.last; ++p)
        alive[iv.d][p] -= iv.bytes;
    } else {
      int32_t a = rng() % P, b = rng() % P;
      Interval iv{int32_t(rng() % D), std::min(a, b), std::max(a, b),
                  int64_t(rng() % 1000)};
      in.push_back(iv);
      m.add(iv.d, iv.first, iv.last, iv.bytes);
      for (int32_t p = iv.first; p <= iv.last; ++p)
        alive[iv.d][p] += iv.bytes;
    }
    for (int32_t d = 0; d < D; ++d) {
      auto most = std::max_element(alive[d].begin(), alive[d].end());
      ASSERT_EQ(m.peak(d), *most) << "step " << step << " device " << d;
      // The first position at the peak (none where nothing is alive).
      ASSERT_EQ(m.peakPosition(d),
                *most > 0 ? int32_t(most - alive[d].begin()) : -1)
          << "step " << step << " device " << d;
    }
  }
}
