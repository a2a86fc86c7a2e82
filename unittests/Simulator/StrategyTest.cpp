#include "soap/Simulator/GraphBuilder.h"
#include "soap/Simulator/Strategy.h"

#include <gtest/gtest.h>

using namespace soap;

TEST(Strategy, DataParallelAndSingle) {
  OpGraph g = makeMLPGraph(12, {8, 8});
  Strategy dp = dataParallelStrategy(g, 8);
  // Largest divisor of 12 that is <= 8 is 6.
  EXPECT_EQ(dp.configs[0].degrees, (std::vector<int32_t>{6, 1, 1}));
  EXPECT_EQ(dp.configs[0].devices, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(validateStrategy(g, dp, 8), "");
  Strategy one = singleDeviceStrategy(g);
  EXPECT_EQ(one.configs[1].devices, (std::vector<int32_t>{0}));
  EXPECT_EQ(validateStrategy(g, one, 1), "");
}

TEST(Strategy, Validation) {
  OpGraph g = makeMLPGraph(12, {8, 8});
  const Node &n = g.nodes[0];
  EXPECT_NE(validateConfig(n, {{5, 1, 1}, {0, 1, 2, 3, 4}}, 8)
                .find("does not divide"),
            std::string::npos);
  EXPECT_NE(validateConfig(n, {{2, 1, 1}, {0}}, 8).find("2 tiles but 1"),
            std::string::npos);
  EXPECT_NE(validateConfig(n, {{2, 1, 1}, {3, 3}}, 8).find("two tiles"),
            std::string::npos);
  EXPECT_NE(validateConfig(n, {{2, 1, 1}, {0, 8}}, 8).find("out of range"),
            std::string::npos);
  EXPECT_NE(validateConfig(n, {{4, 2, 1}, {0, 1, 2, 3, 4, 5, 6, 7}}, 4)
                .find("more than the 4 devices"),
            std::string::npos);
  EXPECT_NE(validateConfig(n, {{1, 1}, {0}}, 8).find("2 degrees for 3 loops"),
            std::string::npos);
  // Recomputation: not of a split reduction (loop 2 of the matmul).
  ParallelConfig recomputed{{2, 1, 1}, {0, 1}};
  recomputed.recompute = true;
  EXPECT_EQ(validateConfig(n, recomputed, 8), "");
  recomputed.degrees = {1, 1, 2};
  EXPECT_NE(validateConfig(n, recomputed, 8)
                .find("recomputes a node that "
                      "splits a reduction loop"),
            std::string::npos);
}

TEST(Strategy, RandomConfigsAreValidAndJSONRoundTrips) {
  OpGraph g = makeInceptionLikeGraph(8, 16, 8, 2);
  std::mt19937_64 rng(7);
  Strategy s = singleDeviceStrategy(g);
  for (int i = 0; i < 200; ++i) {
    int32_t n = static_cast<int32_t>(rng() % g.nodes.size());
    s.configs[n] = randomConfig(g.nodes[n], 16, rng);
    ASSERT_EQ(validateConfig(g.nodes[n], s.configs[n], 16), "");
  }
  for (size_t n = 0; n < g.nodes.size(); n += 3)
    s.configs[n].recompute = !splitsReduction(g.nodes[n], s.configs[n].degrees);
  std::string text = writeStrategyJSON(g, s);
  EXPECT_NE(text.find("\"recompute\": true"), std::string::npos);
  auto back = readStrategyJSON(text, g, 16);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_TRUE(*back == s);
  EXPECT_EQ(writeStrategyJSON(g, *back), text);
  auto tooSmall = readStrategyJSON(text, g, 1);
  if (tooSmall)
    ADD_FAILURE() << "16-device strategy accepted for 1 device";
  else
    llvm::consumeError(tooSmall.takeError());
  auto unknown = readStrategyJSON(
      R"({"nodes":[{"name":"nope","degrees":[1],"devices":[0]}]})", g);
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("no node named 'nope'"),
            std::string::npos);
  auto notBool = readStrategyJSON(
      R"({"nodes":[{"name":"nope","degrees":[1],"devices":[0],)"
      R"("recompute":1}]})",
      g);
  ASSERT_FALSE(static_cast<bool>(notBool));
  EXPECT_NE(llvm::toString(notBool.takeError()).find("recompute"),
            std::string::npos);
}
