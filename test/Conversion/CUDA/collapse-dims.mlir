// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-collapse-dims))" | FileCheck %s

// An elementwise op on whole tensors: one loop, no index arithmetic.
// CHECK-LABEL: func.func @relu(
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : memref<2x3x5x7xf32> into memref<210xf32>
// CHECK-DAG:     %[[Y:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : memref<2x3x5x7xf32> into memref<210xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[X]] : memref<210xf32>) outs(%[[Y]] : memref<210xf32>)
func.func @relu(%x: memref<2x3x5x7xf32>, %y: memref<2x3x5x7xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<2x3x5x7xf32>) outs(%y : memref<2x3x5x7xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A per-channel bias: N and C stay apart (the bias reads C alone), H and W
// merge.
// CHECK-LABEL: func.func @bias(
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<2x3x5x7xf32> into memref<2x3x35xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : memref<2x3x35xf32>, memref<3xf32>)
func.func @bias(%x: memref<2x3x5x7xf32>, %s: memref<3xf32>, %y: memref<2x3x5x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<2x3x5x7xf32>, memref<3xf32>) outs(%y : memref<2x3x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A view with padded rows: only the dimensions that are contiguous in
// memory merge.
// CHECK-LABEL: func.func @strided(
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : memref<2x3x5x7xf32, strided<[210, 70, 14, 1]>> into memref<30x7xf32, strided<[14, 1]>>
// CHECK:         linalg.copy ins(%{{.*}} : memref<30x7xf32, strided<[14, 1]>>) outs(%{{.*}} : memref<30x7xf32>)
func.func @strided(%x: memref<2x3x5x7xf32, strided<[210, 70, 14, 1]>>, %y: memref<2x3x5x7xf32>) {
  linalg.copy ins(%x : memref<2x3x5x7xf32, strided<[210, 70, 14, 1]>>) outs(%y : memref<2x3x5x7xf32>)
  return
}

// -----

// A transpose reads its input in another order: nothing merges.
// CHECK-LABEL: func.func @transpose(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         linalg.generic
func.func @transpose(%x: memref<4x6xf32>, %y: memref<6x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (b, a)>, affine_map<(a, b) -> (a, b)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x6xf32>) outs(%y : memref<6x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A reduction keeps its loops (its init fill would no longer fuse with it).
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT:     memref.collapse_shape
func.func @row_sum(%x: memref<4x6x8xf32>, %y: memref<4x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<4x6x8xf32>) outs(%y : memref<4x6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A map with constant results (a unit dimension broadcast, as torch-mlir
// exports it) is left alone.
// CHECK-LABEL: func.func @unit_broadcast(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         linalg.generic
func.func @unit_broadcast(%x: memref<1x12x1xf32>, %y: memref<1x12x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (0, b, 0)>, affine_map<(a, b, c) -> (a, b, c)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<1x12x1xf32>) outs(%y : memref<1x12x1xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
