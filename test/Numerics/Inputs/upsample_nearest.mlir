// Nearest-neighbour upsampling by 2 (a U-Net / FPN decoder: convolution,
// upsample, convolution) as torch-mlir's TorchToLinalg lowers
// aten.upsample_nearest2d: a linalg.generic with no inputs whose body reads
// the captured input at (n, c, h floordiv s, w floordiv s), the factor
// s = ceildiv(output size, input size) computed from tensor.dim.
// soap-import (soap-lookup-reductions, after canonicalization makes s a
// constant) turns it into a read of an operand broadcast over the split
// rows and columns and a collapse_shape, which the training step
// differentiates (a sum over each 2x2 block) and the partitioner splits.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @upsample_nearest(%x: tensor<2x3x5x5xf32>, %w1: tensor<4x3x3x3xf32> {soap.parameter},
                            %w2: tensor<2x4x3x3xf32> {soap.parameter}) -> tensor<2x2x8x8xf32> {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6_i64 = arith.constant 6 : i64
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4x3x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w1 : tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) outs(%f1 : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  // The factors, as torch-mlir computes them: ceildiv(6, 3) = 2.
  %h = tensor.dim %y1, %c2 : tensor<2x4x3x3xf32>
  %w = tensor.dim %y1, %c3 : tensor<2x4x3x3xf32>
  %hi = arith.index_cast %h : index to i64
  %wi = arith.index_cast %w : index to i64
  %sh = arith.ceildivsi %c6_i64, %hi : i64
  %sw = arith.ceildivsi %c6_i64, %wi : i64
  %shx = arith.index_cast %sh : i64 to index
  %swx = arith.index_cast %sw : i64 to index
  %ue = tensor.empty() : tensor<2x4x6x6xf32>
  %up = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%ue : tensor<2x4x6x6xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %r2 = arith.floordivsi %i2, %shx : index
    %r3 = arith.floordivsi %i3, %swx : index
    %v = tensor.extract %y1[%i0, %i1, %r2, %r3] : tensor<2x4x3x3xf32>
    linalg.yield %v : f32
  } -> tensor<2x4x6x6xf32>
  %pe = tensor.pad %up low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x4x6x6xf32> to tensor<2x4x10x10xf32>
  %e2 = tensor.empty() : tensor<2x2x8x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%pe, %w2 : tensor<2x4x10x10xf32>, tensor<2x4x3x3xf32>) outs(%f2 : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  return %y2 : tensor<2x2x8x8xf32>
}
