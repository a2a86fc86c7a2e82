// Four dense layers (matmul, bias, ReLU) at batch 2048, width 128: each
// activation is 1 MiB, each weight 64 KiB (recomputation.test).
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
func.func @deep_mlp(%x: tensor<2048x128xf32>, %w0: tensor<128x128xf32> {soap.parameter}, %b0: tensor<128xf32> {soap.parameter}, %w1: tensor<128x128xf32> {soap.parameter}, %b1: tensor<128xf32> {soap.parameter}, %w2: tensor<128x128xf32> {soap.parameter}, %b2: tensor<128xf32> {soap.parameter}, %w3: tensor<128x128xf32> {soap.parameter}, %b3: tensor<128xf32> {soap.parameter}) -> tensor<2048x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048x128xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<2048x128xf32>, tensor<128x128xf32>) outs(%f0 : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %a0 = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%h0, %b0 : tensor<2048x128xf32>, tensor<128xf32>) outs(%e : tensor<2048x128xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2048x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %h1 = linalg.matmul ins(%a0, %w1 : tensor<2048x128xf32>, tensor<128x128xf32>) outs(%f1 : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %a1 = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%h1, %b1 : tensor<2048x128xf32>, tensor<128xf32>) outs(%e : tensor<2048x128xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2048x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %h2 = linalg.matmul ins(%a1, %w2 : tensor<2048x128xf32>, tensor<128x128xf32>) outs(%f2 : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %a2 = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%h2, %b2 : tensor<2048x128xf32>, tensor<128xf32>) outs(%e : tensor<2048x128xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2048x128xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %h3 = linalg.matmul ins(%a2, %w3 : tensor<2048x128xf32>, tensor<128x128xf32>) outs(%f3 : tensor<2048x128xf32>) -> tensor<2048x128xf32>
  %a3 = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%h3, %b3 : tensor<2048x128xf32>, tensor<128xf32>) outs(%e : tensor<2048x128xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2048x128xf32>
  return %a3 : tensor<2048x128xf32>
}
