// A linear layer and a softmax as the named op linalg.softmax (IREE and
// newer torch-mlir exports): soap-import decomposes it into the max, exp,
// sum and divide it stands for (soap-decompose-aggregates).
func.func @named_softmax(%x: tensor<8x16xf32>, %w: tensor<16x12xf32> {soap.parameter}) -> tensor<8x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x12xf32>) outs(%acc : tensor<8x12xf32>) -> tensor<8x12xf32>
  %s0 = tensor.empty() : tensor<8x12xf32>
  %s = linalg.softmax dimension(1) ins(%y : tensor<8x12xf32>) outs(%s0 : tensor<8x12xf32>) -> tensor<8x12xf32>
  return %s : tensor<8x12xf32>
}
