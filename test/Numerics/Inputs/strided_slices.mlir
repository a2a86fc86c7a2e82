// Strided slices: every other row and column of the input from row 1
// (x[:, :, 1::2, ::2], a YOLO-style Focus slice), and a transposed
// convolution as torch-mlir lowers it (the input spread by stride 2 into
// zeros with a strided tensor.insert_slice, then a stride-1 convolution).
// soap-import turns the insertion into reshapes and pads
// (soap-spread-strided-inserts); the training step places the slice's
// gradient the same way.
func.func @strided_slices(%x: tensor<2x3x8x8xf32>, %w1: tensor<4x3x1x1xf32> {soap.parameter},
                          %w2: tensor<2x4x3x3xf32> {soap.parameter}) -> tensor<2x2x9x9xf32> {
  %zero = arith.constant 0.0 : f32
  %s = tensor.extract_slice %x[0, 0, 1, 0] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x8x8xf32> to tensor<2x3x4x4xf32>
  %e1 = tensor.empty() : tensor<2x4x4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%s, %w1 : tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>) outs(%f1 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> loc("focus")
  %z0 = tensor.empty() : tensor<2x4x11x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%z0 : tensor<2x4x11x11xf32>) -> tensor<2x4x11x11xf32>
  %spread = tensor.insert_slice %y1 into %z[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 2, 2] : tensor<2x4x4x4xf32> into tensor<2x4x11x11xf32>
  %e2 = tensor.empty() : tensor<2x2x9x9xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2x9x9xf32>) -> tensor<2x2x9x9xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%spread, %w2 : tensor<2x4x11x11xf32>, tensor<2x4x3x3xf32>) outs(%f2 : tensor<2x2x9x9xf32>) -> tensor<2x2x9x9xf32> loc("transposed")
  return %y2 : tensor<2x2x9x9xf32>
}
