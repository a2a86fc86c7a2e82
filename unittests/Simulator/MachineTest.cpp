#include "soap/Simulator/Machine.h"

#include <gtest/gtest.h>

using namespace soap;

static std::string errorOf(llvm::StringRef text) {
  auto m = readMachineJSON(text);
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

TEST(Machine, PresetsRoundTripAndLinks) {
  for (const std::string &name : listMachinePresets()) {
    auto m = getMachinePreset(name);
    ASSERT_TRUE(static_cast<bool>(m)) << name;
    EXPECT_EQ(m->validate(), "") << name;
    std::string text = writeMachineJSON(*m);
    auto back = readMachineJSON(text);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(writeMachineJSON(*back), text);
    // Every ordered pair has a link in range.
    for (int32_t a = 0; a < m->numDevices(); ++a)
      for (int32_t b = 0; b < m->numDevices(); ++b)
        if (a != b) {
          int32_t l = m->linkBetween(a, b);
          ASSERT_GE(l, 0);
          ASSERT_LT(l, m->numLinks());
        }
  }
  auto p100 = getMachinePreset("p100-4x4");
  EXPECT_EQ(p100->numDevices(), 16);
  // NVLink pairs are distinct; 1->2 and 2->1 differ; inter-node uses the NIC.
  EXPECT_NE(p100->linkBetween(1, 2), p100->linkBetween(2, 1));
  EXPECT_EQ(p100->linkBetween(0, 5), p100->linkBetween(1, 9)); // node 0 NIC
  EXPECT_DOUBLE_EQ(p100->linkBandwidth(p100->linkBetween(0, 5)), 12.5e9);
  auto k80 = getMachinePreset("k80-16x4");
  EXPECT_EQ(k80->numDevices(), 64);
  EXPECT_EQ(k80->linkBetween(0, 1), k80->linkBetween(2, 3)); // shared bus
  auto h100 = getMachinePreset("h100-4x8");
  EXPECT_NE(h100->linkBetween(0, 8), h100->linkBetween(1, 8)); // NIC per GPU
  EXPECT_EQ(h100->linkBetween(0, 1), h100->linkBetween(0, 2)); // egress port
  EXPECT_EQ(h100->linkName(h100->linkBetween(3, 4)), "nvswitch port gpu 3");
  EXPECT_FALSE(static_cast<bool>(getMachinePreset("tpu-v9")));
  llvm::consumeError(getMachinePreset("tpu-v9").takeError());
}

TEST(Machine, TransferTime) {
  auto m = getMachinePreset("p100-4x4");
  // 1 MB over NVLink (20 GB/s, 5 us) and over EDR (12.5 GB/s, 10 us).
  EXPECT_DOUBLE_EQ(m->transferTime(0, 1, 1e6), 5e-6 + 1e6 / 20e9);
  EXPECT_DOUBLE_EQ(m->transferTime(0, 4, 1e6), 10e-6 + 1e6 / 12.5e9);
}

TEST(Machine, JSONErrors) {
  const char *good = R"({"name":"x","nodes":2,"devices_per_node":2,
    "device":{"name":"G","fp32_flops":1e12,"tensor_flops":2e12,
              "memory_bandwidth":1e11,"memory_bytes":1000},
    "intra":{"topology":"p2p","bandwidth":1e9,"latency":1e-6},
    "inter":{"bandwidth":1e8,"latency":1e-5}})";
  EXPECT_EQ(errorOf(good), "");
  std::string s = good;
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string t = s;
    size_t pos = t.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    return errorOf(t);
  };
  EXPECT_NE(replaced(R"("fp32_flops":1e12,)", "").find(
                "device: missing field 'fp32_flops'"),
            std::string::npos);
  EXPECT_NE(replaced(R"("bandwidth":1e9)", R"("bandwidth":-1)")
                .find("intra.bandwidth"),
            std::string::npos);
  EXPECT_NE(replaced(R"("bandwidth":1e9)", R"("bandwidth":0)")
                .find("'intra.bandwidth' must be a finite number >= 1"),
            std::string::npos);
  // Rates so small that a task's time overflows to infinity, latencies
  // that are unit errors and device counts past the simulator's tables
  // are refused, not simulated.
  EXPECT_NE(replaced(R"("fp32_flops":1e12)", R"("fp32_flops":1e-300)")
                .find("'device.fp32_flops' must be a finite number >= 1"),
            std::string::npos);
  EXPECT_NE(replaced(R"("latency":1e-6)", R"("latency":2)")
                .find("'intra.latency' must be between 0 and 1 (seconds)"),
            std::string::npos);
  EXPECT_EQ(replaced(R"("nodes":2)", R"("nodes":2048)"), "");
  EXPECT_NE(replaced(R"("nodes":2)", R"("nodes":2049)")
                .find("the machine has 4098 devices ('nodes' x "
                      "'devices_per_node'); at most 4096 are supported"),
            std::string::npos);
  EXPECT_NE(replaced(R"("nodes":2)", R"("nodes":4294967296)")
                .find("nodes: must be a positive integer (at most 4096)"),
            std::string::npos);
  EXPECT_NE(replaced(R"("latency":1e-5})", R"("latency":1e-5,"mtu":4096})")
                .find("inter: unknown key 'mtu'"),
            std::string::npos);
  EXPECT_NE(replaced(R"("topology":"p2p")", R"("topology":"ring")")
                .find("unknown topology 'ring'"),
            std::string::npos);
  EXPECT_NE(replaced(R"("nodes":2)", R"("nodes":"2")")
                .find("nodes: expected an integer, got a string"),
            std::string::npos);
  EXPECT_NE(errorOf("{").find("invalid JSON"), std::string::npos);
  // "inter" is required with several nodes only (it was the other way
  // round: a single node without it was rejected, several nodes without it
  // read as bandwidth 0).
  const std::string noInter = R"(,
    "inter":{"bandwidth":1e8,"latency":1e-5})";
  EXPECT_NE(replaced(noInter, "").find("machine: missing field 'inter'"),
            std::string::npos);
  s = good;
  s.replace(s.find(noInter), noInter.size(), "");
  EXPECT_EQ(replaced(R"("nodes":2)", R"("nodes":1)"), "");
}
