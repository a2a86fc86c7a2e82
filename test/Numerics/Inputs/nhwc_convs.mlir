// Channels-last convolutions as JAX (StableHLO -> linalg) and TensorFlow
// export them (batch 2, 9x9x3 images): a padded 3x3 / 2
// linalg.conv_2d_nhwc_hwcf + relu, a 3x3 / 1 depthwise
// linalg.depthwise_conv_2d_nhwc_hwc and a 1x1 / 2 linalg.conv_2d_nhwc_fhwc
// (its stride skips the last row and column).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @nhwc_convs(%x: tensor<2x9x9x3xf32>,
                      %w1: tensor<3x3x3x4xf32> {soap.parameter},
                      %w2: tensor<3x3x4xf32> {soap.parameter},
                      %w3: tensor<6x1x1x4xf32> {soap.parameter})
    -> tensor<2x2x2x6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x9x9x3xf32> to tensor<2x11x11x3xf32>
  %e1 = tensor.empty() : tensor<2x5x5x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w1 : tensor<2x11x11x3xf32>, tensor<3x3x3x4xf32>) outs(%f1 : tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32> loc("conv")
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x5x5x4xf32>) outs(%e1 : tensor<2x5x5x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x5x5x4xf32>
  %e2 = tensor.empty() : tensor<2x3x3x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %c2 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r1, %w2 : tensor<2x5x5x4xf32>, tensor<3x3x4xf32>) outs(%f2 : tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32> loc("depthwise")
  %e3 = tensor.empty() : tensor<2x2x2x6xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x2x2x6xf32>) -> tensor<2x2x2x6xf32>
  %c3 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c2, %w3 : tensor<2x3x3x4xf32>, tensor<6x1x1x4xf32>) outs(%f3 : tensor<2x2x2x6xf32>) -> tensor<2x2x2x6xf32> loc("pointwise")
  return %c3 : tensor<2x2x2x6xf32>
}
