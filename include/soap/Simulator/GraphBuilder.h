//===- GraphBuilder.h - Build OpGraphs in C++ (tests, benchmarks) -*- C++ -*-===//
//
// A small builder for OpGraphs with the access patterns the front end
// extracts from linalg ops (matmul, conv2d NCHW, elementwise, pooling-free
// sums), plus three synthetic models used by unit tests and the simulator
// benchmark when no graph JSON is given: an MLP, an inception-like branchy
// DAG and an unrolled RNN-like chain (weights shared across steps).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_SIMULATOR_GRAPHBUILDER_H
#define SOAP_SIMULATOR_GRAPHBUILDER_H

#include "soap/Simulator/OpGraph.h"

#include <string>
#include <vector>

namespace soap {

class GraphBuilder {
public:
  explicit GraphBuilder(std::string name) { graph.name = std::move(name); }

  /// Graph input (activation, no producer) and parameter tensors.
  int32_t input(const std::string &name, std::vector<int64_t> shape,
                int32_t elementBytes = 4);
  int32_t parameter(const std::string &name, std::vector<int64_t> shape,
                    int32_t elementBytes = 4);

  /// y[b,n] = x[b,k] * w[k,n]; loops (b:S, n:P, k:R). Returns y.
  int32_t matmul(const std::string &name, int32_t x, int32_t w);
  /// y[n,k,oh,ow] = sum_{c,r,s} x[n,c,oh*stride+r-pad,ow*stride+s-pad] *
  /// w[k,c,r,s]; loops (n:S, k:P, oh:A, ow:A, c:R, r:R, s:R).
  int32_t conv2d(const std::string &name, int32_t x, int32_t w,
                 int64_t stride = 1, int64_t pad = 0);
  /// Elementwise op over all inputs (same shape); first loop S, others A.
  /// `flopsPerElement` per output element.
  int32_t elementwise(const std::string &name, const std::string &kind,
                      std::vector<int32_t> inputs,
                      double flopsPerElement = 1.0);
  /// y[n,c] = sum_{h,w} x[n,c,h,w]; loops (n:S, c:A, h:R, w:R).
  int32_t globalPool(const std::string &name, int32_t x);
  /// y[a*b, c...] = x[a, b, c...] (tensor.collapse_shape of the first two
  /// dims); loops (a:S, b:A, c...:A), y's first dim indexed by b*d0 + d1.
  int32_t collapseLeading(const std::string &name, int32_t x);
  /// Marks a tensor as a program output.
  void markOutput(int32_t t) { graph.tensors[t].isOutput = true; }

  const OpGraph &get() const { return graph; }
  OpGraph take() { return std::move(graph); }

private:
  int32_t addTensor(const std::string &name, std::vector<int64_t> shape,
                    int32_t elementBytes, bool isParameter);
  OpGraph graph;
};

/// Dense layers `widths[0] -> widths[1] -> ...`, each matmul followed by a
/// relu node, batch `batch`.
OpGraph makeMLPGraph(int64_t batch, const std::vector<int64_t> &widths);
/// A stem conv, then `blocks` inception-like blocks of 3 parallel conv
/// branches (1x1, 3x3, 1x1->3x3) joined by a sum, then a classifier matmul.
OpGraph makeInceptionLikeGraph(int64_t batch, int64_t channels,
                               int64_t spatial, int32_t blocks);
/// An unrolled RNN: per step h = tanh(x_t W + h U) (two matmuls, one
/// elementwise node), W and U shared by all steps; a classifier at the end.
/// With `layers` > 1, layer l > 0 (nodes "l<l>.t<t>...", weights "l<l>.W")
/// takes the previous layer's h at each step as its x_t.
OpGraph makeRNNLikeGraph(int64_t batch, int64_t hidden, int32_t steps,
                         int32_t layers = 1);

} // namespace soap

#endif // SOAP_SIMULATOR_GRAPHBUILDER_H
