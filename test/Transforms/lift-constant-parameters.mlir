// RUN: soap-opt %s -split-input-file --soap-lift-constant-parameters | FileCheck %s

// torch-mlir style: the weights are constants. Each one read as data becomes
// an argument (soap.parameter, soap.initial_value), in the order of the
// body; the zero init of the matmul's accumulator, the scalar and the
// integer constant stay.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>,
// CHECK-SAME: %[[W:.*]]: tensor<3x4xf32> {soap.initial_value = dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<3x4xf32>, soap.parameter},
// CHECK-SAME: %[[B:.*]]: tensor<4xf32> {soap.initial_value = dense<5.000000e-01> : tensor<4xf32>, soap.parameter})
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2x4xf32>
// CHECK-DAG: arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: arith.constant dense<7> : tensor<4xi64>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ZERO]] :
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[B]], %{{.*}} :
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @linear(%x: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<4xi64>) {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %zero = arith.constant dense<0.0> : tensor<2x4xf32>
  %b = arith.constant dense<0.5> : tensor<4xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %ids = arith.constant dense<7> : tensor<4xi64>
  %mm = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%zero : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b, %two : tensor<2x4xf32>, tensor<4xf32>, tensor<f32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %s: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.mulf %t, %s : f32
    linalg.yield %u : f32
  } -> tensor<2x4xf32>
  return %y, %ids : tensor<2x4xf32>, tensor<4xi64>
}

// -----

// One constant read twice (tied weights, or equal ones an exporter merged)
// is one parameter; a table read inside a body (an embedding lookup) is
// read as data too.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %[[IDS:.*]]: tensor<2xindex>,
// CHECK-SAME: %[[T:.*]]: tensor<5x3xf32> {soap.initial_value = dense<2.500000e-01> : tensor<5x3xf32>, soap.parameter})
// CHECK-NOT: arith.constant dense<2.5
// CHECK: tensor.extract %[[T]]
// CHECK: linalg.generic {{.*}} ins(%[[T]] :
#row = affine_map<(d0, d1) -> (d0)>
#rc = affine_map<(d0, d1) -> (d0, d1)>
#tt = affine_map<(d0, d1) -> (d1, d0)>
func.func @tied(%ids: tensor<2xindex>) -> (tensor<2x3xf32>, tensor<3x5xf32>) {
  %table = arith.constant dense<0.25> : tensor<5x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %rows = linalg.generic {indexing_maps = [#row, #rc], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<2xindex>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%i: index, %o: f32):
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<5x3xf32>
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<3x5xf32>
  %tr = linalg.generic {indexing_maps = [#tt, #rc], iterator_types = ["parallel", "parallel"]} ins(%table : tensor<5x3xf32>) outs(%e2 : tensor<3x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<3x5xf32>
  return %rows, %tr : tensor<2x3xf32>, tensor<3x5xf32>
}

// -----

// A model whose weights are arguments already is left alone, constants
// included.
// CHECK-LABEL: func.func @has_parameters(
// CHECK-SAME: %{{.*}}: tensor<3x4xf32> {soap.parameter})
// CHECK: arith.constant dense<1.000000e+00> : tensor<4xf32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col2 = affine_map<(d0, d1) -> (d1)>
func.func @has_parameters(%x: tensor<2x3xf32>, %w: tensor<3x4xf32> {soap.parameter}) -> tensor<2x4xf32> {
  %zero = arith.constant dense<0.0> : tensor<2x4xf32>
  %c = arith.constant dense<1.0> : tensor<4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%zero : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%mm, %c : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
