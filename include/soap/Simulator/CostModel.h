//===- CostModel.h - Time of compute tasks ----------------------*- C++ -*-===//
//
// The time of one tile's forward and backward compute task. A profile table
// measured on a real GPU answers first (keyed by op kind, tile loop extents,
// element bytes and device name); otherwise an analytic estimate:
//
//   time = max(flops / (peak * computeEfficiency),
//              bytes / (memoryBandwidth * memoryEfficiency)) + launchOverhead
//
// with `peak` the tensor-core rate for <= 2-byte elements (a contraction's
// operands: bf16 products summed into f32 too) and the fp32 rate
// otherwise, and the efficiencies of the op's class from ONE table
// (opClassEfficiency()).
//
// Backward work is derived from what the backward pass really computes: one
// product (or elementwise pass) per input that needs a gradient. For a
// matmul/conv with an activation input and a weight that is two products of
// the forward's size (grad input and grad weight); for the first layer,
// whose input is data, only the weight gradient (one); an elementwise op
// reads the output gradient and writes one gradient per differentiable
// input; an op with no differentiable input has no backward task work.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_COSTMODEL_H
#define SOAP_SIMULATOR_COSTMODEL_H

#include "soap/Simulator/Machine.h"
#include "soap/Simulator/OpGraph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace soap {

/// Cost classes of ops.
enum class OpClass : uint8_t {
  /// Products summed over reduction loops (Node::contraction): compute-bound.
  Contraction,
  /// Other ops with a reduction loop (pooling, sums, softmax statistics).
  Reduction,
  /// Ops without reduction loops (activations, adds, copies).
  Elementwise,
  /// Parameter update (SGD step) and partial-sum combination.
  Update,
};

const char *opClassName(OpClass c);
/// Class of a node: Node::contraction, else by its loops.
OpClass classifyNode(const Node &node);

struct Efficiency {
  double compute; ///< fraction of peak FLOP/s reached
  double memory;  ///< fraction of peak memory bandwidth reached
};
/// THE table of efficiency factors, one row per OpClass.
Efficiency opClassEfficiency(OpClass c);

/// Measured times, one entry per (kind, tile extents, element bytes, device).
struct ProfileEntry {
  std::string kind;
  std::vector<int64_t> extents;
  int32_t elementBytes = 4;
  std::string device;
  double forwardSeconds = 0;
  double backwardSeconds = 0;
};

class ProfileTable {
public:
  void add(ProfileEntry entry);
  /// Null when absent. No allocation.
  const ProfileEntry *find(llvm::StringRef kind, const int64_t *extents,
                           int32_t rank, int32_t elementBytes,
                           llvm::StringRef device) const;
  size_t size() const { return entries.size(); }
  const std::vector<ProfileEntry> &all() const { return entries; }

private:
  std::vector<ProfileEntry> entries;
  std::unordered_multimap<uint64_t, size_t> byKey;
};

/// JSON: {"entries": [{"kind", "extents": [..], "element_bytes", "device",
///         "forward_us", "backward_us"}]}; times in microseconds.
llvm::Expected<ProfileTable> readProfileTableJSON(llvm::StringRef text);
std::string writeProfileTableJSON(const ProfileTable &table);
/// Reads a file; a missing or unreadable file is an error naming the path.
llvm::Expected<ProfileTable> loadProfileTable(llvm::StringRef path);

struct TaskCosts {
  double forward = 0;
  double backward = 0;
};

class CostModel {
public:
  explicit CostModel(const Machine &machine,
                     const ProfileTable *profile = nullptr)
      : machine(machine), profile(profile) {}

  /// Analytic time of `flops` and `bytes` of work of class `c` whose
  /// elements have `elementBytes` bytes, plus the launch overhead.
  double analyticTime(OpClass c, double flops, double bytes,
                      int32_t elementBytes) const;

  /// The element bytes that decide a node's peak rate (and key its profile
  /// entries): a contraction's two operands' wider one (bf16 or f16
  /// operands summed into f32 run on tensor cores, cuBLAS's mixed-precision
  /// GEMM; an f32 operand times a bf16 one does not), any other node's
  /// output's.
  static int32_t computeElementBytes(const OpGraph &graph, const Node &node,
                                     OpClass c);

  /// Number of inputs of `node` that need a gradient (parameters and
  /// tensors produced by another node).
  static int32_t numGradientInputs(const OpGraph &graph, const Node &node);

  /// Forward and backward time of one tile of `node` whose loop extents are
  /// `tileExtents` (rank = node loops), doing `tileFlops` and moving
  /// `tileBytes` in the forward pass.
  TaskCosts tileCosts(const OpGraph &graph, const Node &node,
                      const int64_t *tileExtents, double tileFlops,
                      double tileBytes) const;

  /// SGD update of `bytes` of parameters (read w and g, write w).
  double updateTime(double bytes, int32_t elementBytes) const;
  /// Summing `parts` partial sums of `bytes` each into one.
  double combineTime(double bytes, int32_t parts, int32_t elementBytes) const;

  const Machine &getMachine() const { return machine; }

private:
  const Machine &machine;
  const ProfileTable *profile;
};

} // namespace soap

#endif // SOAP_SIMULATOR_COSTMODEL_H
