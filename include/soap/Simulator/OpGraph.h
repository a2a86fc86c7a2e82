//===- OpGraph.h - The compact, MLIR-free operator graph --------*- C++ -*-===//
//
// The bridge between the MLIR front end (lib/Transforms extracts it from the
// IR) and the simulator / search (lib/Simulator). Plain C++: no MLIR types.
//
// A node is one partitionable operator (a linalg op together with the
// elementwise ops grouped into it). Its iteration space is a box of loops; a
// tile of the node is a sub-box. Every operand says, per tensor dimension,
// which affine combination of loops indexes it, so the region of a tensor
// that a tile reads or writes can be computed without MLIR (see Region.h).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_OPGRAPH_H
#define SOAP_SIMULATOR_OPGRAPH_H

#include "soap/Simulator/LoopKind.h"

#include <cstdint>
#include <string>
#include <vector>

namespace soap {

/// One term `coefficient * loop` of a tensor-dimension index.
struct LoopTerm {
  int32_t loop = 0;
  int64_t coefficient = 1;
};

/// How one tensor dimension is indexed by the loops of a node:
/// index = constant + sum(coefficient * loop). A dimension whose index is not
/// affine in the loops has `whole = true`: every tile touches all of it.
struct DimAccess {
  std::vector<LoopTerm> terms;
  int64_t constant = 0;
  bool whole = false;
};

/// A tensor: an SSA value of the program (activation, parameter, input).
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  int32_t elementBytes = 4;
  /// Node that writes it, or -1 for a graph input or a parameter.
  int32_t producer = -1;
  /// A weight: trained, gets a gradient that replicas must all-reduce.
  bool isParameter = false;
  /// Returned by the program.
  bool isOutput = false;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t bytes() const { return numElements() * elementBytes; }
};

/// An iteration condition `loop == index`.
struct LoopAt {
  int32_t loop = 0;
  int64_t index = 0;
  bool operator==(const LoopAt &o) const {
    return loop == o.loop && index == o.index;
  }
};

/// A use of a tensor by a node, with its per-dimension indexing.
struct Operand {
  int32_t tensor = -1;
  /// One entry per tensor dimension.
  std::vector<DimAccess> dims;
  /// The node reads the operand only at the iterations where every one of
  /// these holds (empty: at all). A tile whose loop range misses one reads
  /// nothing of it: the training step sums an input's gradient parts read
  /// at constant indices (an LSTM's four gates) as one op over the whole
  /// tensor that picks part k where the index is k (`select(index(l) ==
  /// k, part, 0)`); a tile of gates 0-1 reads parts 0 and 1 only. Inputs
  /// of rank 1 or more only.
  std::vector<LoopAt> onlyAt = {};

  /// Whether a tile whose loops range over `lo[l] <= l < hi[l]` reads the
  /// operand at all.
  bool readBy(const int64_t *lo, const int64_t *hi) const {
    for (const LoopAt &at : onlyAt)
      if (at.index < lo[at.loop] || at.index >= hi[at.loop])
        return false;
    return true;
  }
};

/// One partitionable operator.
struct Node {
  /// Stable name (the op's location or an import-assigned name).
  std::string name;
  /// Op name of the anchor op, e.g. "linalg.matmul".
  std::string kind;
  /// Loop extents and kinds of the iteration space.
  std::vector<int64_t> extents;
  std::vector<LoopKind> loopKinds;
  /// Tensors read (parameters included) and written.
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
  /// Forward work of the whole node (grouped ops included).
  double flops = 0;
  /// Bytes the forward pass reads and writes (all operands, whole node).
  double bytes = 0;
  /// Ops grouped into this node (elementwise chains), by name, anchor first.
  std::vector<std::string> groupedOps;
  /// Bytes of the values inside the node that its backward pass reads (a
  /// grouped op's data input where the op's derivative depends on it: the
  /// pre-activation of a fused ReLU). Kept from the forward to the backward
  /// pass with the outputs; a tile keeps its outputs' share of them.
  int64_t savedBytes = 0;
  /// Whether the node sums products of two operands over its reduction
  /// loops (a matmul or convolution, named or a `linalg.generic`): the cost
  /// model's Contraction class (GEMM / cuDNN rates).
  bool contraction = false;
  /// Whether the Reduction loops may be split: the partial results combine
  /// with a sum, max or min (an argmax, say, does not).
  bool reductionSplittable = true;

  int32_t numLoops() const { return static_cast<int32_t>(extents.size()); }
  /// Whether loop `l` may be split (degree > 1).
  bool canSplit(int32_t l) const {
    return reductionSplittable || loopKinds[l] != LoopKind::Reduction;
  }
};

/// The operator graph of one training step's forward pass. Nodes are in a
/// topological order; edges are the tensors between them.
struct OpGraph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;

  /// Nodes that read tensor `t`, in node order.
  std::vector<int32_t> consumers(int32_t t) const;
  /// Whether node `n` writes a graph output (which the step returns, so
  /// it is kept whatever the strategy: ParallelConfig::recompute).
  bool writesOutput(int32_t n) const;
  /// Total number of parameter elements.
  int64_t numParameters() const;
  /// Checks internal consistency (indices in range, one access per tensor
  /// dimension, loops in range, producers before consumers). Returns an empty
  /// string when valid, else a description of the first problem.
  std::string validate() const;
};

} // namespace soap

#endif // SOAP_SIMULATOR_OPGRAPH_H
