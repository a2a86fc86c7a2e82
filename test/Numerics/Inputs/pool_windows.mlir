// Poolings whose input gradients take each shape of the window reduction
// in the training step (lib/Transforms/PoolGradient.cpp), on a scaled
// 2x3x9x9 input: a 3x3 / 2 max pooling (overlapping windows, the input
// padded to whole 2x2 blocks), a 3x3 / 1 max pooling, a 2x3 sum pooling
// with strides 3x2 (a window shorter than its stride: rows between windows
// get nothing), a 4x4 / 4 sum pooling (the last row and column in no
// window), a global 9x9 sum pooling (one window: read directly) and a 9x7
// sum pooling (3 windows across, fewer than the 7 that can hold a column:
// the windows themselves, masked).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @pool_windows(%x: tensor<2x3x9x9xf32>, %s: tensor<3xf32> {soap.parameter})
    -> (tensor<2x3x4x4xf32>, tensor<2x3x7x7xf32>, tensor<2x3x3x4xf32>,
        tensor<2x3x2x2xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<2x3x9x9xf32>
  %xs = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<2x3x9x9xf32>, tensor<3xf32>) outs(%e : tensor<2x3x9x9xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3x9x9xf32> loc("scale")
  %win3 = tensor.empty() : tensor<3x3xf32>
  %e1 = tensor.empty() : tensor<2x3x4x4xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %p1 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%xs, %win3 : tensor<2x3x9x9xf32>, tensor<3x3xf32>) outs(%f1 : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> loc("max3s2")
  %e2 = tensor.empty() : tensor<2x3x7x7xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32>
  %p2 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win3 : tensor<2x3x9x9xf32>, tensor<3x3xf32>) outs(%f2 : tensor<2x3x7x7xf32>) -> tensor<2x3x7x7xf32> loc("max3s1")
  %win23 = tensor.empty() : tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<2x3x3x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %p3 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<[3, 2]> : vector<2xi64>}
      ins(%xs, %win23 : tensor<2x3x9x9xf32>, tensor<2x3xf32>) outs(%f3 : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32> loc("sum23s32")
  %win4 = tensor.empty() : tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<2x3x2x2xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %p4 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<4> : vector<2xi64>}
      ins(%xs, %win4 : tensor<2x3x9x9xf32>, tensor<4x4xf32>) outs(%f4 : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32> loc("sum4s4")
  %win9 = tensor.empty() : tensor<9x9xf32>
  %e5 = tensor.empty() : tensor<2x3x1x1xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %p5 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win9 : tensor<2x3x9x9xf32>, tensor<9x9xf32>) outs(%f5 : tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32> loc("global")
  %win97 = tensor.empty() : tensor<9x7xf32>
  %e6 = tensor.empty() : tensor<2x3x1x3xf32>
  %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x3x1x3xf32>) -> tensor<2x3x1x3xf32>
  %p6 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win97 : tensor<2x3x9x9xf32>, tensor<9x7xf32>) outs(%f6 : tensor<2x3x1x3xf32>) -> tensor<2x3x1x3xf32> loc("sum97")
  return %p1, %p2, %p3, %p4, %p5, %p6 : tensor<2x3x4x4xf32>, tensor<2x3x7x7xf32>, tensor<2x3x3x4xf32>, tensor<2x3x2x2xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x3xf32>
}
