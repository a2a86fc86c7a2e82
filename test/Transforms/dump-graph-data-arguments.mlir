// RUN: soap-opt %s -split-input-file --soap-dump-graph -o /dev/null | FileCheck %s

// Which arguments of an unmarked model are weights. An argument read at a
// matmul's weight side is one, unless that leaves no argument data: x in
// x^T x is read through the transpose at the matmul's data side too, so it
// is data and the two ops are layers (before, both computed from "weights"
// alone and the model had no layer at all).

// CHECK-LABEL: graph @gram: 2 nodes
// CHECK: node 0 "transpose_0" linalg.transpose
// CHECK-NEXT:   in arg0 [8x16] input
// CHECK: node 1 "matmul_0" linalg.matmul loops=[S:16, A:16, R:8]
// CHECK-NEXT:   in transpose_0 [16x8] from 0
// CHECK-NEXT:   in arg0 [8x16] input
func.func @gram(%x: tensor<8x16xf32>) -> tensor<16x16xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = linalg.matmul ins(%t, %x : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// With a data argument beside it, an argument read through a transpose at
// a matmul's weight side stays a weight (its view is no layer).
// CHECK-LABEL: graph @weights: 1 nodes
// CHECK: node 0 "{{.*}}" linalg.matmul
// CHECK-NEXT:   in arg0 [8x16] input
// CHECK-NEXT:   in arg1 [4x16] param
func.func @weights(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<16x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = linalg.matmul ins(%x, %t : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// An argument that every reader broadcasts over the leading (sample) dim
// is a weight: a position embedding [1, S, D] added to every sample, a
// class token expanded over the batch and concatenated in front of the
// tokens, a weight transposed and broadcast for a batch_matmul (torch-mlir's
// aten.matmul of a 3-D input by a 2-D weight). They were data, so a
// training step never updated them.
// CHECK-LABEL: graph @broadcast_weights: 2 nodes
// CHECK: node 0 "concat_0" tensor.concat
// CHECK-NEXT:   in param0 [8] param (d2)
// CHECK-NEXT:   in arg0 [2x4x8] input (d0, d1 - 1, d2)
// CHECK-NEXT:   in arg2 [1x5x8] param (0, d1, d2)
// CHECK: node 1 "batch_matmul_0" linalg.batch_matmul
// CHECK-NEXT:   in concat_0 [2x5x8] from 0
// CHECK-NEXT:   in arg3 [6x8] param (d2, d3)
func.func @broadcast_weights(%x: tensor<2x4x8xf32>, %cls: tensor<1x1x8xf32>, %pos: tensor<1x5x8xf32>, %w: tensor<6x8xf32>) -> tensor<2x5x6xf32> {
  %c = tensor.collapse_shape %cls [[0, 1, 2]] : tensor<1x1x8xf32> into tensor<8xf32>
  %e = tensor.empty() : tensor<2x1x8xf32>
  %b = linalg.broadcast ins(%c : tensor<8xf32>) outs(%e : tensor<2x1x8xf32>) dimensions = [0, 1]
  %y = tensor.concat dim(1) %b, %x : (tensor<2x1x8xf32>, tensor<2x4x8xf32>) -> tensor<2x5x8xf32>
  %e5 = tensor.empty() : tensor<2x5x8xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %pos : tensor<2x5x8xf32>, tensor<1x5x8xf32>) outs(%e5 : tensor<2x5x8xf32>) {
  ^bb0(%i: f32, %p: f32, %o: f32):
    %a = arith.addf %i, %p : f32
    linalg.yield %a : f32
  } -> tensor<2x5x8xf32>
  %et = tensor.empty() : tensor<8x6xf32>
  %t = linalg.transpose ins(%w : tensor<6x8xf32>) outs(%et : tensor<8x6xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<2x8x6xf32>
  %wb = linalg.broadcast ins(%t : tensor<8x6xf32>) outs(%eb : tensor<2x8x6xf32>) dimensions = [0]
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<2x5x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  %r = linalg.batch_matmul ins(%z, %wb : tensor<2x5x8xf32>, tensor<2x8x6xf32>) outs(%f : tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  return %r : tensor<2x5x6xf32>
}

// -----

// A fused projection's weight, split into one matmul per part by
// soap-split-fused-projections, is read through slices: still a weight.
// CHECK-LABEL: graph @fused_parts
// CHECK: linalg.matmul
// CHECK-NEXT:   in arg0 [4x8] input
// CHECK-NEXT:   in param0 [8x8] param
func.func @fused_parts(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w0 = tensor.extract_slice %w[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %w1 = tensor.extract_slice %w[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// But a slice of a computed value read at a matmul's weight side (a key cut
// from a fused projection's output, transposed, for single-sequence
// attention) leads back to data: x stays an input, the weight w a weight.
// CHECK-LABEL: graph @sliced_key
// CHECK: node 0 "matmul_0" linalg.matmul
// CHECK-NEXT:   in arg0 [4x8] input
// CHECK-NEXT:   in arg1 [8x16] param
func.func @sliced_key(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %bias: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %k = tensor.extract_slice %p[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x8xf32>, tensor<8x4xf32>) outs(%fs : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.map { arith.addf } ins(%s, %bias : tensor<4x4xf32>, tensor<4x4xf32>) outs(%es : tensor<4x4xf32>)
  return %r : tensor<4x4xf32>
}
