// A ConvTranspose2d (4 -> 3 channels, 3x3 filter, stride 2, padding 0,
// with bias) as torch-mlir's TorchToLinalg lowers it: the filter
// transposed and flipped by a linalg.generic whose body reads the captured
// weight at (j, i, (K-1) - kh, (K-1) - kw), sizes from tensor.dim; the
// input spread by a strided tensor.insert_slice into zeros at offset
// (K-1) * dilation - padding; then a stride-1 convolution. (The export has
// the weights as constants; here they are parameters, so that
// grad-check.py can check their gradients.) soap-import makes the flip a
// read of an operand (soap-lookup-reductions) and the spread reshapes and
// pads (soap-spread-strided-inserts), so the training step differentiates
// both.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_transpose(%x: tensor<2x4x4x4xf32>, %w: tensor<4x3x3x3xf32> {soap.parameter},
                          %b: tensor<3xf32> {soap.parameter}) -> tensor<2x3x9x9xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  // The filter transposed (in and out channels) and flipped.
  %d0 = tensor.dim %w, %c0 : tensor<4x3x3x3xf32>
  %d1 = tensor.dim %w, %c1 : tensor<4x3x3x3xf32>
  %d2 = tensor.dim %w, %c2 : tensor<4x3x3x3xf32>
  %d3 = tensor.dim %w, %c3 : tensor<4x3x3x3xf32>
  %we = tensor.empty(%d1, %d0, %d2, %d3) : tensor<?x?x?x?xf32>
  %wz = linalg.fill ins(%zero : f32) outs(%we : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %wf = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%wz : tensor<?x?x?x?xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %k2 = arith.subi %d2, %c1 : index
    %r2 = arith.subi %k2, %i2 : index
    %k3 = arith.subi %d3, %c1 : index
    %r3 = arith.subi %k3, %i3 : index
    %v = tensor.extract %w[%i1, %i0, %r2, %r3] : tensor<4x3x3x3xf32>
    linalg.yield %v : f32
  } -> tensor<?x?x?x?xf32>
  %wfs = tensor.cast %wf : tensor<?x?x?x?xf32> to tensor<3x4x3x3xf32>
  // The input spread by the stride at offset (K - 1) * 1 - 0 = 2.
  %off = arith.subi %d2, %c1 : index
  %z0 = tensor.empty() : tensor<2x4x11x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%z0 : tensor<2x4x11x11xf32>) -> tensor<2x4x11x11xf32>
  %spread = tensor.insert_slice %x into %z[%c0, %c0, %off, %off] [2, 4, 4, 4] [%c1, %c1, %c2, %c2] : tensor<2x4x4x4xf32> into tensor<2x4x11x11xf32>
  // The bias, then the stride-1 convolution.
  %e = tensor.empty() : tensor<2x3x9x9xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<3xf32>) outs(%e : tensor<2x3x9x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x9x9xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%spread, %wfs : tensor<2x4x11x11xf32>, tensor<3x4x3x3xf32>) outs(%init : tensor<2x3x9x9xf32>) -> tensor<2x3x9x9xf32>
  return %y : tensor<2x3x9x9xf32>
}
