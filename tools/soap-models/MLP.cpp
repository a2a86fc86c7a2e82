//===- MLP.cpp - A wide multi-layer perceptron ----------------------------===//
//
// mlp: input [B, 2048] -> fc1 8192 -> relu -> fc2 8192 -> relu -> fc3 8192
// -> relu -> fc4 1000 (logits). Every layer is linalg.matmul with a [in, out]
// weight plus a bias; 159,212,520 parameters.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace soapmodels;

OwningOpRef<ModuleOp> soapmodels::buildMLP(MLIRContext *ctx, int64_t batch) {
  ModelBuilder mb(ctx, "mlp", batch);
  Value x = mb.input({batch, 2048}, mb.f32(), "input");
  const int64_t widths[] = {8192, 8192, 8192};
  int layer = 1;
  for (int64_t width : widths) {
    std::string name = "fc" + std::to_string(layer++);
    x = mb.linear(x, width, name);
    x = mb.relu(x, name + ".relu");
  }
  x = mb.linear(x, 1000, "fc" + std::to_string(layer));
  return mb.finish({x});
}
