// RUN: soap-opt %s --soap-scatter-lookup-gradients --split-input-file | FileCheck %s

// The gradient of a 100 x 8 embedding table over 2 x 3 ids (what the
// training step makes of a lookup, bufferized): for each row, a sum over
// every id. It becomes a parallel loop over the ids and columns that adds
// each gradient element to its id's row, ids out of [0, 100) adding
// nothing.
// CHECK-LABEL: func.func @table_grad(
// CHECK-SAME:    %[[IDS:.*]]: memref<2x3xi64>, %[[DY:.*]]: memref<2x3x8xf32>, %[[DT:.*]]: memref<100x8xf32>)
// CHECK:         scf.parallel (%[[B:.*]], %[[T:.*]], %[[H:.*]]) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%c2, %c3, %c8)
// CHECK:           %[[ID:.*]] = memref.load %[[IDS]][%[[B]], %[[T]]] : memref<2x3xi64>
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[ID]], %{{.*}} : i64
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[ID]], %{{.*}} : i64
// CHECK:           %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:             %[[G:.*]] = memref.load %[[DY]][%[[B]], %[[T]], %[[H]]] : memref<2x3x8xf32>
// CHECK:             memref.atomic_rmw addf %[[G]], %[[DT]][%[[ROW]], %[[H]]] : (f32, memref<100x8xf32>) -> f32
// CHECK-NOT:     linalg.generic
func.func @table_grad(%ids: memref<2x3xi64>, %dy: memref<2x3x8xf32>, %dt: memref<100x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(b, t, v, h) -> (b, t)>, affine_map<(b, t, v, h) -> (b, t, h)>, affine_map<(b, t, v, h) -> (v, h)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%ids, %dy : memref<2x3xi64>, memref<2x3x8xf32>) outs(%dt : memref<100x8xf32>) {
  ^bb0(%id: i64, %g: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %g, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// The output gradients of two uses summed in the same op (elementwise
// fusion puts them there): the sum is computed in the loop, from the two
// inputs' elements, and added.
// CHECK-LABEL: func.func @fused_sum(
// CHECK-SAME:    %[[IDS:.*]]: memref<4xi32>, %[[G1:.*]]: memref<4x8xf32>, %[[G2:.*]]: memref<4x8xf32>, %[[DT:.*]]: memref<10x8xf32>)
// CHECK:         scf.parallel (%[[P:.*]], %[[H:.*]]) =
// CHECK:           %[[ID:.*]] = memref.load %[[IDS]][%[[P]]] : memref<4xi32>
// CHECK:           scf.if
// CHECK:             %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-DAG:         %[[A:.*]] = memref.load %[[G1]][%[[P]], %[[H]]]
// CHECK-DAG:         %[[B:.*]] = memref.load %[[G2]][%[[P]], %[[H]]]
// CHECK:             %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK:             memref.atomic_rmw addf %[[S]], %[[DT]][%[[ROW]], %[[H]]]
func.func @fused_sum(%ids: memref<4xi32>, %g1: memref<4x8xf32>, %g2: memref<4x8xf32>, %dt: memref<10x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(p, v, h) -> (p)>, affine_map<(p, v, h) -> (p, h)>, affine_map<(p, v, h) -> (p, h)>, affine_map<(p, v, h) -> (v, h)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%ids, %g1, %g2 : memref<4xi32>, memref<4x8xf32>, memref<4x8xf32>) outs(%dt : memref<10x8xf32>) {
  ^bb0(%id: i32, %a: f32, %b: f32, %acc: f32):
    %sum = arith.addf %a, %b : f32
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i32
    %eq = arith.cmpi eq, %vi, %id : i32
    %s = arith.select %eq, %sum, %zero : f32
    %r = arith.addf %s, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The gradient of rows [250, 500) of the table (a tile of a lookup split
// over the vocabulary, the row index shifted as upstream tiling writes it):
// ids in [250, 500) add to row id - 250 of the tile.
// CHECK-LABEL: func.func @row_tile_grad(
// CHECK-SAME:    %[[IDS:.*]]: memref<2x3xi64>, %[[DY:.*]]: memref<2x3x8xf32>, %[[DT:.*]]: memref<250x8xf32>)
// CHECK:           %[[ID:.*]] = memref.load %[[IDS]]
// CHECK-DAG:       %[[FIRST:.*]] = arith.constant 250 : i64
// CHECK-DAG:       %[[END:.*]] = arith.constant 500 : i64
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[ID]], %[[FIRST]] : i64
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[ID]], %[[END]] : i64
// CHECK:           %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK:           scf.if %[[IN]] {
// CHECK:             %[[OFF:.*]] = arith.constant 250 : i64
// CHECK:             %[[LOCAL:.*]] = arith.subi %[[ID]], %[[OFF]] : i64
// CHECK:             %[[ROW:.*]] = arith.index_cast %[[LOCAL]] : i64 to index
// CHECK:             memref.atomic_rmw addf %{{.*}}, %[[DT]][%[[ROW]], %{{.*}}] : (f32, memref<250x8xf32>) -> f32
// CHECK-NOT:     linalg.generic
func.func @row_tile_grad(%ids: memref<2x3xi64>, %dy: memref<2x3x8xf32>, %dt: memref<250x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(b, t, v, h) -> (b, t)>, affine_map<(b, t, v, h) -> (b, t, h)>, affine_map<(b, t, v, h) -> (v, h)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%ids, %dy : memref<2x3xi64>, memref<2x3x8xf32>) outs(%dt : memref<250x8xf32>) {
  ^bb0(%id: i64, %g: f32, %acc: f32):
    %v = linalg.index 2 : index
    %off = affine.apply affine_map<()[s0] -> (s0 + 250)>()[%v]
    %vi = arith.index_cast %off : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %g, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Left alone: tensors (the pass runs on buffers); a select of something
// other than zero; a row loop that the gradient also depends on.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     scf.parallel
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     memref.atomic_rmw
func.func @kept(%ids: memref<2x3xi64>, %dy: memref<2x3x8xf32>, %dt: memref<100x8xf32>,
                %tids: tensor<2x3xi64>, %tdy: tensor<2x3x8xf32>, %tdt: tensor<100x8xf32>, %wide: memref<2x3x100xf32>) -> tensor<100x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %t = linalg.generic {indexing_maps = [affine_map<(b, t, v, h) -> (b, t)>, affine_map<(b, t, v, h) -> (b, t, h)>, affine_map<(b, t, v, h) -> (v, h)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%tids, %tdy : tensor<2x3xi64>, tensor<2x3x8xf32>) outs(%tdt : tensor<100x8xf32>) {
  ^bb0(%id: i64, %g: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %g, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  } -> tensor<100x8xf32>
  linalg.generic {indexing_maps = [affine_map<(b, t, v, h) -> (b, t)>, affine_map<(b, t, v, h) -> (b, t, h)>, affine_map<(b, t, v, h) -> (v, h)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%ids, %dy : memref<2x3xi64>, memref<2x3x8xf32>) outs(%dt : memref<100x8xf32>) {
  ^bb0(%id: i64, %g: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %g, %one : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, t, v, h) -> (b, t)>, affine_map<(b, t, v, h) -> (b, t, v)>, affine_map<(b, t, v, h) -> (v, h)>], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%ids, %wide : memref<2x3xi64>, memref<2x3x100xf32>) outs(%dt : memref<100x8xf32>) {
  ^bb0(%id: i64, %g: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %g, %zero : f32
    %a = arith.addf %acc, %s : f32
    linalg.yield %a : f32
  }
  return %t : tensor<100x8xf32>
}
