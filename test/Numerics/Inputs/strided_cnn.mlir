// Strided and overlapping windows for the training step's gradients
// (batch 2, 3x9x9 images): a padded 3x3 / 2 convolution + relu, an
// overlapping 3x3 / 2 max pooling, a 1x1 / 2 convolution (its stride skips
// the last row and column of its input) and a 2x2 / 1 sum pooling.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @strided_cnn(%x: tensor<2x3x9x9xf32>,
                       %w1: tensor<4x3x3x3xf32> {soap.parameter},
                       %w2: tensor<6x4x1x1xf32> {soap.parameter})
    -> (tensor<2x4x2x2xf32>, tensor<2x6x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x9x9xf32> to tensor<2x3x11x11xf32>
  %e1 = tensor.empty() : tensor<2x4x5x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w1 : tensor<2x3x11x11xf32>, tensor<4x3x3x3xf32>) outs(%f1 : tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32> loc("conv1")
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x4x5x5xf32>) outs(%e1 : tensor<2x4x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4x5x5xf32>
  %win3 = tensor.empty() : tensor<3x3xf32>
  %ep = tensor.empty() : tensor<2x4x2x2xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
  %mp = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%r1, %win3 : tensor<2x4x5x5xf32>, tensor<3x3xf32>) outs(%fp : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> loc("maxpool")
  %e2 = tensor.empty() : tensor<2x6x3x3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x6x3x3xf32>) -> tensor<2x6x3x3xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r1, %w2 : tensor<2x4x5x5xf32>, tensor<6x4x1x1xf32>) outs(%f2 : tensor<2x6x3x3xf32>) -> tensor<2x6x3x3xf32> loc("conv2")
  %win2 = tensor.empty() : tensor<2x2xf32>
  %es = tensor.empty() : tensor<2x6x2x2xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x6x2x2xf32>) -> tensor<2x6x2x2xf32>
  %sp = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%c2, %win2 : tensor<2x6x3x3xf32>, tensor<2x2xf32>) outs(%fs : tensor<2x6x2x2xf32>) -> tensor<2x6x2x2xf32> loc("sumpool")
  return %mp, %sp : tensor<2x4x2x2xf32>, tensor<2x6x2x2xf32>
}
