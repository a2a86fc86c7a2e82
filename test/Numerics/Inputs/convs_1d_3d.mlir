// 1-D convolutions (audio, sequence models: torch-mlir's Conv1d is
// conv_1d_ncw_fcw) and 3-D ones (video), both layouts, with strides and a
// dilation: their input gradients are stride-1 convolutions of the same
// kind over the spread and padded output gradient (soap-training-step).
// ncw: stride 1; nwc: stride 2, dilation 2; ndhwc: stride 1;
// ncdhw: strides 2, 1, 2 (the last rows and columns in no window).
func.func @convs_1d_3d(%x1: tensor<2x4x16xf32>, %w1: tensor<8x4x3xf32> {soap.parameter},
                       %x2: tensor<2x17x4xf32>, %w2: tensor<3x4x6xf32> {soap.parameter},
                       %x3: tensor<1x6x6x6x2xf32>, %w3: tensor<3x3x3x2x4xf32> {soap.parameter},
                       %x4: tensor<1x2x7x6x6xf32>, %w4: tensor<3x2x3x2x3xf32> {soap.parameter})
    -> (tensor<2x8x14xf32>, tensor<2x6x6xf32>, tensor<1x4x4x4x4xf32>, tensor<1x3x3x5x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x8x14xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8x14xf32>) -> tensor<2x8x14xf32>
  %y1 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
      ins(%x1, %w1 : tensor<2x4x16xf32>, tensor<8x4x3xf32>) outs(%f1 : tensor<2x8x14xf32>) -> tensor<2x8x14xf32> loc("ncw")
  %e2 = tensor.empty() : tensor<2x6x6xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %y2 = linalg.conv_1d_nwc_wcf {dilations = dense<2> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
      ins(%x2, %w2 : tensor<2x17x4xf32>, tensor<3x4x6xf32>) outs(%f2 : tensor<2x6x6xf32>) -> tensor<2x6x6xf32> loc("nwc")
  %e3 = tensor.empty() : tensor<1x4x4x4x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x4x4x4x4xf32>) -> tensor<1x4x4x4x4xf32>
  %y3 = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
      ins(%x3, %w3 : tensor<1x6x6x6x2xf32>, tensor<3x3x3x2x4xf32>) outs(%f3 : tensor<1x4x4x4x4xf32>) -> tensor<1x4x4x4x4xf32> loc("ndhwc")
  %e4 = tensor.empty() : tensor<1x3x3x5x2xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x3x3x5x2xf32>) -> tensor<1x3x3x5x2xf32>
  %y4 = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<[2, 1, 2]> : tensor<3xi64>}
      ins(%x4, %w4 : tensor<1x2x7x6x6xf32>, tensor<3x2x3x2x3xf32>) outs(%f4 : tensor<1x3x3x5x2xf32>) -> tensor<1x3x3x5x2xf32> loc("ncdhw")
  return %y1, %y2, %y3, %y4 : tensor<2x8x14xf32>, tensor<2x6x6xf32>, tensor<1x4x4x4x4xf32>, tensor<1x3x3x5x2xf32>
}
