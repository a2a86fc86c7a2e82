#include "soap/Simulator/LoopKind.h"

#include <gtest/gtest.h>

using namespace soap;

TEST(LoopKind, LettersRoundTrip) {
  for (LoopKind kind : {LoopKind::Sample, LoopKind::Attribute,
                        LoopKind::Parameter, LoopKind::Reduction}) {
    LoopKind parsed;
    ASSERT_TRUE(parseLoopKindLetter(loopKindLetter(kind), parsed));
    EXPECT_EQ(parsed, kind);
  }
  LoopKind ignored;
  EXPECT_FALSE(parseLoopKindLetter('X', ignored));
  EXPECT_EQ(loopKindLetter(LoopKind::Parameter), 'P');
}
