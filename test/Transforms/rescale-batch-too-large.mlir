// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-rescale-batch=batch=4611686018427387904

// A batch whose tensors would not fit in 2^52 elements (the shapes
// overflowed 64 bits, and the model then had no parameters and took no
// memory). The first value found is the argument: reported at the function.
// expected-error @below {{cannot rescale the batch: a dimension of 'tensor<8x16xf32>' would exceed 2^52 at batch 4611686018427387904}}
func.func @huge(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {soap.parameter}) -> tensor<8x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
