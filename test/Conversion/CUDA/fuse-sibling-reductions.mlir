// RUN: soap-opt %s --soap-cuda-fuse-sibling-reductions --split-input-file --mlir-print-local-scope | FileCheck %s

// A batch norm's scale and bias gradients: sum of dY * X and sum of dY per
// channel, over the same loops, both reading dY. One op with two outputs,
// dY read once (one input), each body cloned in order.
// CHECK-LABEL: func.func @bn_grads(
// CHECK-SAME:    %[[DY:.*]]: tensor<4x8x5x5xf32>, %[[X:.*]]: tensor<4x8x5x5xf32>)
// CHECK:         %[[F0:.*]] = linalg.fill {{.*}} -> tensor<8xf32>
// CHECK:         %[[F1:.*]] = linalg.fill {{.*}} -> tensor<8xf32>
// CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%[[DY]], %[[X]] : tensor<4x8x5x5xf32>, tensor<4x8x5x5xf32>) outs(%[[F0]], %[[F1]] : tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC0:.*]]: f32, %[[ACC1:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[S0:.*]] = arith.addf %[[ACC0]], %[[P]] : f32
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[ACC1]], %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[S0]], %[[S1]] : f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @bn_grads(%dy: tensor<4x8x5x5xf32>, %x: tensor<4x8x5x5xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %scale = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %x : tensor<4x8x5x5xf32>, tensor<4x8x5x5xf32>) outs(%f0 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %bias = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<4x8x5x5xf32>) outs(%f1 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %scale, %bias : tensor<8xf32>, tensor<8xf32>
}

// -----

// A residual block's last batch norm and its shortcut's read the same dY:
// their four gradients become one op (a sum and a max here, each output
// keeping its combiner). The elementwise op between them is no obstacle.
// CHECK-LABEL: func.func @three_siblings(
// CHECK:         %[[R:.*]]:3 = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:           arith.addf
// CHECK:           linalg.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2, %{{.*}}
func.func @three_siblings(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %ee = tensor.empty() : tensor<4x8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%dy : tensor<4x8xf32>) outs(%ee : tensor<4x8xf32>) {
  ^bb0(%u: f32, %o: f32):
    %n = arith.negf %u : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<4x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.maximumf %acc, %u : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%z, %dy : tensor<4x8xf32>, tensor<4x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b, %c, %neg : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>
}

// -----

// Left alone where noted: each function keeps its two reductions (and
// the ops between), as the checks count.

// The second reads the first's result through an elementwise op.
// CHECK-LABEL: func.func @dependent(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @dependent(%dy: tensor<8x8xf32>, %f: tensor<8xf32>, %e2: tensor<8x8xf32>) -> tensor<8xf32> {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(n, c) -> (c)>, affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dy : tensor<8xf32>, tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %p = arith.mulf %u, %v : f32
    linalg.yield %p : f32
  } -> tensor<8x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %sc : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

// What reads the first's result before the second (here an elementwise op
// and, as in a data-parallel step, the first's all-reduce) moves after the
// merged op, in order.
// CHECK-LABEL: func.func @used_before(
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK:         %[[SUM:.*]] = soap.all_reduce %[[R]]#0 [0] [8] sum devices [0, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf32>)
// CHECK:         soap.all_reduce %[[R]]#1 [0] [8] max devices [0, 1]
func.func @used_before(%dy: tensor<8x8xf32>, %f: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %sum = soap.all_reduce %a [0] [8] sum devices [0, 1] : tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [affine_map<(c) -> (c)>, affine_map<(c) -> (c)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %o: f32):
    %p = arith.addf %u, %u : f32
    linalg.yield %p : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.maximumf %acc, %u : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %max = soap.all_reduce %b [0] [8] max devices [0, 1] : tensor<8xf32>
  return %twice, %max : tensor<8xf32>, tensor<8xf32>
}

// -----

// Left alone: the first's all-reduce would move past another
// communication (ranks must issue them in the same order).
// CHECK-LABEL: func.func @communication_between(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @communication_between(%dy: tensor<8x8xf32>, %f: tensor<8xf32>, %t: tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %sum = soap.all_reduce %a [0] [8] sum devices [0, 1] : tensor<8xf32>
  %other = soap.all_reduce %t [0] [4] sum devices [0, 1] : tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.maximumf %acc, %u : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %sum, %b, %other : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// Other output maps (column sums, row sums); other loops (iterator types);
// no input in common; the common input read through other maps.
// CHECK-LABEL: func.func @other_shapes(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @other_iterators(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @no_common_input(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @transposed_read(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @other_shapes(%dy: tensor<8x8xf32>, %f: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(c, n) -> (c, n)>, affine_map<(c, n) -> (c)>], iterator_types = ["parallel", "reduction"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
func.func @other_iterators(%dy: tensor<8x8xf32>, %f: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["parallel", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
func.func @no_common_input(%dy: tensor<8x8xf32>, %x: tensor<8x8xf32>, %f: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
func.func @transposed_read(%dy: tensor<8x8xf32>, %f: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(n, c) -> (c, n)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// Contractions go to cuBLAS, whole: two matmul-like generics reading dY,
// and a column sum of dY beside them, stay three ops.
// CHECK-LABEL: func.func @contractions(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @contractions(%dy: tensor<8x8xf32>, %w: tensor<8x8xf32>, %x: tensor<8x8xf32>, %e2: tensor<8x8xf32>, %f: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) {
  %mm = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %mm2 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (c)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<8x8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %mm, %mm2, %a : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>
}
