#include "soap/Simulator/GraphBuilder.h"
#include "soap/Simulator/OpGraphJSON.h"

#include <gtest/gtest.h>

using namespace soap;

static std::string errorOf(llvm::StringRef text) {
  auto g = readOpGraphJSON(text);
  if (g)
    return "";
  return llvm::toString(g.takeError());
}

TEST(OpGraphJSON, RoundTripSyntheticGraphs) {
  for (const OpGraph &g :
       {makeMLPGraph(64, {128, 256, 10}), makeInceptionLikeGraph(8, 16, 8, 2),
        makeRNNLikeGraph(4, 32, 3)}) {
    ASSERT_EQ(g.validate(), "");
    std::string text = writeOpGraphJSON(g);
    auto back = readOpGraphJSON(text);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(writeOpGraphJSON(*back), text);
    ASSERT_EQ(back->nodes.size(), g.nodes.size());
    ASSERT_EQ(back->tensors.size(), g.tensors.size());
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      EXPECT_EQ(back->nodes[n].name, g.nodes[n].name);
      EXPECT_EQ(back->nodes[n].extents, g.nodes[n].extents);
      EXPECT_EQ(back->nodes[n].loopKinds, g.nodes[n].loopKinds);
      EXPECT_EQ(back->nodes[n].flops, g.nodes[n].flops);
      EXPECT_EQ(back->nodes[n].contraction, g.nodes[n].contraction);
      EXPECT_EQ(back->nodes[n].inputs.size(), g.nodes[n].inputs.size());
    }
  }
}

TEST(OpGraphJSON, ExactDoublesAndConvAccess) {
  OpGraph g = makeInceptionLikeGraph(2, 4, 6, 1);
  g.nodes[0].flops = 0.1 + 0.2; // not representable in short decimal
  auto back = readOpGraphJSON(writeOpGraphJSON(g));
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(back->nodes[0].flops, 0.1 + 0.2);
  EXPECT_EQ(back->nodes[0].savedBytes, 0);
  g.nodes[0].savedBytes = 4096; // a fused pre-activation
  back = readOpGraphJSON(writeOpGraphJSON(g));
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(back->nodes[0].savedBytes, 4096);
  const DimAccess &h = back->nodes[0].inputs[0].dims[2];
  ASSERT_EQ(h.terms.size(), 2u);
  EXPECT_EQ(h.terms[0].loop, 2);
  EXPECT_EQ(h.constant, -1);
}

TEST(OpGraphJSON, Errors) {
  EXPECT_NE(errorOf("not json").find("invalid JSON"), std::string::npos);
  EXPECT_NE(errorOf("[1]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(errorOf(R"({"tensors":[],"nodes":[]})")
                .find("missing field 'name'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"name":"g","tensors":[],"nodes":[],"extra":1})")
                .find("unknown key 'extra'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"name":"g","tensors":[{"name":"t","shape":"x",
                "element_bytes":4,"producer":-1}],"nodes":[]})")
                .find("tensors[0].shape: expected an array, got a string"),
            std::string::npos);
  std::string base =
      R"({"name":"g","tensors":[{"name":"t","shape":[4],"element_bytes":4,
      "producer":-1},{"name":"u","shape":[4],"element_bytes":4,"producer":0}],
      "nodes":[{"name":"n","kind":"k","extents":[4],"loops":"S",
      "inputs":[{"tensor":0,"dims":[{"terms":[[0,1]]}]}],
      "outputs":[{"tensor":1,"dims":[{"terms":[[0,1]]}]}]}]})";
  EXPECT_EQ(errorOf(base), "");
  std::string missing = base;
  missing.replace(missing.find(R"("tensor":0,)"), 11, "");
  EXPECT_NE(errorOf(missing).find("nodes[0].inputs[0]: missing field 'tensor'"),
            std::string::npos)
      << errorOf(missing);
  std::string badLoop = base;
  badLoop.replace(badLoop.find(R"("loops":"S")"), 11, R"("loops":"X")");
  EXPECT_NE(errorOf(badLoop).find("unknown loop kind 'X'"), std::string::npos);
  std::string saved = base;
  saved.replace(saved.find(R"("loops":"S")"), 11,
                R"("loops":"S","saved_bytes":-4)");
  EXPECT_NE(errorOf(saved).find("invalid: node 'n' has negative saved bytes"),
            std::string::npos)
      << errorOf(saved);
  std::string invalid = base;
  invalid.replace(invalid.find("[[0,1]]"), 7, "[[3,1]]");
  EXPECT_NE(errorOf(invalid).find("invalid: node 'n' indexes tensor 't' with "
                                  "loop #3 out of range"),
            std::string::npos)
      << errorOf(invalid);
  // An input read only where loop 0 is 2: kept through a round trip; a
  // condition on a loop the node lacks, on an output or not a pair fails.
  auto replaced = [](std::string text, const std::string &from,
                     const std::string &to, bool last = false) {
    size_t at = last ? text.rfind(from) : text.find(from);
    return at == std::string::npos ? std::string()
                                   : text.replace(at, from.size(), to);
  };
  std::string onlyAt =
      replaced(base, R"("dims":[{"terms":[[0,1]]}]}],)",
               R"("dims":[{"terms":[[0,1]]}],"only_at":[[0,2]]}],)");
  auto guarded = readOpGraphJSON(onlyAt);
  ASSERT_TRUE(static_cast<bool>(guarded))
      << llvm::toString(guarded.takeError());
  ASSERT_EQ(guarded->nodes[0].inputs[0].onlyAt.size(), 1u);
  EXPECT_EQ(guarded->nodes[0].inputs[0].onlyAt[0].loop, 0);
  EXPECT_EQ(guarded->nodes[0].inputs[0].onlyAt[0].index, 2);
  EXPECT_NE(writeOpGraphJSON(*guarded).find("\"only_at\""), std::string::npos);
  std::string farLoop = replaced(onlyAt, "[[0,2]]", "[[1,2]]");
  EXPECT_NE(errorOf(farLoop).find("node 'n' reads tensor 't' only at loop #1, "
                                  "out of range"),
            std::string::npos)
      << errorOf(farLoop);
  std::string notPair = replaced(onlyAt, "[[0,2]]", "[[0]]");
  EXPECT_NE(errorOf(notPair).find("only_at[0]: expected a pair [loop, index]"),
            std::string::npos)
      << errorOf(notPair);
  std::string onOutput =
      replaced(base, R"([{"terms":[[0,1]]}]}]}]})",
               R"([{"terms":[[0,1]]}],"only_at":[[0,1]]}]}]})", /*last=*/true);
  EXPECT_NE(errorOf(onOutput).find("only at loop #0, but it writes it"),
            std::string::npos)
      << errorOf(onOutput);
  std::string onScalar =
      replaced(replaced(base, R"("shape":[4],"element_bytes":4,
      "producer":-1})",
                        R"("shape":[],"element_bytes":4,
      "producer":-1})"),
               R"("inputs":[{"tensor":0,"dims":[{"terms":[[0,1]]}]}],)",
               R"("inputs":[{"tensor":0,"dims":[],"only_at":[[0,1]]}],)");
  EXPECT_NE(errorOf(onScalar).find("only at loop #0, but it is a scalar"),
            std::string::npos)
      << errorOf(onScalar);
}
