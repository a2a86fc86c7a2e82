// RUN: soap-opt %s --soap-import | FileCheck %s
// RUN: soap-opt %s --soap-import="batch=32" | FileCheck %s --check-prefix=BATCH
// RUN: soap-opt %s --soap-import="batch=32" | soap-opt --soap-dump-graph -o /dev/null | FileCheck %s --check-prefix=GRAPH

// The import inlines the private helper, drops the assert, names the layers
// and (with batch=N) rescales the batch through the whole function.

// CHECK-LABEL: func.func @model
// CHECK-NOT: call
// CHECK-NOT: cf.assert
// CHECK: linalg.matmul {soap.name = "matmul_0"}
// CHECK: linalg.generic
// CHECK-NOT: func.func private @relu

// BATCH-LABEL: func.func @model(%{{.*}}: tensor<32x16xf32>, %{{.*}}: tensor<16x8xf32> {soap.parameter}) -> tensor<32x8xf32>
// BATCH: tensor.empty() : tensor<32x8xf32>
// BATCH: linalg.matmul {{.*}} -> tensor<32x8xf32>

// GRAPH: graph @model: 1 nodes
// GRAPH: node 0 "matmul_0" linalg.matmul loops=[S:32, P:8, R:16]
// GRAPH: group linalg.matmul linalg.fill linalg.generic

func.func private @relu(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

func.func @model(%x: tensor<1x16xf32>, %w: tensor<16x8xf32> {soap.parameter}) -> tensor<1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  cf.assert %true, "shapes agree"
  %e = tensor.empty() : tensor<1x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8xf32>) -> tensor<1x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x16xf32>, tensor<16x8xf32>) outs(%f : tensor<1x8xf32>) -> tensor<1x8xf32>
  %r = call @relu(%y) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}
