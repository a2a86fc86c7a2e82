// pool_windows.mlir's poolings channels-last (linalg.pooling_nhwc_max and
// _sum, as JAX and TensorFlow export them), on a scaled 2x9x9x3 input: the
// same windows and strides (overlapping, stopping short of the stride,
// rows and columns in no window, a global pooling, fewer windows than can
// hold a column).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @pool_windows_nhwc(%x: tensor<2x9x9x3xf32>, %s: tensor<3xf32> {soap.parameter})
    -> (tensor<2x4x4x3xf32>, tensor<2x7x7x3xf32>, tensor<2x3x4x3xf32>,
        tensor<2x2x2x3xf32>, tensor<2x1x1x3xf32>, tensor<2x1x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<2x9x9x3xf32>
  %xs = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<2x9x9x3xf32>, tensor<3xf32>) outs(%e : tensor<2x9x9x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x9x9x3xf32> loc("scale")
  %win3 = tensor.empty() : tensor<3x3xf32>
  %e1 = tensor.empty() : tensor<2x4x4x3xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  %p1 = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%xs, %win3 : tensor<2x9x9x3xf32>, tensor<3x3xf32>) outs(%f1 : tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32> loc("max3s2")
  %e2 = tensor.empty() : tensor<2x7x7x3xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x7x7x3xf32>) -> tensor<2x7x7x3xf32>
  %p2 = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win3 : tensor<2x9x9x3xf32>, tensor<3x3xf32>) outs(%f2 : tensor<2x7x7x3xf32>) -> tensor<2x7x7x3xf32> loc("max3s1")
  %win23 = tensor.empty() : tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<2x3x4x3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x4x3xf32>) -> tensor<2x3x4x3xf32>
  %p3 = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<[3, 2]> : vector<2xi64>}
      ins(%xs, %win23 : tensor<2x9x9x3xf32>, tensor<2x3xf32>) outs(%f3 : tensor<2x3x4x3xf32>) -> tensor<2x3x4x3xf32> loc("sum23s32")
  %win4 = tensor.empty() : tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<2x2x2x3xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %p4 = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<4> : vector<2xi64>}
      ins(%xs, %win4 : tensor<2x9x9x3xf32>, tensor<4x4xf32>) outs(%f4 : tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32> loc("sum4s4")
  %win9 = tensor.empty() : tensor<9x9xf32>
  %e5 = tensor.empty() : tensor<2x1x1x3xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<2x1x1x3xf32>) -> tensor<2x1x1x3xf32>
  %p5 = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win9 : tensor<2x9x9x3xf32>, tensor<9x9xf32>) outs(%f5 : tensor<2x1x1x3xf32>) -> tensor<2x1x1x3xf32> loc("global")
  %win97 = tensor.empty() : tensor<9x7xf32>
  %e6 = tensor.empty() : tensor<2x1x3x3xf32>
  %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x1x3x3xf32>) -> tensor<2x1x3x3xf32>
  %p6 = linalg.pooling_nhwc_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win97 : tensor<2x9x9x3xf32>, tensor<9x7xf32>) outs(%f6 : tensor<2x1x3x3xf32>) -> tensor<2x1x3x3xf32> loc("sum97")
  return %p1, %p2, %p3, %p4, %p5, %p6 : tensor<2x4x4x3xf32>, tensor<2x7x7x3xf32>, tensor<2x3x4x3xf32>, tensor<2x2x2x3xf32>, tensor<2x1x1x3xf32>, tensor<2x1x3x3xf32>
}
