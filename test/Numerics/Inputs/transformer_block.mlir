// One transformer block (batch 2, sequence 8, hidden 16, 2 heads of 8):
// attention with batched matmuls and a softmax, a residual, a 2-layer MLP
// with a residual.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @transformer_block(%x: tensor<2x8x16xf32>,
    %wq: tensor<16x16xf32> {soap.parameter}, %wk: tensor<16x16xf32> {soap.parameter},
    %wv: tensor<16x16xf32> {soap.parameter}, %wo: tensor<16x16xf32> {soap.parameter},
    %w1: tensor<16x32xf32> {soap.parameter}, %w2: tensor<32x16xf32> {soap.parameter}) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %scale = arith.constant 0.353553385 : f32
  %xf = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
  %e16 = tensor.empty() : tensor<16x16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %q = linalg.matmul ins(%xf, %wq : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("q")
  %k = linalg.matmul ins(%xf, %wk : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("k")
  %v = linalg.matmul ins(%xf, %wv : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("v")
  // [B*S, H*D] -> [B, S, H, D] -> [B, H, S, D] -> [B*H, S, D]
  %q4 = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [2, 8, 2, 8] : tensor<16x16xf32> into tensor<2x8x2x8xf32>
  %k4 = tensor.expand_shape %k [[0, 1], [2, 3]] output_shape [2, 8, 2, 8] : tensor<16x16xf32> into tensor<2x8x2x8xf32>
  %v4 = tensor.expand_shape %v [[0, 1], [2, 3]] output_shape [2, 8, 2, 8] : tensor<16x16xf32> into tensor<2x8x2x8xf32>
  %et = tensor.empty() : tensor<2x2x8x8xf32>
  %qt = linalg.transpose ins(%q4 : tensor<2x8x2x8xf32>) outs(%et : tensor<2x2x8x8xf32>) permutation = [0, 2, 1, 3] loc("q_heads")
  %kt = linalg.transpose ins(%k4 : tensor<2x8x2x8xf32>) outs(%et : tensor<2x2x8x8xf32>) permutation = [0, 2, 3, 1] loc("k_heads")
  %vt = linalg.transpose ins(%v4 : tensor<2x8x2x8xf32>) outs(%et : tensor<2x2x8x8xf32>) permutation = [0, 2, 1, 3] loc("v_heads")
  %q3 = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<2x2x8x8xf32> into tensor<4x8x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x2x8x8xf32> into tensor<4x8x8xf32>
  %v3 = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<2x2x8x8xf32> into tensor<4x8x8xf32>
  %e3 = tensor.empty() : tensor<4x8x8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32> loc("scores")
  // Softmax over the last dimension.
  %er = tensor.empty() : tensor<4x8xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mx = linalg.reduce ins(%s : tensor<4x8x8xf32>) outs(%fm : tensor<4x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } loc("softmax_max")
  %ex = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %sc = arith.mulf %d, %scale : f32
    %e = math.exp %sc : f32
    linalg.yield %e : f32
  } -> tensor<4x8x8xf32> loc("softmax_exp")
  %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = linalg.reduce ins(%ex : tensor<4x8x8xf32>) outs(%fs : tensor<4x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } loc("softmax_sum")
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8x8xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.divf %a, %t : f32
    linalg.yield %d : f32
  } -> tensor<4x8x8xf32> loc("softmax_div")
  %ctx = linalg.batch_matmul ins(%p, %v3 : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%f3 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32> loc("context")
  %c4 = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [2, 2, 8, 8] : tensor<4x8x8xf32> into tensor<2x2x8x8xf32>
  %eb = tensor.empty() : tensor<2x8x2x8xf32>
  %cb = linalg.transpose ins(%c4 : tensor<2x2x8x8xf32>) outs(%eb : tensor<2x8x2x8xf32>) permutation = [0, 2, 1, 3] loc("merge_heads")
  %cf = tensor.collapse_shape %cb [[0, 1], [2, 3]] : tensor<2x8x2x8xf32> into tensor<16x16xf32>
  %att = linalg.matmul ins(%cf, %wo : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("attn_out")
  %h = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%att, %xf : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e16 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %e32 = tensor.empty() : tensor<16x32xf32>
  %f32 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %u = linalg.matmul ins(%h, %w1 : tensor<16x16xf32>, tensor<16x32xf32>) outs(%f32 : tensor<16x32xf32>) -> tensor<16x32xf32> loc("mlp_up")
  %ur = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%u : tensor<16x32xf32>) outs(%e32 : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<16x32xf32>
  %d = linalg.matmul ins(%ur, %w2 : tensor<16x32xf32>, tensor<32x16xf32>) outs(%f16 : tensor<16x16xf32>) -> tensor<16x16xf32> loc("mlp_down")
  %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%d, %h : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e16 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
  return %y3 : tensor<2x8x16xf32>
}
