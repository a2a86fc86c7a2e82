// RUN: soap-opt %s -split-input-file --soap-rescale-batch=batch=8 | FileCheck %s

// torch-mlir style: batch 1, broadcast maps with a constant 0 for the batch,
// a pad, a reshape and a slice; every batch dimension follows.
// CHECK-LABEL: func.func @torch_style(%{{.*}}: tensor<8x3x4x4xf32>) -> tensor<8x48xf32>
// CHECK: tensor.pad
// CHECK: } : tensor<8x3x4x4xf32> to tensor<8x3x6x6xf32>
// CHECK: tensor.extract_slice {{.*}}[0, 0, 1, 1] [8, 3, 4, 4] [1, 1, 1, 1] : tensor<8x3x6x6xf32> to tensor<8x3x4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ID]]]
// CHECK: tensor.collapse_shape {{.*}} into tensor<8x48xf32>
#bcast = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @torch_style(%x: tensor<1x3x4x4xf32>) -> tensor<1x48xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x4x4xf32> to tensor<1x3x6x6xf32>
  %s = tensor.extract_slice %p[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x6x6xf32> to tensor<1x3x4x4xf32>
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x3x4x4xf32>) outs(%e : tensor<1x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x4x4xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2, 3]] : tensor<1x3x4x4xf32> into tensor<1x48xf32>
  return %c : tensor<1x48xf32>
}

// -----

// Weights (marked) keep their shape; a splat constant with the batch is
// rebuilt; expand_shape's output shape follows.
// CHECK-LABEL: func.func @weights
// CHECK-SAME: (%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x4xf32> {soap.parameter}) -> tensor<8x2x2xf32>
// CHECK: arith.constant dense<1.000000e+00> : tensor<8x4xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [8, 2, 2] : tensor<8x4xf32> into tensor<8x2x2xf32>
func.func @weights(%x: tensor<2x16xf32>, %w: tensor<16x4xf32> {soap.parameter}) -> tensor<2x2x2xf32> {
  %init = arith.constant dense<1.0> : tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x16xf32>, tensor<16x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  %z = tensor.expand_shape %y [[0], [1, 2]] output_shape [2, 2, 2] : tensor<2x4xf32> into tensor<2x2x2xf32>
  return %z : tensor<2x2x2xf32>
}

// -----

// An export with a symbolic batch (torch-mlir's dynamic_shapes): the data
// argument's leading dimension is dynamic. It gets the batch, and every
// size computed from it (tensor.dim, tensor.empty, a reshape's output
// shape) becomes static, as do the results.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-SAME:    (%{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x4xf32> {soap.parameter}) -> (tensor<8x2x2xf32>, tensor<8x4xf32>)
// CHECK-NOT:     tensor.dim
// CHECK-NOT:     ?
// CHECK:         linalg.matmul {{.*}} -> tensor<8x4xf32>
// CHECK:         tensor.expand_shape {{.*}} output_shape [8, 2, 2] : tensor<8x4xf32> into tensor<8x2x2xf32>
// CHECK-NOT:     ?
func.func @dynamic_batch(%x: tensor<?x16xf32>, %w: tensor<16x4xf32> {soap.parameter}) -> (tensor<?x2x2xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x4xf32>) outs(%f : tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  %m = tensor.dim %r, %c0 : tensor<?x4xf32>
  %s = tensor.expand_shape %r [[0], [1, 2]] output_shape [%m, 2, 2] : tensor<?x4xf32> into tensor<?x2x2xf32>
  return %s, %y : tensor<?x2x2xf32>, tensor<?x4xf32>
}

