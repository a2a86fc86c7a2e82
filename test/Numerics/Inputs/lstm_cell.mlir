// Two steps of an LSTM cell as the zoo's RNNs write it (batch 4, input 8,
// hidden 16): gates = x W + h U + b stacked as 4x4x16, one elementwise op
// with two results (h, c) reading the gates at constant indices, sigmoid as
// 1 / (1 + exp(-x)), tanh. Returns h2 and c2.
#g0 = affine_map<(d0, d1) -> (d0, 0, d1)>
#g1 = affine_map<(d0, d1) -> (d0, 1, d1)>
#g2 = affine_map<(d0, d1) -> (d0, 2, d1)>
#g3 = affine_map<(d0, d1) -> (d0, 3, d1)>
#b0 = affine_map<(d0, d1) -> (0, d1)>
#b1 = affine_map<(d0, d1) -> (1, d1)>
#b2 = affine_map<(d0, d1) -> (2, d1)>
#b3 = affine_map<(d0, d1) -> (3, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @lstm_cell(%x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>,
                     %h0: tensor<4x16xf32>, %c0: tensor<4x16xf32>,
                     %w: tensor<8x64xf32> {soap.parameter},
                     %u: tensor<16x64xf32> {soap.parameter},
                     %bias: tensor<4x16xf32> {soap.parameter})
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e64 = tensor.empty() : tensor<4x64xf32>
  %f64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %e16 = tensor.empty() : tensor<4x16xf32>
  // Step 1.
  %xw1 = linalg.matmul ins(%x1, %w : tensor<4x8xf32>, tensor<8x64xf32>) outs(%f64 : tensor<4x64xf32>) -> tensor<4x64xf32> loc("t1.xw")
  %g1 = linalg.matmul ins(%h0, %u : tensor<4x16xf32>, tensor<16x64xf32>) outs(%xw1 : tensor<4x64xf32>) -> tensor<4x64xf32> loc("t1.hu")
  %s1 = tensor.expand_shape %g1 [[0], [1, 2]] output_shape [4, 4, 16] : tensor<4x64xf32> into tensor<4x4x16xf32>
  %h1, %c1 = linalg.generic {indexing_maps = [#g0, #g1, #g2, #g3, #b0, #b1, #b2, #b3, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s1, %s1, %s1, %s1, %bias, %bias, %bias, %bias, %c0 : tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
      outs(%e16, %e16 : tensor<4x16xf32>, tensor<4x16xf32>) {
  ^bb0(%i: f32, %f: f32, %g: f32, %o: f32, %bi: f32, %bf: f32, %bg: f32, %bo: f32, %c: f32, %oh: f32, %oc: f32):
    %ia = arith.addf %i, %bi : f32
    %in = arith.negf %ia : f32
    %ie = math.exp %in : f32
    %id1 = arith.addf %ie, %one : f32
    %is = arith.divf %one, %id1 : f32
    %fa = arith.addf %f, %bf : f32
    %fn = arith.negf %fa : f32
    %fe = math.exp %fn : f32
    %fd = arith.addf %fe, %one : f32
    %fs = arith.divf %one, %fd : f32
    %ga = arith.addf %g, %bg : f32
    %gt = math.tanh %ga : f32
    %oa = arith.addf %o, %bo : f32
    %on = arith.negf %oa : f32
    %oe = math.exp %on : f32
    %od = arith.addf %oe, %one : f32
    %os = arith.divf %one, %od : f32
    %fc = arith.mulf %fs, %c : f32
    %ig = arith.mulf %is, %gt : f32
    %cn = arith.addf %fc, %ig : f32
    %ct = math.tanh %cn : f32
    %hn = arith.mulf %os, %ct : f32
    linalg.yield %hn, %cn : f32, f32
  } -> (tensor<4x16xf32>, tensor<4x16xf32>) loc("t1.cell")
  // Step 2.
  %xw2 = linalg.matmul ins(%x2, %w : tensor<4x8xf32>, tensor<8x64xf32>) outs(%f64 : tensor<4x64xf32>) -> tensor<4x64xf32> loc("t2.xw")
  %g2 = linalg.matmul ins(%h1, %u : tensor<4x16xf32>, tensor<16x64xf32>) outs(%xw2 : tensor<4x64xf32>) -> tensor<4x64xf32> loc("t2.hu")
  %s2 = tensor.expand_shape %g2 [[0], [1, 2]] output_shape [4, 4, 16] : tensor<4x64xf32> into tensor<4x4x16xf32>
  %h2, %c2 = linalg.generic {indexing_maps = [#g0, #g1, #g2, #g3, #b0, #b1, #b2, #b3, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s2, %s2, %s2, %s2, %bias, %bias, %bias, %bias, %c1 : tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
      outs(%e16, %e16 : tensor<4x16xf32>, tensor<4x16xf32>) {
  ^bb0(%i: f32, %f: f32, %g: f32, %o: f32, %bi: f32, %bf: f32, %bg: f32, %bo: f32, %c: f32, %oh: f32, %oc: f32):
    %ia = arith.addf %i, %bi : f32
    %in = arith.negf %ia : f32
    %ie = math.exp %in : f32
    %id1 = arith.addf %ie, %one : f32
    %is = arith.divf %one, %id1 : f32
    %fa = arith.addf %f, %bf : f32
    %fn = arith.negf %fa : f32
    %fe = math.exp %fn : f32
    %fd = arith.addf %fe, %one : f32
    %fs = arith.divf %one, %fd : f32
    %ga = arith.addf %g, %bg : f32
    %gt = math.tanh %ga : f32
    %oa = arith.addf %o, %bo : f32
    %on = arith.negf %oa : f32
    %oe = math.exp %on : f32
    %od = arith.addf %oe, %one : f32
    %os = arith.divf %one, %od : f32
    %fc = arith.mulf %fs, %c : f32
    %ig = arith.mulf %is, %gt : f32
    %cn = arith.addf %fc, %ig : f32
    %ct = math.tanh %cn : f32
    %hn = arith.mulf %os, %ct : f32
    linalg.yield %hn, %cn : f32, f32
  } -> (tensor<4x16xf32>, tensor<4x16xf32>) loc("t2.cell")
  return %h2, %c2 : tensor<4x16xf32>, tensor<4x16xf32>
}
