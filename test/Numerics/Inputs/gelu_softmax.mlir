// A linear layer, GELU through math.erf, a normalization through
// math.powf (x^2 and (var + eps)^-0.5) and a softmax whose max reduction
// also computes the argmax nobody reads, as torch-mlir exports them (BERT).
#x = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#mm_a = affine_map<(d0, d1, d2) -> (d0, d2)>
#mm_b = affine_map<(d0, d1, d2) -> (d2, d1)>
#mm_c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gelu_softmax(%in: tensor<4x8xf32>, %w: tensor<8x6xf32> {soap.parameter},
                        %b: tensor<6xf32> {soap.parameter}) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e46 = tensor.empty() : tensor<4x6xf32>
  %e41 = tensor.empty() : tensor<4x1xf32>
  %e41i = tensor.empty() : tensor<4x1xi64>
  %acc = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%in, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%acc : tensor<4x6xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %p = arith.mulf %a, %bb : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  // GELU(h) = h / 2 * (1 + erf(h / sqrt(2))).
  %gelu = linalg.generic {indexing_maps = [#x, #col, #x], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x6xf32>, tensor<6xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%h0: f32, %bias: f32, %o: f32):
    %h = arith.addf %h0, %bias : f32
    %rs2 = arith.constant 0.707106769 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %t = arith.mulf %h, %rs2 : f32
    %erf = math.erf %t : f32
    %u = arith.addf %erf, %one : f32
    %v = arith.mulf %h, %half : f32
    %g = arith.mulf %v, %u : f32
    linalg.yield %g : f32
  } -> tensor<4x6xf32>
  // Row mean and variance ((g - mean)^2 through powf), then the normalized
  // value (g - mean) * (var + eps)^-0.5.
  %fill41 = linalg.fill ins(%zero : f32) outs(%e41 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%gelu : tensor<4x6xf32>) outs(%fill41 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %centered = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%gelu, %sum : tensor<4x6xf32>, tensor<4x1xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %n = arith.constant 6.0 : f32
    %m = arith.divf %s, %n : f32
    %c = arith.subf %a, %m : f32
    linalg.yield %c : f32
  } -> tensor<4x6xf32>
  %sq = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%centered : tensor<4x6xf32>) outs(%fill41 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %p = math.powf %a, %two : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %norm = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq : tensor<4x6xf32>, tensor<4x1xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%c: f32, %s: f32, %o: f32):
    %n = arith.constant 6.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mh = arith.constant -0.5 : f32
    %var = arith.divf %s, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.powf %ve, %mh : f32
    %y = arith.mulf %c, %r : f32
    linalg.yield %y : f32
  } -> tensor<4x6xf32>
  // Softmax, its max with the argmax torch.max(dim) computes.
  %zi = arith.constant 0 : i64
  %mfill = linalg.fill ins(%ninf : f32) outs(%e41 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %ifill = linalg.fill ins(%zi : i64) outs(%e41i : tensor<4x1xi64>) -> tensor<4x1xi64>
  %max:2 = linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%norm : tensor<4x6xf32>) outs(%mfill, %ifill : tensor<4x1xf32>, tensor<4x1xi64>) {
  ^bb0(%a: f32, %o: f32, %oi: i64):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %a, %o : f32
    %gt = arith.cmpf ogt, %a, %o : f32
    %sel = arith.select %gt, %ii, %oi : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<4x1xf32>, tensor<4x1xi64>)
  %exp = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%norm, %max#0 : tensor<4x6xf32>, tensor<4x1xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x6xf32>
  %den = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x6xf32>) outs(%fill41 : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %soft = linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %den : tensor<4x6xf32>, tensor<4x1xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %q = arith.divf %a, %d : f32
    linalg.yield %q : f32
  } -> tensor<4x6xf32>
  return %soft : tensor<4x6xf32>
}
