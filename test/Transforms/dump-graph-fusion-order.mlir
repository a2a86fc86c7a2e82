// RUN: soap-opt %s -split-input-file --soap-dump-graph -o /dev/null | FileCheck %s

// An elementwise op reading the open output of one node (x w1, read by
// nothing else) and the result of a later node (x w2, also read by the
// square) does not join the earlier node: that node would read what the
// later one makes. It is a node of its own, after both.

// CHECK: graph @later_input: 4 nodes
// CHECK: node 0 "matmul_0" linalg.matmul
// CHECK: node 1 "matmul_1" linalg.matmul
// CHECK: node 2 "generic_0" linalg.generic
// CHECK-NEXT: in matmul_0 [8x4] from 0 (d0, d1)
// CHECK-NEXT: in matmul_1 [8x4] from 1 (d0, d1)
// CHECK: node 3 "generic_1" linalg.generic
// CHECK-NEXT: in matmul_1 [8x4] from 1 (d0, d1)

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @later_input(%x: tensor<8x4xf32>, %w1: tensor<4x4xf32> {soap.parameter},
                       %w2: tensor<4x4xf32> {soap.parameter}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %a = linalg.matmul ins(%x, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %b = linalg.matmul ins(%x, %w2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.mulf %p, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %c, %d : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// The same where the later node's output is read through a pad folded into
// the reader (a tensor read whole and through a slice: the training step
// sums the whole read's gradient and the slice's zero-padded one, as for
// rotary embedding's rotate_half of q beside q). The pad's source counts:
// joined, node 0 read what node 1 makes ("the op graph is inconsistent").

// CHECK: graph @later_padded_input: 3 nodes
// CHECK: node 0 "whole_grad" linalg.generic
// CHECK: node 1 "slice_grad" linalg.generic
// CHECK: node 2 "generic_0" linalg.generic
// CHECK-NEXT: in whole_grad [2x8] from 0 (d0, d1)
// CHECK-NEXT: in slice_grad [2x4] from 1 (d0, d1)

#m = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @later_padded_input(%x: tensor<2x4xf32>, %s: tensor<2xf32>, %c: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<2x8xf32>
  %g = linalg.generic {indexing_maps = [#r, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%s, %c : tensor<2xf32>, tensor<2x8xf32>) outs(%e8 : tensor<2x8xf32>) attrs = {soap.name = "whole_grad"} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %q, %p : f32
    linalg.yield %t : f32
  } -> tensor<2x8xf32>
  %e4 = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%e4 : tensor<2x4xf32>) attrs = {soap.name = "slice_grad"} {
  ^bb0(%p: f32, %o: f32):
    %t = arith.mulf %p, %p : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %padded = tensor.pad %h low[0, 0] high[0, 4] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<2x4xf32> to tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%g, %padded : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e8 : tensor<2x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<2x8xf32>
  return %sum : tensor<2x8xf32>
}
