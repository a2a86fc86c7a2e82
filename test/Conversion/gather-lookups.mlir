// RUN: soap-opt %s --soap-gather-lookups --split-input-file --mlir-print-local-scope | FileCheck %s

// An embedding lookup (the zoo's form): 2 x 3 ids into a 100 x 8 table,
// a select reduction over the 100 rows. It becomes a parallel op over the
// ids and columns that extracts the id's row (an id out of [0, 100) keeps
// the start value).
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %[[IDS:.*]]: tensor<2x3xi64>, %[[TABLE:.*]]: tensor<100x8xf32>
// CHECK:         %[[START:.*]] = linalg.fill
// CHECK:         %[[OUT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IDS]] : tensor<2x3xi64>) outs(%[[START]] : tensor<2x3x8xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:.*]]: i64, %[[ACC:.*]]: f32):
// CHECK-DAG:       %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:       %[[ROWS:.*]] = arith.constant 100 : i64
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[ID]], %[[ZERO]] : i64
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[ID]], %[[ROWS]] : i64
// CHECK:           %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK:           %[[SAFE:.*]] = arith.select %[[IN]], %[[ID]], %{{.*}} : i64
// CHECK:           %[[ROW:.*]] = arith.index_cast %[[SAFE]] : i64 to index
// CHECK:           %[[COL:.*]] = linalg.index 2 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]] : tensor<100x8xf32>
// CHECK:           %[[R:.*]] = arith.select %[[IN]], %[[V]], %[[ACC]] : f32
// CHECK:           linalg.yield %[[R]] : f32
// CHECK:         return %[[OUT]]
func.func @embedding(%ids: tensor<2x3xi64>, %table: tensor<100x8xf32>) -> tensor<2x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, t, h, v) -> (b, t)>, affine_map<(b, t, h, v) -> (v, h)>, affine_map<(b, t, h, v) -> (b, t, h)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<2x3xi64>, tensor<100x8xf32>) outs(%f : tensor<2x3x8xf32>) {
  ^bb0(%id: i64, %w: f32, %acc: f32):
    %v = linalg.index 3 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  return %r : tensor<2x3x8xf32>
}

// -----

// The row loop first and the comparison the other way round; i32 ids.
// CHECK-LABEL: func.func @row_loop_first(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<4xi32>)
// CHECK:           arith.constant 50 : i32
// CHECK:           %[[COL:.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %[[COL]]] : tensor<50x6xf32>
func.func @row_loop_first(%ids: tensor<4xi32>, %table: tensor<50x6xf32>, %start: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(v, b, h) -> (b)>, affine_map<(v, b, h) -> (v, h)>, affine_map<(v, b, h) -> (b, h)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%ids, %table : tensor<4xi32>, tensor<50x6xf32>) outs(%start : tensor<4x6xf32>) {
  ^bb0(%id: i32, %w: f32, %acc: f32):
    %v = linalg.index 0 : index
    %vi = arith.index_cast %v : index to i32
    %eq = arith.cmpi eq, %vi, %id : i32
    %s = arith.select %eq, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

// Left alone: the gradient of the table (a sum, not a select of the
// accumulator); a comparison other than equality.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.extract
// CHECK-COUNT-2: iterator_types = [{{.*}}"reduction"
// CHECK-NOT:     tensor.extract
func.func @kept(%ids: tensor<2x3xi64>, %dy: tensor<2x3x8xf32>, %table: tensor<100x8xf32>, %gstart: tensor<100x8xf32>, %start: tensor<2x3x8xf32>)
    -> (tensor<100x8xf32>, tensor<2x3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %grad = linalg.generic {indexing_maps = [affine_map<(b, t, v, h) -> (b, t)>, affine_map<(b, t, v, h) -> (b, t, h)>, affine_map<(b, t, v, h) -> (v, h)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%ids, %dy : tensor<2x3xi64>, tensor<2x3x8xf32>) outs(%gstart : tensor<100x8xf32>) {
  ^bb0(%id: i64, %g: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %g, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  } -> tensor<100x8xf32>
  %less = linalg.generic {indexing_maps = [affine_map<(b, t, h, v) -> (b, t)>, affine_map<(b, t, h, v) -> (v, h)>, affine_map<(b, t, h, v) -> (b, t, h)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<2x3xi64>, tensor<100x8xf32>) outs(%start : tensor<2x3x8xf32>) {
  ^bb0(%id: i64, %w: f32, %acc: f32):
    %v = linalg.index 3 : index
    %vi = arith.index_cast %v : index to i64
    %lt = arith.cmpi slt, %id, %vi : i64
    %s = arith.select %lt, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  return %grad, %less : tensor<100x8xf32>, tensor<2x3x8xf32>
}

// -----

// Tiles of a lookup split over the table's rows (vocabulary parallelism):
// rows [100, 200) of the table, the loop index shifted by arith.addi (and,
// as upstream tiling writes it, by affine.apply). The id selects row
// id - 100 of the tile, where 100 <= id < 200.
// CHECK-LABEL: func.func @row_tiles(
// CHECK-SAME:    %{{.*}}: tensor<2x3xi64>, %[[TABLE:.*]]: tensor<100x8xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT:    ^bb0(%[[ID:.*]]: i64, %[[ACC:.*]]: f32):
// CHECK-DAG:       %[[FIRST:.*]] = arith.constant 100 : i64
// CHECK-DAG:       %[[END:.*]] = arith.constant 200 : i64
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[ID]], %[[FIRST]] : i64
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[ID]], %[[END]] : i64
// CHECK:           %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK:           %[[FIRST2:.*]] = arith.constant 100 : i64
// CHECK:           %[[SAFE:.*]] = arith.select %[[IN]], %[[ID]], %[[FIRST2]] : i64
// CHECK:           %[[LOCAL:.*]] = arith.subi %[[SAFE]], %[[FIRST2]] : i64
// CHECK:           %[[ROW:.*]] = arith.index_cast %[[LOCAL]] : i64 to index
// CHECK:           tensor.extract %[[TABLE]][%[[ROW]], %{{.*}}] : tensor<100x8xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:           arith.constant 300 : i64
// CHECK:           arith.constant 400 : i64
// CHECK-NOT:     "reduction"
func.func @row_tiles(%ids: tensor<2x3xi64>, %table: tensor<100x8xf32>, %start: tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %tile = linalg.generic {indexing_maps = [affine_map<(b, t, h, v) -> (b, t)>, affine_map<(b, t, h, v) -> (v, h)>, affine_map<(b, t, h, v) -> (b, t, h)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<2x3xi64>, tensor<100x8xf32>) outs(%start : tensor<2x3x8xf32>) {
  ^bb0(%id: i64, %w: f32, %acc: f32):
    %v = linalg.index 3 : index
    %c100 = arith.constant 100 : index
    %off = arith.addi %v, %c100 : index
    %vi = arith.index_cast %off : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  %tile2 = linalg.generic {indexing_maps = [affine_map<(b, t, h, v) -> (b, t)>, affine_map<(b, t, h, v) -> (v, h)>, affine_map<(b, t, h, v) -> (b, t, h)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<2x3xi64>, tensor<100x8xf32>) outs(%start : tensor<2x3x8xf32>) {
  ^bb0(%id: i64, %w: f32, %acc: f32):
    %v = linalg.index 3 : index
    %off = affine.apply affine_map<(d0) -> (d0 + 300)>(%v)
    %vi = arith.index_cast %off : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %w, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  return %tile, %tile2 : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}
