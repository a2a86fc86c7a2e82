//===- GraphBuilder.cpp - Build OpGraphs in C++ (tests, benchmarks) -------===//

#include "soap/Simulator/GraphBuilder.h"

#include <cassert>

using namespace soap;

static DimAccess loopDim(int32_t loop, int64_t coef = 1) {
  DimAccess d;
  d.terms.push_back({loop, coef});
  return d;
}

int32_t GraphBuilder::addTensor(const std::string &name,
                                std::vector<int64_t> shape,
                                int32_t elementBytes, bool isParameter) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.elementBytes = elementBytes;
  t.isParameter = isParameter;
  graph.tensors.push_back(std::move(t));
  return static_cast<int32_t>(graph.tensors.size() - 1);
}

int32_t GraphBuilder::input(const std::string &name,
                            std::vector<int64_t> shape, int32_t elementBytes) {
  return addTensor(name, std::move(shape), elementBytes, false);
}

int32_t GraphBuilder::parameter(const std::string &name,
                                std::vector<int64_t> shape,
                                int32_t elementBytes) {
  return addTensor(name, std::move(shape), elementBytes, true);
}

int32_t GraphBuilder::matmul(const std::string &name, int32_t x, int32_t w) {
  const Tensor &tx = graph.tensors[x];
  const Tensor &tw = graph.tensors[w];
  assert(tx.shape.size() == 2 && tw.shape.size() == 2 &&
         tx.shape[1] == tw.shape[0] && "matmul shapes");
  int64_t b = tx.shape[0], k = tx.shape[1], n = tw.shape[1];
  int32_t eb = tx.elementBytes;
  int32_t y = addTensor(name + ".out", {b, n}, eb, false);
  Node node;
  node.name = name;
  node.kind = "linalg.matmul";
  node.contraction = true;
  node.extents = {b, n, k};
  node.loopKinds = {LoopKind::Sample, LoopKind::Parameter, LoopKind::Reduction};
  node.inputs.push_back({x, {loopDim(0), loopDim(2)}});
  node.inputs.push_back({w, {loopDim(2), loopDim(1)}});
  node.outputs.push_back({y, {loopDim(0), loopDim(1)}});
  node.flops = 2.0 * b * n * k;
  node.bytes = double(eb) * (b * k + k * n + b * n);
  node.groupedOps = {name};
  graph.tensors[y].producer = static_cast<int32_t>(graph.nodes.size());
  graph.nodes.push_back(std::move(node));
  return y;
}

int32_t GraphBuilder::conv2d(const std::string &name, int32_t x, int32_t w,
                             int64_t stride, int64_t pad) {
  const Tensor &tx = graph.tensors[x];
  const Tensor &tw = graph.tensors[w];
  assert(tx.shape.size() == 4 && tw.shape.size() == 4 &&
         tx.shape[1] == tw.shape[1] && "conv2d shapes");
  int64_t n = tx.shape[0], c = tx.shape[1], h = tx.shape[2], wd = tx.shape[3];
  int64_t k = tw.shape[0], r = tw.shape[2], s = tw.shape[3];
  int64_t oh = (h + 2 * pad - r) / stride + 1;
  int64_t ow = (wd + 2 * pad - s) / stride + 1;
  int32_t eb = tx.elementBytes;
  int32_t y = addTensor(name + ".out", {n, k, oh, ow}, eb, false);
  Node node;
  node.name = name;
  node.kind = "linalg.conv_2d_nchw_fchw";
  node.contraction = true;
  node.extents = {n, k, oh, ow, c, r, s};
  node.loopKinds = {LoopKind::Sample,    LoopKind::Parameter,
                    LoopKind::Attribute, LoopKind::Attribute,
                    LoopKind::Reduction, LoopKind::Reduction,
                    LoopKind::Reduction};
  DimAccess hIdx, wIdx;
  hIdx.terms = {{2, stride}, {5, 1}};
  hIdx.constant = -pad;
  wIdx.terms = {{3, stride}, {6, 1}};
  wIdx.constant = -pad;
  node.inputs.push_back({x, {loopDim(0), loopDim(4), hIdx, wIdx}});
  node.inputs.push_back(
      {w, {loopDim(1), loopDim(4), loopDim(5), loopDim(6)}});
  node.outputs.push_back(
      {y, {loopDim(0), loopDim(1), loopDim(2), loopDim(3)}});
  node.flops = 2.0 * n * k * oh * ow * c * r * s;
  node.bytes = double(eb) * (n * c * h * wd + k * c * r * s + n * k * oh * ow);
  node.groupedOps = {name};
  graph.tensors[y].producer = static_cast<int32_t>(graph.nodes.size());
  graph.nodes.push_back(std::move(node));
  return y;
}

