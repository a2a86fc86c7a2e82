// RUN: soap-opt %s --soap-dump-graph -o /dev/null | FileCheck %s

// A lookup of constant positions in an embedding table computes from
// parameters only, but it reduces (over the table's rows): it is a layer
// reading the table, not a derived parameter of the looked-up rows' shape,
// so that its tiles read, and its gradient updates, only the columns they
// use. The position ids are an integer constant: data, not a parameter
// (no gradient to synchronize). The transposed weight the matmul reads is
// still a view of its parameter.

// CHECK: graph @positions: 2 nodes, 6 tensors, 192 parameters in 2 tensors
// CHECK: node 0 "generic_0" linalg.generic loops=[S:4, P:8, R:16]
// CHECK-NEXT: in cst0 [4] input (d0)
// CHECK-NEXT: in arg1 [16x8] param (d2, d1)
// CHECK-NEXT: in arg0 [4x8] input (d0, d1)
// CHECK: node 1 "matmul_0" linalg.matmul
// CHECK-NEXT: in generic_0 [4x8] from 0 (d0, d2)
// CHECK-NEXT: in arg2 [8x8] param (d1, d2)

#ids = affine_map<(d0, d1, d2) -> (d0)>
#table = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @positions(%x: tensor<4x8xf32>, %table: tensor<16x8xf32> {soap.parameter},
                     %w: tensor<8x8xf32> {soap.parameter}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %pos = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %wt = tensor.empty() : tensor<8x8xf32>
  %t = linalg.transpose ins(%w : tensor<8x8xf32>) outs(%wt : tensor<8x8xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#ids, #table, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%pos, %table : tensor<4xi64>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%i: i64, %v: f32, %o: f32):
    %r = linalg.index 2 : index
    %ri = arith.index_cast %r : index to i64
    %hit = arith.cmpi eq, %i, %ri : i64
    %s = arith.select %hit, %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %p : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %t : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
