// RUN: soap-opt %s --soap-cuda-split-reductions="min-threads=1024 max-threads=2048" --split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: soap-opt %s --soap-cuda-split-reductions --split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: not soap-opt %s --soap-cuda-split-reductions="min-threads=10 max-threads=5" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: soap-cuda-split-reductions: need 1 <= min-threads <= max-threads, min-reduction >= 2 and min-per-thread >= 1

// A bias gradient: 16 outputs, each a sum over 8 x 32 x 32. The rows and
// columns, which the input holds as one contiguous run, become one loop of
// 1024 first (collapse_shape), and that loop, the input's contiguous one,
// splits interleaved: 8 sequential x 128 parallel, the parallel part the
// innermost loop (consecutive threads read consecutive floats): 16 x 128 =
// 2048 threads, each summing 8 x 8. A linalg.index of the batch stays;
// one of the rows or columns would be recomputed from outer * 128 + inner.
// The second op sums the 128 partials of each channel into the original
// output.
// CHECK-LABEL: func.func @bias_grad(
// CHECK-SAME:    %[[G:.*]]: tensor<8x16x32x32xf32>)
// CHECK:         %[[HW:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1], [2, 3]] : tensor<8x16x32x32xf32> into tensor<8x16x1024xf32>
// CHECK:         %[[EXP:.*]] = tensor.expand_shape %[[HW]] {{\[}}[0], [1], [2, 3]] output_shape [8, 16, 8, 128]
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[START:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<16x128xf32>)
// The partials: channel, the run's parallel part.
// CHECK:         %[[PART:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%[[EXP]] : tensor<8x16x8x128xf32>) outs(%[[START]] : tensor<16x128xf32>)
// CHECK:           %[[BATCH:.*]] = linalg.index 0 : index
// CHECK:           arith.index_cast %[[BATCH]] : index to i64
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK-NEXT:    %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PART]] : tensor<16x128xf32>) outs(%[[INIT]] : tensor<16xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[SUM]]
// The defaults (16384 .. 65536 threads, each summing 16 or more): the run
// of 1024 split 2 x 512 (8192 threads, each summing 8 x 2); the 512
// partials of each channel are long enough to be split again, interleaved
// by 32, and the last op sums 32 per channel: a reduction tree.
// DEFAULT-LABEL: func.func @bias_grad(
// DEFAULT:         tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<8x16x32x32xf32> into tensor<8x16x1024xf32>
// DEFAULT:         tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [8, 16, 2, 512]
// DEFAULT:         %[[P1:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<8x16x2x512xf32>) outs(%{{.*}} : tensor<16x512xf32>)
// DEFAULT:         tensor.expand_shape %[[P1]] {{\[}}[0], [1, 2]] output_shape [16, 16, 32]
// DEFAULT:         %[[P2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<16x16x32xf32>) outs(%{{.*}} : tensor<16x32xf32>)
// The output's zero fill comes right before the last op, not before the
// partials: their loops fuse into one kernel (scf-parallel-loop-fusion).
// DEFAULT:         %[[START:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// DEFAULT-NEXT:    linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P2]] : tensor<16x32xf32>) outs(%[[START]] : tensor<16xf32>)
func.func @bias_grad(%g: tensor<8x16x32x32xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%g : tensor<8x16x32x32xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %m = arith.mulf %a, %fi : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A scale gradient (sum of dY * X per channel: a multiply-add of two
// inputs that is no cuBLAS contraction, having no M and N loops): 8
// outputs, each over 4 x 2 x 512. The last two dimensions, one run of 1024
// in both inputs, become one loop, split interleaved: 4 sequential x 256
// parallel, the parallel part the last loop (element = outer * 256 +
// inner); 2048 threads, each summing 4 x 4. Before, it was left to cuBLAS,
// which takes only contractions with an M and an N: one thread per channel
// summed 4096 products.
// CHECK-LABEL: func.func @scale_grad(
// CHECK-SAME:    %[[DY:.*]]: tensor<4x8x2x512xf32>, %[[X:.*]]: tensor<4x8x2x512xf32>
// CHECK-DAG:     %[[RDY:.*]] = tensor.collapse_shape %[[DY]] {{\[}}[0], [1], [2, 3]] : tensor<4x8x2x512xf32> into tensor<4x8x1024xf32>
// CHECK-DAG:     %[[RX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<4x8x2x512xf32> into tensor<4x8x1024xf32>
// CHECK-DAG:     %[[EDY:.*]] = tensor.expand_shape %[[RDY]] {{\[}}[0], [1], [2, 3]] output_shape [4, 8, 4, 256]
// CHECK-DAG:     %[[EX:.*]] = tensor.expand_shape %[[RX]] {{\[}}[0], [1], [2, 3]] output_shape [4, 8, 4, 256]
// CHECK:         %[[PART:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%[[EDY]], %[[EX]] : {{.*}}) outs(%{{.*}} : tensor<8x256xf32>)
// The column the body reads (linalg.index 3 before): the merged element
// (outer * 256 + inner) modulo 512.
// CHECK:           %[[OUTER:.*]] = linalg.index 2 : index
// CHECK:           %[[INNER:.*]] = linalg.index 3 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[OUTER]], %c256
// CHECK:           %[[ELEMENT:.*]] = arith.addi %[[SCALED]], %[[INNER]]
// CHECK:           %[[COLUMN:.*]] = arith.remsi %[[ELEMENT]], %c512
// CHECK:           arith.index_cast %[[COLUMN]]
// CHECK:           arith.mulf
// The 256 partials of each channel: split again, then summed.
// CHECK:         tensor.expand_shape %[[PART]] {{\[}}[0], [1, 2]] output_shape [8, 16, 16]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x16xf32>) outs(%{{.*}} : tensor<8xf32>)
func.func @scale_grad(%dy: tensor<4x8x2x512xf32>, %x: tensor<4x8x2x512xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x : tensor<4x8x2x512xf32>, tensor<4x8x2x512xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %w = linalg.index 3 : index
    %wi = arith.index_cast %w : index to i64
    %wf = arith.sitofp %wi : i64 to f32
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %wf : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Two outputs over the same loops (soap-cuda-fuse-sibling-reductions'
// merged batch-norm gradients: sum of dY * X and max of dY per channel):
// split like one, each output its own partials from its own identity (0,
// -inf), both fills before the partials op (no allocation between them
// once bufferized, so they fuse into its kernel), and one combination op
// with each output's combiner, the outputs' fills right before it.
// CHECK-LABEL: func.func @two_outputs(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<8x256xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<8x256xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[S0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<8x256xf32>)
// CHECK-NEXT:    %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:    %[[S1:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%[[E1]] : tensor<8x256xf32>)
// CHECK-NEXT:    %[[PART:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3)>], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<4x8x4x256xf32>, tensor<4x8x4x256xf32>) outs(%[[S0]], %[[S1]] : tensor<8x256xf32>, tensor<8x256xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK:         %[[Q:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<8x16x16xf32>, tensor<8x16x16xf32>) outs(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK:         %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT:    %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[Q]]#0, %[[Q]]#1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%[[F0]], %[[F1]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[P0:.*]]: f32, %[[P1:.*]]: f32, %[[A0:.*]]: f32, %[[A1:.*]]: f32):
// CHECK-NEXT:      %[[C0:.*]] = arith.addf %[[P0]], %[[A0]] : f32
// CHECK-NEXT:      %[[C1:.*]] = arith.maximumf %[[P1]], %[[A1]] : f32
// CHECK-NEXT:      linalg.yield %[[C0]], %[[C1]] : f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @two_outputs(%dy: tensor<4x8x2x512xf32>, %x: tensor<4x8x2x512xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x : tensor<4x8x2x512xf32>, tensor<4x8x2x512xf32>) outs(%f0, %f1 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc0: f32, %acc1: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc0, %p : f32
    %m = arith.maximumf %acc1, %a : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Left whole: an output whose combined value reads the other output's
// accumulator (partials of it could not be combined).
// CHECK-LABEL: func.func @coupled_outputs(
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @coupled_outputs(%dy: tensor<4x8x2x512xf32>, %f0: tensor<8xf32>, %f1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<4x8x2x512xf32>) outs(%f0, %f1 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%a: f32, %acc0: f32, %acc1: f32):
    %s = arith.addf %acc0, %a : f32
    %p = arith.mulf %a, %acc0 : f32
    %t = arith.addf %acc1, %p : f32
    linalg.yield %s, %t : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A row maximum (softmax) of 4 rows of 4096, starting from the row's
// previous value: the row split interleaved, 16 sequential x 256 parallel
// (4 x 256 partials of 16, consecutive threads reading consecutive floats)
// from -inf, again 4 x 16 partials of 16, then the max of 16 into the
// start.
// CHECK-LABEL: func.func @row_max(
// CHECK-SAME:    %[[X:.*]]: tensor<4x4096xf32>, %[[S:.*]]: tensor<4xf32>)
// CHECK:         tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [4, 16, 256]
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<4x256xf32>)
// CHECK:         %[[PART:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]}
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

// Many outputs (2048 rows of 512: threads enough), but each thread would
// read its own row: the row split interleaved by one sector's worth (8
// f32), 64 sequential x 8 parallel, so that a warp reads 4 rows' sectors;
// the 8 partials of each row are summed by the second op.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME:    %[[X:.*]]: tensor<2048x512xf32>)
// CHECK:         %[[EXP:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [2048, 64, 8]
// CHECK:         %[[PART:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[EXP]] : tensor<2048x64x8xf32>) outs(%{{.*}} : tensor<2048x8xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PART]] : tensor<2048x8xf32>) outs(%{{.*}} : tensor<2048xf32>)
// CHECK-NOT:     linalg.generic
func.func @rows(%x: tensor<2048x512xf32>) -> tensor<2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2048x512xf32>) outs(%f : tensor<2048xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<2048xf32>
  return %r : tensor<2048xf32>
}

// -----

// Left alone (1024 threads are enough here): enough outputs, consecutive
// threads reading consecutive columns (a sum over rows); enough outputs and
// rows too short to split by a sector and still sum 16 each; a short
// reduction; a multiply-add (cuBLAS); a combiner that is not a sum / max /
// min.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @kept(%x: tensor<512x2048xf32>, %y: tensor<4x100xf32>, %a: tensor<4x4096xf32>, %b: tensor<4096x4xf32>, %z: tensor<2048x64xf32>)
    -> (tensor<2048xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2048xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2048xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2048xf32>) -> tensor<2048xf32>
  %columns = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x2048xf32>) outs(%f1 : tensor<2048xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<2048xf32>
  %short_rows = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<2048x64xf32>) outs(%f1 : tensor<2048xf32>) {
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
  return %columns, %short, %mm, %prod, %short_rows : tensor<2048xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<2048xf32>
}
