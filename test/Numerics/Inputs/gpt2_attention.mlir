// GPT-2's attention as the zoo's transformer builds it (batch 2, sequence 4,
// hidden 16, 2 heads of 8): one c_attn matmul and bias for q, k and v,
// reshaped to [B, S, 3, H, D] and sliced; [B * H, S, D] batch matmuls and a
// softmax; the heads merged back for c_proj; a residual.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gpt2_attention(%x: tensor<8x16xf32>,
    %w: tensor<16x48xf32> {soap.parameter}, %b: tensor<48xf32> {soap.parameter},
    %wo: tensor<16x16xf32> {soap.parameter}) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.353553385 : f32
  %e48 = tensor.empty() : tensor<8x48xf32>
  %f48 = linalg.fill ins(%zero : f32) outs(%e48 : tensor<8x48xf32>) -> tensor<8x48xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f48 : tensor<8x48xf32>) -> tensor<8x48xf32> loc("c_attn")
  %qkv = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<8x48xf32>, tensor<48xf32>) outs(%e48 : tensor<8x48xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<8x48xf32> loc("c_attn_bias")
  %h = tensor.expand_shape %qkv [[0, 1], [2, 3, 4]] output_shape [2, 4, 3, 2, 8] : tensor<8x48xf32> into tensor<2x4x3x2x8xf32> loc("split_heads")
  %q = tensor.extract_slice %h[0, 0, 0, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] : tensor<2x4x3x2x8xf32> to tensor<2x4x2x8xf32> loc("q")
  %k = tensor.extract_slice %h[0, 0, 1, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] : tensor<2x4x3x2x8xf32> to tensor<2x4x2x8xf32> loc("k")
  %v = tensor.extract_slice %h[0, 0, 2, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] : tensor<2x4x3x2x8xf32> to tensor<2x4x2x8xf32> loc("v")
  %et = tensor.empty() : tensor<2x2x4x8xf32>
  %ekt = tensor.empty() : tensor<2x2x8x4xf32>
  %qt = linalg.transpose ins(%q : tensor<2x4x2x8xf32>) outs(%et : tensor<2x2x4x8xf32>) permutation = [0, 2, 1, 3] loc("q_heads")
  %kt = linalg.transpose ins(%k : tensor<2x4x2x8xf32>) outs(%ekt : tensor<2x2x8x4xf32>) permutation = [0, 2, 3, 1] loc("k_heads")
  %vt = linalg.transpose ins(%v : tensor<2x4x2x8xf32>) outs(%et : tensor<2x2x4x8xf32>) permutation = [0, 2, 1, 3] loc("v_heads")
  %q3 = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<2x2x4x8xf32> into tensor<4x4x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x2x8x4xf32> into tensor<4x8x4xf32>
  %v3 = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<2x2x4x8xf32> into tensor<4x4x8xf32>
  %es = tensor.empty() : tensor<4x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<4x4x8xf32>, tensor<4x8x4xf32>) outs(%fs : tensor<4x4x4xf32>) -> tensor<4x4x4xf32> loc("scores")
  %ex = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x4x4xf32>) outs(%es : tensor<4x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sc = arith.mulf %a, %scale : f32
    %e = math.exp %sc : f32
    linalg.yield %e : f32
  } -> tensor<4x4x4xf32> loc("softmax_exp")
  %er = tensor.empty() : tensor<4x4xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.reduce ins(%ex : tensor<4x4x4xf32>) outs(%fr : tensor<4x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    } loc("softmax_sum")
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<4x4x4xf32>, tensor<4x4xf32>) outs(%es : tensor<4x4x4xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.divf %a, %t : f32
    linalg.yield %d : f32
  } -> tensor<4x4x4xf32> loc("softmax")
  %ec = tensor.empty() : tensor<4x4x8xf32>
  %fc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  %ctx = linalg.batch_matmul ins(%p, %v3 : tensor<4x4x4xf32>, tensor<4x4x8xf32>) outs(%fc : tensor<4x4x8xf32>) -> tensor<4x4x8xf32> loc("context")
  %c4 = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [2, 2, 4, 8] : tensor<4x4x8xf32> into tensor<2x2x4x8xf32>
  %em = tensor.empty() : tensor<2x4x2x8xf32>
  %cm = linalg.transpose ins(%c4 : tensor<2x2x4x8xf32>) outs(%em : tensor<2x4x2x8xf32>) permutation = [0, 2, 1, 3] loc("merge_heads")
  %cf = tensor.collapse_shape %cm [[0, 1], [2, 3]] : tensor<2x4x2x8xf32> into tensor<8x16xf32> loc("merge_heads_collapse")
  %e16 = tensor.empty() : tensor<8x16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %o = linalg.matmul ins(%cf, %wo : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f16 : tensor<8x16xf32>) -> tensor<8x16xf32> loc("c_proj")
  %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%o, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e16 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %r: f32, %out: f32):
    %t = arith.addf %a, %r : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32> loc("residual")
  return %y : tensor<8x16xf32>
}
