// RUN: soap-opt %s --soap-cuda-split-reductions="min-threads=1024 max-threads=2048" --split-input-file | FileCheck %s
// RUN: soap-opt %s --soap-cuda-split-reductions --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: not soap-opt %s --soap-cuda-split-reductions="min-threads=10 max-threads=5" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: soap-cuda-split-reductions: need 1 <= min-threads <= max-threads, min-reduction >= 2 and min-per-thread >= 1

// A bias gradient: 16 outputs, each a sum over 8 x 32 x 32. The batch loop
// becomes parallel whole (16 x 8 = 128 threads), then the row loop is split
// into 16 parallel x 2 sequential (2048 threads, each summing 2 x 32); a
// linalg.index of the rows becomes outer * 2 + inner. The second op sums
// the 128 partials of each channel into the original output.
// CHECK-LABEL: func.func @bias_grad(
// CHECK-SAME:    %[[G:.*]]: tensor<8x16x32x32xf32>)
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK:         %[[EXP:.*]] = tensor.expand_shape %[[G]] {{\[}}[0], [1], [2, 3], [4]] output_shape [8, 16, 16, 2, 32]
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[START:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<16x8x16xf32>)
// CHECK:         %[[PART:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[PMAP:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[EXP]] : tensor<8x16x16x2x32xf32>) outs(%[[START]] : tensor<16x8x16xf32>)
// CHECK:           %[[OUTER:.*]] = linalg.index 2 : index
// CHECK:           %[[INNER:.*]] = linalg.index 3 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[OUTER]], %{{.*}} : index
// CHECK:           arith.addi %[[SCALED]], %[[INNER]] : index
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[PART]] : tensor<16x8x16xf32>) outs(%[[INIT]] : tensor<16xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[SUM]]
// The defaults (16384 .. 65536 threads, each summing 16 or more): batch and
// rows whole, columns split 2 x 16 (8192 threads); the 512 partials of each
// channel are long enough to be split again (512 threads summing 8 x 2),
// and the last op sums 32 per channel: a reduction tree.
// DEFAULT-LABEL: func.func @bias_grad(
// DEFAULT:         tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] output_shape [8, 16, 32, 2, 16]
// DEFAULT:         %[[P1:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<8x16x32x2x16xf32>) outs(%{{.*}} : tensor<16x8x32x2xf32>)
// DEFAULT:         tensor.expand_shape %[[P1]] {{\[}}[0], [1], [2, 3], [4]] output_shape [16, 8, 4, 8, 2]
// DEFAULT:         %[[P2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x8x4xf32>)
// DEFAULT:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[P2]] : tensor<16x8x4xf32>) outs(%{{.*}} : tensor<16xf32>)
func.func @bias_grad(%g: tensor<8x16x32x32xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%g : tensor<8x16x32x32xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %m = arith.mulf %a, %fi : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A row maximum (softmax) of 4 rows of 4096, starting from the row's
// previous value: 4 x 256 partials of 16 from -inf, again 4 x 16 partials
// of 16, then the max of 16 into the start.
// CHECK-LABEL: func.func @row_max(
// CHECK-SAME:    %[[X:.*]]: tensor<4x4096xf32>, %[[S:.*]]: tensor<4xf32>)
// CHECK:         tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [4, 256, 16]
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<4x256xf32>)
// CHECK:         %[[PART:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:           arith.maximumf
// CHECK:         tensor.expand_shape %[[PART]] {{\[}}[0], [1, 2]] output_shape [4, 16, 16]
// CHECK:         %[[PART2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PART2]] : tensor<4x16xf32>) outs(%[[S]] : tensor<4xf32>)
// CHECK:           arith.maximumf
func.func @row_max(%x: tensor<4x4096xf32>, %start: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4096xf32>) outs(%start : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Left alone (1024 threads are enough here): enough outputs; a short
// reduction; a multiply-add (cuBLAS); a combiner that is not a sum / max /
// min.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @kept(%x: tensor<2048x512xf32>, %y: tensor<4x100xf32>, %a: tensor<4x4096xf32>, %b: tensor<4096x4xf32>)
    -> (tensor<2048xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2048xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2048xf32>) -> tensor<2048xf32>
  %many = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2048x512xf32>) outs(%f1 : tensor<2048xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<2048xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %short = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x100xf32>) outs(%f2 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x4096xf32>, tensor<4096x4xf32>) outs(%f3 : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %prod = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x4096xf32>) outs(%f2 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.mulf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %many, %short, %mm, %prod : tensor<2048xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>
}
