// RUN: soap-opt %s -split-input-file --soap-strip-asserts --soap-lookup-reductions | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-import | FileCheck %s --check-prefix=IMPORT
// The lowering's soap-gather-lookups turns the result back into a gather.
// RUN: soap-opt %s -split-input-file --soap-strip-asserts --soap-lookup-reductions --soap-gather-lookups | FileCheck %s --check-prefix=GATHER

// torch-mlir's embedding: a parallel generic over the ids whose body
// extracts the id's row of a table captured from outside (the asserts on
// the id's range are stripped at import). It becomes a select reduction
// over the table's rows, the table an operand.
// CHECK-DAG: #[[IDMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[TMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[OMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding
// CHECK-SAME:    (%[[IDS:.*]]: tensor<2x5xi64>, %[[TABLE:.*]]: tensor<100x8xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK:         linalg.generic {indexing_maps = [#[[IDMAP]], #[[TMAP]], #[[OMAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[IDS]], %[[TABLE]] : tensor<2x5xi64>, tensor<100x8xf32>) outs(%[[INIT]] : tensor<2x5x8xf32>)
// CHECK:         ^bb0(%[[ID:.*]]: i64, %[[ROW:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:           %[[R:.*]] = linalg.index 3 : index
// CHECK:           %[[RI:.*]] = arith.index_cast %[[R]] : index to i64
// CHECK:           %[[HIT:.*]] = arith.cmpi eq, %[[ID]], %[[RI]] : i64
// CHECK:           %[[KEPT:.*]] = arith.select %[[HIT]], %[[ROW]], %[[ACC]] : f32
// CHECK:           linalg.yield %[[KEPT]] : f32
// CHECK-NOT:     tensor.extract
// GATHER-LABEL: func.func @embedding
// GATHER-SAME:    (%{{.*}}: tensor<2x5xi64>, %[[GTABLE:.*]]: tensor<100x8xf32>
// GATHER:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// GATHER:           tensor.extract %[[GTABLE]]
// GATHER-NOT:     arith.cmpi eq
// IMPORT-LABEL: func.func @embedding
// IMPORT-NOT:     cf.assert
// IMPORT-NOT:     tensor.extract
// IMPORT:         arith.cmpi eq
func.func @embedding(%ids: tensor<2x5xi64>, %table: tensor<100x8xf32> {soap.parameter}) -> tensor<2x5x8xf32> {
  %c100 = arith.constant 100 : index
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x5x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, t, h) -> (b, t)>, affine_map<(b, t, h) -> (b, t, h)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x5xi64>) outs(%e : tensor<2x5x8xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %h = linalg.index 2 : index
    %lt = arith.cmpi slt, %i, %c100 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %id, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %table[%i, %h] : tensor<100x8xf32>
    linalg.yield %v : f32
  } -> tensor<2x5x8xf32>
  return %r : tensor<2x5x8xf32>
}

// -----

