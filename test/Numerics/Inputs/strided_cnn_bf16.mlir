// strided_cnn.mlir in bfloat16 (every f32 made bf16): cuDNN's bf16
// convolutions and their gradients, pooling kernels on bf16.
// Strided and overlapping windows for the training step's gradients
// (batch 2, 3x9x9 images): a padded 3x3 / 2 convolution + relu, an
// overlapping 3x3 / 2 max pooling, a 1x1 / 2 convolution (its stride skips
// the last row and column of its input) and a 2x2 / 1 sum pooling.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @strided_cnn_bf16(%x: tensor<2x3x9x9xbf16>,
                       %w1: tensor<4x3x3x3xbf16> {soap.parameter},
                       %w2: tensor<6x4x1x1xbf16> {soap.parameter})
    -> (tensor<2x4x2x2xbf16>, tensor<2x6x2x2xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %ninf = arith.constant -3.40282347E+38 : bf16
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x3x9x9xbf16> to tensor<2x3x11x11xbf16>
  %e1 = tensor.empty() : tensor<2x4x5x5xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<2x4x5x5xbf16>) -> tensor<2x4x5x5xbf16>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w1 : tensor<2x3x11x11xbf16>, tensor<4x3x3x3xbf16>) outs(%f1 : tensor<2x4x5x5xbf16>) -> tensor<2x4x5x5xbf16> loc("conv1")
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<2x4x5x5xbf16>) outs(%e1 : tensor<2x4x5x5xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %r = arith.maximumf %a, %zero : bf16
    linalg.yield %r : bf16
  } -> tensor<2x4x5x5xbf16>
  %win3 = tensor.empty() : tensor<3x3xbf16>
  %ep = tensor.empty() : tensor<2x4x2x2xbf16>
  %fp = linalg.fill ins(%ninf : bf16) outs(%ep : tensor<2x4x2x2xbf16>) -> tensor<2x4x2x2xbf16>
  %mp = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%r1, %win3 : tensor<2x4x5x5xbf16>, tensor<3x3xbf16>) outs(%fp : tensor<2x4x2x2xbf16>) -> tensor<2x4x2x2xbf16> loc("maxpool")
  %e2 = tensor.empty() : tensor<2x6x3x3xbf16>
  %f2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<2x6x3x3xbf16>) -> tensor<2x6x3x3xbf16>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r1, %w2 : tensor<2x4x5x5xbf16>, tensor<6x4x1x1xbf16>) outs(%f2 : tensor<2x6x3x3xbf16>) -> tensor<2x6x3x3xbf16> loc("conv2")
  %win2 = tensor.empty() : tensor<2x2xbf16>
  %es = tensor.empty() : tensor<2x6x2x2xbf16>
  %fs = linalg.fill ins(%zero : bf16) outs(%es : tensor<2x6x2x2xbf16>) -> tensor<2x6x2x2xbf16>
  %sp = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%c2, %win2 : tensor<2x6x3x3xbf16>, tensor<2x2xbf16>) outs(%fs : tensor<2x6x2x2xbf16>) -> tensor<2x6x2x2xbf16> loc("sumpool")
  return %mp, %sp : tensor<2x4x2x2xbf16>, tensor<2x6x2x2xbf16>
}