int32_t GraphBuilder::elementwise(const std::string &name,
                                  const std::string &kind,
                                  std::vector<int32_t> inputs,
                                  double flopsPerElement) {
  assert(!inputs.empty());
  std::vector<int64_t> shape = graph.tensors[inputs[0]].shape;
  int32_t eb = graph.tensors[inputs[0]].elementBytes;
  int32_t y = addTensor(name + ".out", shape, eb, false);
  Node node;
  node.name = name;
  node.kind = kind;
  node.extents = shape;
  for (size_t d = 0; d < shape.size(); ++d)
    node.loopKinds.push_back(d == 0 ? LoopKind::Sample : LoopKind::Attribute);
  std::vector<DimAccess> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    dims.push_back(loopDim(static_cast<int32_t>(d)));
  for (int32_t in : inputs)
    node.inputs.push_back({in, dims});
  node.outputs.push_back({y, dims});
  double elems = double(graph.tensors[y].numElements());
  node.flops = flopsPerElement * elems;
  node.bytes = double(eb) * elems * double(inputs.size() + 1);
  node.groupedOps = {name};
  graph.tensors[y].producer = static_cast<int32_t>(graph.nodes.size());
  graph.nodes.push_back(std::move(node));
  return y;
}

int32_t GraphBuilder::globalPool(const std::string &name, int32_t x) {
  const Tensor &tx = graph.tensors[x];
  assert(tx.shape.size() == 4 && "globalPool expects NCHW");
  int64_t n = tx.shape[0], c = tx.shape[1], h = tx.shape[2], w = tx.shape[3];
  int32_t eb = tx.elementBytes;
  int32_t y = addTensor(name + ".out", {n, c}, eb, false);
  Node node;
  node.name = name;
  node.kind = "linalg.pooling_nchw_sum";
  node.extents = {n, c, h, w};
  node.loopKinds = {LoopKind::Sample, LoopKind::Attribute,
                    LoopKind::Reduction, LoopKind::Reduction};
  node.inputs.push_back({x, {loopDim(0), loopDim(1), loopDim(2), loopDim(3)}});
  node.outputs.push_back({y, {loopDim(0), loopDim(1)}});
  node.flops = double(n * c * h * w);
  node.bytes = double(eb) * (n * c * h * w + n * c);
  node.groupedOps = {name};
  graph.tensors[y].producer = static_cast<int32_t>(graph.nodes.size());
  graph.nodes.push_back(std::move(node));
  return y;
}

int32_t GraphBuilder::collapseLeading(const std::string &name, int32_t x) {
  const Tensor &tx = graph.tensors[x];
  assert(tx.shape.size() >= 2 && "collapseLeading expects rank >= 2");
  std::vector<int64_t> extents = tx.shape;
  int64_t inner = extents[1];
  std::vector<int64_t> shape(extents.begin() + 1, extents.end());
  shape[0] *= extents[0];
  int32_t eb = tx.elementBytes;
  int32_t rank = static_cast<int32_t>(extents.size());
  double elements = double(tx.numElements());
  int32_t y = addTensor(name + ".out", shape, eb, false); // tx dangles
  Node node;
  node.name = name;
  node.kind = "tensor.collapse_shape";
  node.extents = extents;
  node.loopKinds.assign(rank, LoopKind::Attribute);
  node.loopKinds[0] = LoopKind::Sample;
  Operand in{x, {}}, out{y, {}};
  for (int32_t l = 0; l < rank; ++l)
    in.dims.push_back(loopDim(l));
  DimAccess rows;
  rows.terms = {{0, inner}, {1, 1}};
  out.dims.push_back(rows);
  for (int32_t l = 2; l < rank; ++l)
    out.dims.push_back(loopDim(l));
  node.inputs.push_back(std::move(in));
  node.outputs.push_back(std::move(out));
  node.flops = 0;
  node.bytes = 2.0 * double(eb) * elements;
  node.groupedOps = {name};
  graph.tensors[y].producer = static_cast<int32_t>(graph.nodes.size());
  graph.nodes.push_back(std::move(node));
  return y;
}

