// RUN: soap-opt %s --soap-dump-graph -o /dev/null | FileCheck %s

// A grouped elementwise op whose derivative reads its data input keeps
// that value (inside the node) for the backward pass: the simulator
// charges it with the node's output. A ReLU of a bias add reads it (8x4
// f32: 128 bytes); a bias add alone, a sum or a difference does not; a
// product does, and so does a ReLU reached through a subtraction.

// CHECK-LABEL: graph @saved_values
// CHECK: node 0 "matmul_0" linalg.matmul
// CHECK: group linalg.matmul linalg.fill linalg.generic
// CHECK-NEXT: saved inside for the backward pass: 128 bytes
// CHECK: node 1 "matmul_1" linalg.matmul
// CHECK: group linalg.matmul linalg.fill linalg.generic
// CHECK-NOT: saved inside
// CHECK: node 2 "matmul_2" linalg.matmul
// CHECK: group linalg.matmul linalg.fill linalg.generic linalg.generic
// CHECK-NEXT: saved inside for the backward pass: 256 bytes

#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @saved_values(%x: tensor<8x4xf32>, %w: tensor<4x4xf32> {soap.parameter},
                        %b: tensor<4xf32> {soap.parameter}) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  // max(x w + b, 0): the pre-activation is saved.
  %h0 = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %c: f32, %o: f32):
    %s = arith.addf %in, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  // x w - b: linear, nothing saved.
  %h1 = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %c: f32, %o: f32):
    %s = arith.subf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  // (x w) * b, then max(-(that), 0): both data inputs are saved.
  %h2 = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p2 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %c: f32, %o: f32):
    %s = arith.mulf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p2 : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    %r = arith.maximumf %n, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  return %r0, %r1, %r2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
