// RUN: soap-opt %s -split-input-file --soap-random-input-ranges | FileCheck %s

// A matmul weight K x N: fan-in K = 3, bound sqrt(6 / 3). The data and the
// bias (read by no sum of products) keep the runtime's defaults.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %{{.*}}: tensor<2x3xf32>,
// CHECK-SAME: %{{.*}}: tensor<3x4xf32> {soap.parameter, soap.random_range = array<f64: -1.4142135623730951, 1.4142135623730951>},
// CHECK-SAME: %{{.*}}: tensor<4xf32> {soap.parameter})
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @linear(%x: tensor<2x3xf32>, %w: tensor<3x4xf32> {soap.parameter},
                  %b: tensor<4xf32> {soap.parameter}) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// torch-mlir's linear: an N x K weight, transposed; the fan-in is still K
// (6: bound 1). No marks: the op-graph extraction's heuristic finds the
// weight.
// CHECK-LABEL: func.func @transposed(
// CHECK-SAME: %{{.*}}: tensor<2x6xf32>,
// CHECK-SAME: %{{.*}}: tensor<5x6xf32> {soap.random_range = array<f64: -1.000000e+00, 1.000000e+00>})
func.func @transposed(%x: tensor<2x6xf32>, %w: tensor<5x6xf32>) -> tensor<2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<6x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x6xf32>) outs(%et : tensor<6x5xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<2x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<2x6xf32>, tensor<6x5xf32>) outs(%acc : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %mm : tensor<2x5xf32>
}

// -----

// A convolution's filter F x C x KH x KW: fan-in C * KH * KW = 27; a
// depthwise one's KH * KW = 9 (bounds sqrt(6 / 27), sqrt(6 / 9)).
// CHECK-LABEL: func.func @convolutions(
// CHECK-SAME: %{{.*}}: tensor<1x3x8x8xf32>,
// CHECK-SAME: %{{.*}}: tensor<4x3x3x3xf32> {soap.parameter, soap.random_range = array<f64: -0.47140452079103168, 0.47140452079103168>},
// CHECK-SAME: %{{.*}}: tensor<4x3x3xf32> {soap.parameter, soap.random_range = array<f64: -0.81649658092772603, 0.81649658092772603>})
func.func @convolutions(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32> {soap.parameter},
                        %dw: tensor<4x3x3xf32> {soap.parameter}) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %dwc = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%c, %dw : tensor<1x4x6x6xf32>, tensor<4x3x3xf32>) outs(%acc2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %dwc : tensor<1x4x4x4xf32>
}

// -----