// Left alone: the value is transformed after the extract, a table read at
// two ids, one read twice by the same loop (its diagonal), and one whose
// columns the loop covers only in part.
// CHECK-LABEL: func.func @not_lookups
// CHECK-COUNT-5: tensor.extract
func.func @not_lookups(%ids: tensor<4xi64>, %table: tensor<10x3xf32>, %cube: tensor<10x3x3xf32>, %wide: tensor<10x5xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3x3xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(p, h) -> (p)>, affine_map<(p, h) -> (p, h)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %h = linalg.index 1 : index
    %v = tensor.extract %table[%i, %h] : tensor<10x3xf32>
    %w = arith.addf %v, %v : f32
    linalg.yield %w : f32
  } -> tensor<4x3xf32>
  %square = linalg.generic {indexing_maps = [affine_map<(p, h) -> (p)>, affine_map<(p, h) -> (p, h)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %v = tensor.extract %table[%i, %i] : tensor<10x3xf32>
    %u = tensor.extract %table[%i, %i] : tensor<10x3xf32>
    %w = arith.mulf %v, %u : f32
    linalg.yield %w : f32
  } -> tensor<4x3xf32>
  %d = tensor.empty() : tensor<4x3x3xf32>
  %diag = linalg.generic {indexing_maps = [affine_map<(p, h, k) -> (p)>, affine_map<(p, h, k) -> (p, h, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%d : tensor<4x3x3xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %h = linalg.index 1 : index
    %v = tensor.extract %cube[%i, %h, %h] : tensor<10x3x3xf32>
    linalg.yield %v : f32
  } -> tensor<4x3x3xf32>
  %part = linalg.generic {indexing_maps = [affine_map<(p, h) -> (p)>, affine_map<(p, h) -> (p, h)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %h = linalg.index 1 : index
    %v = tensor.extract %wide[%i, %h] : tensor<10x5xf32>
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  return %scaled, %square, %diag, %part : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3x3xf32>, tensor<4x3xf32>
}

// -----

// torch-mlir's flip (here of a transposed convolution's filter: in and out
// channels swapped, the window reversed): a generic with no inputs whose
// body reads the captured filter at (j, i, 2 - kh, 2 - kw). The filter
// becomes an operand; the swapped dims read it through the loops, each
// reversed one through a new reduction loop r that keeps the element
// where k + r = 2 (a one-hot sum from zeros).
// CHECK-DAG: #[[WMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d0, d4, d5)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @flip
// GATHER-LABEL: func.func @flip
// CHECK-SAME:    (%[[W:.*]]: tensor<4x3x3x3xf32>
// CHECK:         %[[Z:.*]] = linalg.fill
// CHECK:         linalg.generic {indexing_maps = [#[[WMAP]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:      ins(%[[W]] : tensor<4x3x3x3xf32>) outs(%[[Z]] : tensor<3x4x3x3xf32>)
// CHECK:           %[[KH:.*]] = linalg.index 2
// CHECK:           %[[RH:.*]] = linalg.index 4
// CHECK:           %[[SH:.*]] = arith.addi %[[KH]], %[[RH]]
// CHECK:           arith.cmpi eq, %[[SH]], %{{.*}} : index
// CHECK:           arith.andi
// CHECK:           arith.select
// CHECK:           arith.addf
// CHECK-NOT:     tensor.extract
func.func @flip(%w: tensor<4x3x3x3xf32>) -> tensor<3x4x3x3xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<3x4x3x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<3x4x3x3xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %r2 = arith.subi %c2, %i2 : index
    %r3 = arith.subi %c2, %i3 : index
    %v = tensor.extract %w[%i1, %i0, %r2, %r3] : tensor<4x3x3x3xf32>
    linalg.yield %v : f32
  } -> tensor<3x4x3x3xf32>
  return %r : tensor<3x4x3x3xf32>
}

// -----

// A permutation without a reversal is a plain read through the map.
// CHECK-DAG: #[[TMAP:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transpose
// CHECK:         linalg.generic {indexing_maps = [#[[TMAP]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x3xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
func.func @transpose(%w: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<3x4xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %v = tensor.extract %w[%i1, %i0] : tensor<4x3xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Left alone: a reversal that does not start from the last element.
// CHECK-LABEL: func.func @shifted
// CHECK:         tensor.extract
func.func @shifted(%w: tensor<4xf32>) -> tensor<4xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %r0 = arith.subi %c2, %i0 : index
    %v = tensor.extract %w[%r0] : tensor<4xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// torch-mlir's nearest-neighbour upsampling by 2: the captured input read at
// (n, c, h floordiv 2, w floordiv 2). Each divided loop splits into (q, r):
// the input is read through (n, c, q_h, q_w), broadcast over r, and the
// result collapsed back.
// CHECK-DAG: #[[UPIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @upsample
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x3x3xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x2x3x2x3x2xf32>
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [#[[UPIN]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x2x3x3xf32>) outs(%[[E]] : tensor<1x2x3x2x3x2xf32>)
// CHECK:         tensor.collapse_shape %[[S]] {{\[}}[0], [1], [2, 3], [4, 5]] : tensor<1x2x3x2x3x2xf32> into tensor<1x2x6x6xf32>
// CHECK-NOT:     tensor.extract
func.func @upsample(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<1x2x6x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x2x6x6xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %q2 = arith.floordivsi %i2, %c2 : index
    %q3 = arith.floordivsi %i3, %c2 : index
    %v = tensor.extract %x[%i0, %i1, %q2, %q3] : tensor<1x2x3x3xf32>
    linalg.yield %v : f32
  } -> tensor<1x2x6x6xf32>
  return %r : tensor<1x2x6x6xf32>
}

// -----

// Left alone: an output of 7 rows is no whole number of blocks of 2.
// CHECK-LABEL: func.func @upsample_uneven
// CHECK:         tensor.extract
func.func @upsample_uneven(%x: tensor<3xf32>) -> tensor<7xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<7xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %q = arith.floordivsi %i0, %c2 : index
    %v = tensor.extract %x[%q] : tensor<3xf32>
    linalg.yield %v : f32
  } -> tensor<7xf32>
  return %r : tensor<7xf32>
}
