// RUN: soap-opt %s -split-input-file --soap-training-step | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-training-step --cse | FileCheck %s --check-prefix=CSE

// Activation recomputation: fc1 and its ReLU are marked soap.recompute. The
// backward pass reads copies of them, made (with a copy of the fill that
// starts fc1's sums) right before its first reader, fc2's weight gradient;
// the forward values are read by nothing after the forward pass. The copies
// keep their originals' configs.

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>, %[[W1:[^:]*]]: tensor<8x16xf32> {soap.parameter}, %[[W2:[^:]*]]: tensor<16x2xf32> {soap.parameter}, %[[DY:[^:]*]]: tensor<4x2xf32>)
// CHECK: %[[H:.*]] = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>, soap.name = "fc1", soap.recompute}
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]] : {{.*}} attrs = {{{.*}}soap.name = "relu", soap.recompute}
// CHECK: linalg.matmul {{{.*}}soap.name = "fc2"} ins(%[[R]], %[[W2]]
// CHECK: soap.name = "fc2.grad"}
// CHECK: %[[E:.*]] = tensor.empty() {soap.recomputed} : tensor<4x16xf32>
// CHECK: %[[F:.*]] = linalg.fill {{{.*}}soap.recomputed} ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x16xf32>)
// CHECK: %[[H2:.*]] = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>, soap.name = "fc1.recompute", soap.recomputed} ins(%[[X]], %[[W1]] : {{.*}}) outs(%[[F]] :
// CHECK: %[[R2:.*]] = linalg.generic {{.*}} ins(%[[H2]] : {{.*}} outs(%[[E]] : {{.*}} attrs = {{{.*}}soap.name = "relu.recompute", soap.recomputed}
// CHECK-NOT: %[[H]]{{[ ,)]}}
// CHECK-NOT: %[[R]]{{[ ,)]}}
// CHECK: ins(%[[R2]], %[[DY]] : {{.*}} soap.name = "fc2.grad.1"
// fc2's update right after its gradient (not at the end of the step).
// CHECK: ins(%[[W2]], %{{.*}} : tensor<16x2xf32>, tensor<16x2xf32>)
// CHECK: ins(%[[H2]], %{{.*}} : {{.*}} soap.name = "relu.grad"
// CHECK: ins(%[[W1]], %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK: return

// CSE keeps the copies apart from the forward ops (their attributes
// differ), the copied fill and empty tensor too.
// CSE: tensor.empty() {soap.recomputed}
// CSE: linalg.fill {{{.*}}soap.recomputed}
// CSE: soap.name = "fc1.recompute"

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32> {soap.parameter}, %w2: tensor<16x2xf32> {soap.parameter}) -> tensor<4x2xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul {soap.name = "fc1", soap.recompute, soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>} ins(%x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"], soap.name = "relu", soap.recompute} ins(%h : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %f2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul {soap.name = "fc2"} ins(%r, %w2 : tensor<4x16xf32>, tensor<16x2xf32>) outs(%f2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}


// -----

// A marked op whose result the step returns keeps it anyway: no copy (the
// ReLU's gradient reads the returned pre-activation itself).
// CHECK-LABEL: func.func @returned(
// CHECK: %[[H:.*]] = linalg.matmul {soap.name = "fc", soap.recompute}
// CHECK-NOT: soap.recomputed
// CHECK: ins(%[[H]], %{{.*}} : {{.*}}soap.name = "relu.grad"
// CHECK-NOT: soap.recomputed
// CHECK: return %[[H]],
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @returned(%x: tensor<4x8xf32>, %w: tensor<8x16xf32> {soap.parameter}) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul {soap.name = "fc", soap.recompute} ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"], soap.name = "relu"} ins(%h : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  return %h, %r : tensor<4x16xf32>, tensor<4x16xf32>
}