// A weight read by two products (tied input and output embeddings: x W and
// y W^T) takes the larger fan-in, 16 (bound sqrt(6 / 16)). A bf16 weight
// widened by a generic is traced through it. A weight with an initial value
// is filled from it, and a plain sum of a weight (no products) says nothing
// of its scale.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %{{.*}}: tensor<2x16xf32>, %{{.*}}: tensor<2x8xf32>,
// CHECK-SAME: %{{.*}}: tensor<16x8xf32> {soap.parameter, soap.random_range = array<f64: -0.61237243569579447, 0.61237243569579447>},
// CHECK-SAME: %{{.*}}: tensor<8x2xbf16> {soap.parameter, soap.random_range = array<f64: -0.8660254037844386, 0.8660254037844386>},
// CHECK-SAME: %{{.*}}: tensor<8x2xf32> {soap.initial_value = dense<5.000000e-01> : tensor<8x2xf32>, soap.parameter},
// CHECK-SAME: %{{.*}}: tensor<8xf32> {soap.parameter})
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sum_in = affine_map<(d0) -> (d0)>
#sum_out = affine_map<(d0) -> ()>
func.func @tied(%x: tensor<2x16xf32>, %y: tensor<2x8xf32>, %w: tensor<16x8xf32> {soap.parameter},
                %h: tensor<8x2xbf16> {soap.parameter},
                %init: tensor<8x2xf32> {soap.parameter, soap.initial_value = dense<0.5> : tensor<8x2xf32>},
                %v: tensor<8xf32> {soap.parameter})
    -> (tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = linalg.matmul ins(%x, %w : tensor<2x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<2x8xf32>) -> tensor<2x8xf32>
  %et = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%et : tensor<8x16xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x16xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %b = linalg.matmul ins(%y, %wt : tensor<2x8xf32>, tensor<8x16xf32>) outs(%acc2 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %ew = tensor.empty() : tensor<8x2xf32>
  %hw = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<8x2xbf16>) outs(%ew : tensor<8x2xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<8x2xf32>
  %e3 = tensor.empty() : tensor<2x2xf32>
  %acc3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = linalg.matmul ins(%y, %hw : tensor<2x8xf32>, tensor<8x2xf32>) outs(%acc3 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = linalg.matmul ins(%y, %init : tensor<2x8xf32>, tensor<8x2xf32>) outs(%acc3 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %es = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["reduction"]} ins(%v : tensor<8xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %t = arith.addf %in, %o : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %a, %b, %c, %d, %s : tensor<2x8xf32>, tensor<2x16xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>
}

// -----

// Embedding lookups (one-hot selections over a table's rows) draw their ids
// from the table's rows: [0, 20) for ids read against a 50-row and a 20-row
// table, [0, 50) for i32 ids widened to i64 and then compared. The tables
// (no sums of products) keep the defaults.
// CHECK-LABEL: func.func @lookups(
// CHECK-SAME: %{{.*}}: tensor<4xi64> {soap.random_range = array<f64: 0.000000e+00, 2.000000e+01>},
// CHECK-SAME: %{{.*}}: tensor<4xi32> {soap.random_range = array<f64: 0.000000e+00, 5.000000e+01>},
// CHECK-SAME: %{{.*}}: tensor<50x8xf32> {soap.parameter},
// CHECK-SAME: %{{.*}}: tensor<20x8xf32> {soap.parameter})
#ids = affine_map<(d0, d1, d2) -> (d0)>
#table = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @lookups(%ids: tensor<4xi64>, %narrow: tensor<4xi32>,
                   %big: tensor<50x8xf32> {soap.parameter},
                   %small: tensor<20x8xf32> {soap.parameter})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#ids, #table, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %big : tensor<4xi64>, tensor<50x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%i: i64, %v: f32, %o: f32):
    %r = linalg.index 2 : index
    %ri = arith.index_cast %r : index to i64
    %hit = arith.cmpi eq, %i, %ri : i64
    %s = arith.select %hit, %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#ids, #table, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %small : tensor<4xi64>, tensor<20x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%i: i64, %v: f32, %o: f32):
    %r = linalg.index 2 : index
    %ri = arith.index_cast %r : index to i64
    %hit = arith.cmpi eq, %ri, %i : i64
    %s = arith.select %hit, %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %ew = tensor.empty() : tensor<4xi64>
  %wide = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%narrow : tensor<4xi32>) outs(%ew : tensor<4xi64>) {
  ^bb0(%in: i32, %o: i64):
    %w = arith.extsi %in : i32 to i64
    linalg.yield %w : i64
  } -> tensor<4xi64>
  %c = linalg.generic {indexing_maps = [#ids, #table, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%wide, %big : tensor<4xi64>, tensor<50x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%i: i64, %v: f32, %o: f32):
    %r = linalg.index 2 : index
    %ri = arith.index_cast %r : index to i64
    %hit = arith.cmpi eq, %i, %ri : i64
    %s = arith.select %hit, %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// No more ids than the type holds: i8 ids against a 300-row table draw from
// [0, 128).
// CHECK-LABEL: func.func @narrow_ids(
// CHECK-SAME: %{{.*}}: tensor<4xi8> {soap.random_range = array<f64: 0.000000e+00, 1.280000e+02>},
#ids8 = affine_map<(d0, d1, d2) -> (d0)>
#table8 = affine_map<(d0, d1, d2) -> (d2, d1)>
#out8 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @narrow_ids(%ids: tensor<4xi8>, %table: tensor<300x8xf32> {soap.parameter}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#ids8, #table8, #out8], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<4xi8>, tensor<300x8xf32>) outs(%f : tensor<4x8xf32>) {
  ^bb0(%i: i8, %v: f32, %o: f32):
    %r = linalg.index 2 : index
    %ri = arith.index_cast %r : index to i8
    %hit = arith.cmpi eq, %i, %ri : i8
    %s = arith.select %hit, %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}
