// An activation read by three projections (attention's q, k and v) whose
// sum is the output. Under shared_projections_megatron.json the first
// matmul splits its reduction (its sums all-reduced, y whole on each
// device) and the projections their output columns on the same devices.
#rows = affine_map<(i, j) -> (i, j)>
func.func @shared_projections(%x: tensor<8x16xf32>, %w0: tensor<16x16xf32> {soap.parameter}, %wq: tensor<16x8xf32> {soap.parameter}, %wk: tensor<16x8xf32> {soap.parameter}, %wv: tensor<16x8xf32> {soap.parameter}) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x16xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%x, %w0 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = linalg.matmul ins(%y, %wq : tensor<8x16xf32>, tensor<16x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = linalg.matmul ins(%y, %wk : tensor<8x16xf32>, tensor<16x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %v = linalg.matmul ins(%y, %wv : tensor<8x16xf32>, tensor<16x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.generic {indexing_maps = [#rows, #rows, #rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%q, %k, %v : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %t = arith.addf %a, %b : f32
    %u = arith.addf %t, %c : f32
    linalg.yield %u : f32
  } -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}
