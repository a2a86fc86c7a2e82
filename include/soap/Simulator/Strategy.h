//===- Strategy.h - Parallelization configs and strategies ------*- C++ -*-===//
//
// A ParallelConfig gives one node a partition degree per loop and a device
// per resulting tile (tiles numbered as in Region.h); a Strategy gives every
// node of an OpGraph a config. Plain data: the simulator, the search and the
// partitioning pass all consume it.
//
// Strategy JSON: {"model": "...", "nodes": [{"name": "...",
//                  "degrees": [..], "devices": [..]}, ...]}
// with one entry per node, matched by node name; an entry may add
// "recompute": true (activation recomputation, below).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_STRATEGY_H
#define SOAP_SIMULATOR_STRATEGY_H

#include "soap/Simulator/OpGraph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace soap {

struct ParallelConfig {
  /// One degree per loop of the node; each divides the loop's extent.
  std::vector<int32_t> degrees;
  /// One device per tile (product of degrees), all distinct.
  std::vector<int32_t> devices;
  /// Activation recomputation: the node's output is not kept from the
  /// forward pass for the backward pass; its tiles compute it again, on the
  /// same devices, just before the backward pass first reads it (from the
  /// inputs, kept or themselves recomputed). Saves the output's memory
  /// between the passes for a second forward computation. Not with a split
  /// reduction loop (its partial sums would need their combining again).
  /// A node whose output the graph returns keeps it anyway: there the flag
  /// changes nothing.
  bool recompute = false;

  int32_t numTiles() const {
    int32_t n = 1;
    for (int32_t d : degrees)
      n *= d;
    return n;
  }
  bool operator==(const ParallelConfig &o) const {
    return degrees == o.degrees && devices == o.devices &&
           recompute == o.recompute;
  }
  bool operator!=(const ParallelConfig &o) const { return !(*this == o); }
};

struct Strategy {
  /// One config per node, in node order.
  std::vector<ParallelConfig> configs;

  bool operator==(const Strategy &o) const { return configs == o.configs; }
  /// Nodes whose config says ParallelConfig::recompute.
  int32_t numRecomputed() const {
    int32_t k = 0;
    for (const ParallelConfig &c : configs)
      k += c.recompute ? 1 : 0;
    return k;
  }
};

/// The config that runs the whole node on `device`.
ParallelConfig singleDeviceConfig(const Node &node, int32_t device = 0);

/// Every node on device 0.
Strategy singleDeviceStrategy(const OpGraph &graph);

/// Data parallelism: each node's first Sample loop split by the largest
/// divisor of its extent that is <= numDevices, tiles on devices 0, 1, ...;
/// a node without a Sample loop runs whole on device 0.
Strategy dataParallelStrategy(const OpGraph &graph, int32_t numDevices);

/// Whether `degrees` (one per loop of `node`, any integer range) split one
/// of its reduction loops: its tiles then hold partial results that must be
/// combined.
template <typename Degrees>
bool splitsReduction(const Node &node, const Degrees &degrees) {
  size_t l = 0;
  for (auto degree : degrees) {
    if (l < node.loopKinds.size() && degree > 1 &&
        node.loopKinds[l] == LoopKind::Reduction)
      return true;
    ++l;
  }
  return false;
}

/// Empty when `config` is valid for `node` on `numDevices` devices, else
/// the first problem (degree count, degree not dividing the extent, tile /
/// device count mismatch, device out of range, repeated device,
/// recomputation with a split reduction loop).
std::string validateConfig(const Node &node, const ParallelConfig &config,
                           int32_t numDevices);
/// Validates every config; the message names the node.
std::string validateStrategy(const OpGraph &graph, const Strategy &strategy,
                             int32_t numDevices);

/// A uniformly chosen valid config: loops visited in random order, each
/// given a random divisor of its extent that keeps the tile count <=
/// numDevices, tiles placed on random distinct devices. Deterministic for a
/// given generator state (no std distributions).
ParallelConfig randomConfig(const Node &node, int32_t numDevices,
                            std::mt19937_64 &rng);

/// JSON, stable and exact; reading matches configs to nodes by name and
/// validates against `graph` (and against numDevices when > 0).
std::string writeStrategyJSON(const OpGraph &graph, const Strategy &strategy);
llvm::Expected<Strategy> readStrategyJSON(llvm::StringRef text,
                                          const OpGraph &graph,
                                          int32_t numDevices = 0);

} // namespace soap

#endif // SOAP_SIMULATOR_STRATEGY_H
