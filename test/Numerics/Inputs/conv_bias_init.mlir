// A convolution whose accumulator starts from its bias broadcast over the
// output (how torch-mlir lowers a Conv2d with bias): the broadcast is part
// of the convolution's layer.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_bias_init(%x: tensor<2x4x11x11xf32>, %w: tensor<3x4x3x3xf32> {soap.parameter}, %b: tensor<3xf32> {soap.parameter}) -> tensor<2x3x9x9xf32> {
  %e = tensor.empty() : tensor<2x3x9x9xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<3xf32>) outs(%e : tensor<2x3x9x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x9x9xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x4x11x11xf32>, tensor<3x4x3x3xf32>) outs(%init : tensor<2x3x9x9xf32>) -> tensor<2x3x9x9xf32>
  return %y : tensor<2x3x9x9xf32>
}
