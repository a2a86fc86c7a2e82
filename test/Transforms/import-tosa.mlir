// RUN: soap-opt %s --soap-import | FileCheck %s
// RUN: soap-opt %s --soap-import | soap-opt --soap-dump-graph -o /dev/null | FileCheck %s --check-prefix=GRAPH
// TOSA models are lowered to linalg on tensors by the upstream pipelines.

// CHECK-LABEL: func.func @tosa_mlp
// CHECK-NOT: tosa.
// CHECK: linalg.batch_matmul
// GRAPH: graph @tosa_mlp:
// GRAPH: linalg.batch_matmul loops=[S:1, A:4, A:8, R:16]

func.func @tosa_mlp(%x: tensor<1x4x16xf32>, %w: tensor<1x16x8xf32>) -> tensor<1x4x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %r = tosa.clamp %y {min_val = 0.0 : f32, max_val = 3.4028235e+38 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %r : tensor<1x4x8xf32>
}
