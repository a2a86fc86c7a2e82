// A model that returns its loss as a rank-0 tensor: a linear layer, a
// scale by a rank-0 parameter (read through the map (d0, d1) -> (), so its
// gradient sums over every loop), a squared-error reduction to one
// element, and the mean as an elementwise op with no loops at all. On the
// CUDA target the last two leave no parallel loop: one-thread kernels.
#x = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#none = affine_map<() -> ()>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @scalar_loss(%in: tensor<4x8xf32>, %target: tensor<4x3xf32>,
                       %w: tensor<8x3xf32> {soap.parameter},
                       %s: tensor<f32> {soap.parameter}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e43 = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %mm = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%acc : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %o, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %scaled = linalg.generic {indexing_maps = [#x, #scalar, #x], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %s : tensor<4x3xf32>, tensor<f32>) outs(%e43 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x3xf32>
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [#x, #x, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%scaled, %target : tensor<4x3xf32>, tensor<4x3xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.subf %a, %t : f32
    %q = arith.mulf %d, %d : f32
    %r = arith.addf %o, %q : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %mean = linalg.generic {indexing_maps = [#none, #none], iterator_types = []}
      ins(%sse : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.constant 12.0 : f32
    %m = arith.divf %a, %n : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}