OpGraph soap::makeMLPGraph(int64_t batch, const std::vector<int64_t> &widths) {
  GraphBuilder b("mlp");
  int32_t x = b.input("x", {batch, widths[0]});
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    std::string id = std::to_string(l);
    int32_t w = b.parameter("w" + id, {widths[l], widths[l + 1]});
    x = b.matmul("fc" + id, x, w);
    x = b.elementwise("relu" + id, "linalg.generic.relu", {x});
  }
  b.markOutput(x);
  return b.take();
}

OpGraph soap::makeInceptionLikeGraph(int64_t batch, int64_t channels,
                                     int64_t spatial, int32_t blocks) {
  GraphBuilder b("inception_like");
  int32_t x = b.input("image", {batch, 3, spatial, spatial});
  int32_t w0 = b.parameter("stem.w", {channels, 3, 3, 3});
  x = b.conv2d("stem", x, w0, 1, 1);
  x = b.elementwise("stem.relu", "linalg.generic.relu", {x});
  for (int32_t i = 0; i < blocks; ++i) {
    std::string id = "b" + std::to_string(i);
    int32_t w1 = b.parameter(id + ".1x1.w", {channels, channels, 1, 1});
    int32_t w3 = b.parameter(id + ".3x3.w", {channels, channels, 3, 3});
    int32_t wr = b.parameter(id + ".red.w", {channels / 2, channels, 1, 1});
    int32_t wd = b.parameter(id + ".dbl.w", {channels, channels / 2, 3, 3});
    int32_t a = b.conv2d(id + ".1x1", x, w1);
    int32_t c = b.conv2d(id + ".3x3", x, w3, 1, 1);
    int32_t r = b.conv2d(id + ".red", x, wr);
    r = b.elementwise(id + ".red.relu", "linalg.generic.relu", {r});
    int32_t d = b.conv2d(id + ".dbl", r, wd, 1, 1);
    x = b.elementwise(id + ".sum", "linalg.generic.add", {a, c, d}, 2.0);
    x = b.elementwise(id + ".relu", "linalg.generic.relu", {x});
  }
  int32_t fcIn = b.globalPool("pool", x);
  int32_t wfc = b.parameter("fc.w", {channels, 1000});
  int32_t logits = b.matmul("fc", fcIn, wfc);
  b.markOutput(logits);
  return b.take();
}

OpGraph soap::makeRNNLikeGraph(int64_t batch, int64_t hidden, int32_t steps,
                               int32_t layers) {
  GraphBuilder b("rnn_like");
  std::vector<int32_t> xs(steps, -1);
  for (int32_t l = 0; l < layers; ++l) {
    std::string layer = l == 0 ? "" : "l" + std::to_string(l) + ".";
    int32_t w = b.parameter(layer + "W", {hidden, hidden});
    int32_t u = b.parameter(layer + "U", {hidden, hidden});
    int32_t h = b.input(layer + "h0", {batch, hidden});
    for (int32_t t = 0; t < steps; ++t) {
      std::string id = layer + "t" + std::to_string(t);
      if (l == 0)
        xs[t] = b.input("x" + std::to_string(t), {batch, hidden});
      int32_t xw = b.matmul(id + ".xw", xs[t], w);
      int32_t hu = b.matmul(id + ".hu", h, u);
      h = b.elementwise(id + ".tanh", "linalg.generic.tanh", {xw, hu}, 3.0);
      xs[t] = h; // the next layer's input at step t
    }
  }
  int32_t wo = b.parameter("Wo", {hidden, hidden});
  int32_t y = b.matmul("out", xs.back(), wo);
  b.markOutput(y);
  return b.take();
}
