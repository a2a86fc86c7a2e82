// Megatron's MLP block (the README's reduce-scatter figure):
// 4096 tokens, hidden 1024, inner 4096: a column-parallel matmul (+ bias,
// ReLU), a row-parallel one (+ bias), then a layer split by tokens.
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
func.func @megatron_mlp(%x: tensor<4096x1024xf32>, %w1: tensor<1024x4096xf32> {soap.parameter}, %b1: tensor<4096xf32> {soap.parameter}, %w2: tensor<4096x1024xf32> {soap.parameter}, %b2: tensor<1024xf32> {soap.parameter}, %w3: tensor<1024x1024xf32> {soap.parameter}) -> tensor<4096x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4096x4096xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4096x1024xf32>, tensor<1024x4096xf32>) outs(%f1 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %a = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<4096x4096xf32>, tensor<4096xf32>) outs(%e1 : tensor<4096x4096xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4096x4096xf32>
  %e2 = tensor.empty() : tensor<4096x1024xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<4096x4096xf32>, tensor<4096x1024xf32>) outs(%f2 : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  %z = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%y, %b2 : tensor<4096x1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<4096x1024xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<4096x1024xf32>
  %o = linalg.matmul ins(%z, %w3 : tensor<4096x1024xf32>, tensor<1024x1024xf32>) outs(%f2 : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  return %o : tensor<4096x1024xf32>
}
