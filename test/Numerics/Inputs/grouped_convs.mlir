// Convolutions of MobileNet and ResNeXt as torch-mlir exports them (batch
// 2, 4x9x9 images): a padded 3x3 / 2 depthwise convolution
// (linalg.depthwise_conv_2d_nchw_chw) + relu, a 1x1 pointwise convolution,
// and a 3x3 / 1 convolution of 2 groups (the channels expanded to groups
// and back around linalg.conv_2d_ngchw_gfchw).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @grouped_convs(%x: tensor<2x4x9x9xf32>,
                         %dw: tensor<4x3x3xf32> {soap.parameter},
                         %pw: tensor<8x4x1x1xf32> {soap.parameter},
                         %gw: tensor<2x6x4x3x3xf32> {soap.parameter})
    -> tensor<2x12x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x9x9xf32> to tensor<2x4x11x11xf32>
  %e1 = tensor.empty() : tensor<2x4x5x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %c1 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p, %dw : tensor<2x4x11x11xf32>, tensor<4x3x3xf32>) outs(%f1 : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32> loc("depthwise")
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x4x5x5xf32>) outs(%e1 : tensor<2x4x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4x5x5xf32>
  %e2 = tensor.empty() : tensor<2x8x5x5xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%r1, %pw : tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) outs(%f2 : tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32> loc("pointwise")
  %g = tensor.expand_shape %c2 [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 5, 5] : tensor<2x8x5x5xf32> into tensor<2x2x4x5x5xf32>
  %e3 = tensor.empty() : tensor<2x2x6x3x3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x2x6x3x3xf32>) -> tensor<2x2x6x3x3xf32>
  %c3 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%g, %gw : tensor<2x2x4x5x5xf32>, tensor<2x6x4x3x3xf32>) outs(%f3 : tensor<2x2x6x3x3xf32>) -> tensor<2x2x6x3x3xf32> loc("grouped")
  %y = tensor.collapse_shape %c3 [[0], [1, 2], [3], [4]] : tensor<2x2x6x3x3xf32> into tensor<2x12x3x3xf32>
  return %y : tensor<2x12x3x3xf32>
}
