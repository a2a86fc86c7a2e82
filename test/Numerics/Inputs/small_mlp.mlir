// A 3-layer MLP (batch 8, 32 -> 64 -> 64 -> 16) with biases and relus: the
// differential tests' smallest model.
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @small_mlp(%x: tensor<8x32xf32>,
                     %w1: tensor<32x64xf32> {soap.parameter}, %b1: tensor<64xf32> {soap.parameter},
                     %w2: tensor<64x64xf32> {soap.parameter}, %b2: tensor<64xf32> {soap.parameter},
                     %w3: tensor<64x16xf32> {soap.parameter}) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e64 = tensor.empty() : tensor<8x64xf32>
  %f64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<8x32xf32>, tensor<32x64xf32>) outs(%f64 : tensor<8x64xf32>) -> tensor<8x64xf32> loc("fc1")
  %h1 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%m1, %b1 : tensor<8x64xf32>, tensor<64xf32>) outs(%e64 : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%f64 : tensor<8x64xf32>) -> tensor<8x64xf32> loc("fc2")
  %h2 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%m2, %b2 : tensor<8x64xf32>, tensor<64xf32>) outs(%e64 : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %e16 = tensor.empty() : tensor<8x16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%h2, %w3 : tensor<8x64xf32>, tensor<64x16xf32>) outs(%f16 : tensor<8x16xf32>) -> tensor<8x16xf32> loc("fc3")
  return %y : tensor<8x16xf32>
}
