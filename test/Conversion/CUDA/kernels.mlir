// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-loop-order))" | FileCheck %s --check-prefix=ORDER
// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-loop-order, convert-linalg-to-parallel-loops, soap-cuda-map-loops{block-size=128}))" | FileCheck %s --check-prefix=MAP
// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-loop-order, convert-linalg-to-parallel-loops, soap-cuda-map-loops{block-size=128}, convert-parallel-loops-to-gpu, canonicalize))" | FileCheck %s --check-prefix=LAUNCH

// A column sum (reduction loop first): the parallel loop moves outside, so
// that it becomes the threads and each thread sums its column in order.
// ORDER-LABEL: func.func @column_sum(
// ORDER:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}

// The 16 columns, collapsed to one dimension and tiled by the block size:
// blocks along x, threads along x, the reduction a loop in each thread.
// MAP-LABEL:   func.func @column_sum(
// MAP:           scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// MAP:             scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// MAP:               scf.for
// MAP:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// MAP:         } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}

// LAUNCH-LABEL: func.func @column_sum(
// LAUNCH-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// LAUNCH-DAG:     %[[THREADS:.*]] = arith.constant 128 : index
// LAUNCH:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// LAUNCH:           scf.if
// LAUNCH:             scf.for
// LAUNCH:           gpu.terminator
func.func @column_sum(%x: memref<8x16xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (c)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An elementwise op over four dimensions becomes one flat kernel: one
// thread per element (2*3*5*7 = 210 elements, 2 blocks of 128).
// LAUNCH-LABEL: func.func @relu(
// LAUNCH-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// LAUNCH-DAG:     %[[THREADS:.*]] = arith.constant 128 : index
// LAUNCH:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[TWO]], {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]],
// LAUNCH-NOT:     gpu.launch
// LAUNCH:         arith.maximumf
// LAUNCH-NOT:     gpu.launch
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
