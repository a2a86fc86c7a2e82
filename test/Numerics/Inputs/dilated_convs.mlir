// Dilated (atrous) convolutions as DeepLab uses them (batch 2, 3x9x9
// images): a 3x3 convolution of dilation 2 padded by 2 (the size kept) +
// relu, and a 3x3 depthwise one of dilation 2 and stride 2.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @dilated_convs(%x: tensor<2x3x9x9xf32>,
                         %w1: tensor<4x3x3x3xf32> {soap.parameter},
                         %w2: tensor<4x3x3xf32> {soap.parameter})
    -> tensor<2x4x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x9x9xf32> to tensor<2x3x13x13xf32>
  %e1 = tensor.empty() : tensor<2x4x9x9xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w1 : tensor<2x3x13x13xf32>, tensor<4x3x3x3xf32>) outs(%f1 : tensor<2x4x9x9xf32>) -> tensor<2x4x9x9xf32> loc("atrous")
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x4x9x9xf32>) outs(%e1 : tensor<2x4x9x9xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4x9x9xf32>
  %e2 = tensor.empty() : tensor<2x4x3x3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %c2 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r1, %w2 : tensor<2x4x9x9xf32>, tensor<4x3x3xf32>) outs(%f2 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> loc("atrous_depthwise")
  return %c2 : tensor<2x4x3x3xf32>
}
