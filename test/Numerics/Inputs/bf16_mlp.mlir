// A two-layer MLP in bfloat16, as a bf16 export writes it: the first layer
// (x W1^T + b1, tanh) all in bf16, its matmul's partial sums bf16 too; the
// second a mixed-precision product (bf16 operands summed into f32, JAX's
// preferred_element_type = f32). Both results returned. `sed s/bf16/f16/`
// makes the float16 model. A smooth activation: a ReLU's gradient mask
// flips where a pre-activation lies within rounding of zero, and programs
// that round their sums differently (cuBLAS once, the IR every partial
// sum) then route gradients differently, by far more than a rounding.
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#xk = affine_map<(m, n, k) -> (m, k)>
#wk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @bf16_mlp(%x: tensor<8x16xbf16>, %w1: tensor<32x16xbf16> {soap.parameter},
                    %b1: tensor<32xbf16> {soap.parameter},
                    %w2: tensor<32x24xbf16> {soap.parameter}) -> (tensor<8x32xbf16>, tensor<8x24xf32>) {
  %zero = arith.constant 0.0 : bf16
  %zero32 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<8x32xbf16>) -> tensor<8x32xbf16>
  %m1 = linalg.generic {indexing_maps = [#xk, #wk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<8x16xbf16>, tensor<32x16xbf16>) outs(%f1 : tensor<8x32xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %p = arith.mulf %a, %b : bf16
    %s = arith.addf %c, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<8x32xbf16>
  %e2 = tensor.empty() : tensor<8x32xbf16>
  %h = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<8x32xbf16>, tensor<32xbf16>) outs(%e2 : tensor<8x32xbf16>) {
  ^bb0(%in: bf16, %bb: bf16, %out: bf16):
    %s = arith.addf %in, %bb : bf16
    %r = math.tanh %s : bf16
    linalg.yield %r : bf16
  } -> tensor<8x32xbf16>
  %e3 = tensor.empty() : tensor<8x24xf32>
  %f3 = linalg.fill ins(%zero32 : f32) outs(%e3 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<8x32xbf16>, tensor<32x24xbf16>) outs(%f3 : tensor<8x24xf32>) -> tensor<8x24xf32>
  return %h, %y : tensor<8x32xbf16>, tensor<8x24xf32>
}
