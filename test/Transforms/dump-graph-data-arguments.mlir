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
