// RUN: soap-opt %s -split-input-file --soap-lift-constant-parameters | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-lift-constant-parameters="untie-splats=false train-statistics=true" | FileCheck %s --check-prefix=TIED

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

// One constant read twice (tied weights: an embedding table that is also
// the output layer) is one parameter; a table read inside a body (an
// embedding lookup) is read as data too.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %[[IDS:.*]]: tensor<2xindex>,
// CHECK-SAME: %[[T:.*]]: tensor<5x3xf32> {soap.initial_value = dense<{{.*}}> : tensor<5x3xf32>, soap.parameter})
// CHECK-NOT: arith.constant
// CHECK: tensor.extract %[[T]]
// CHECK: linalg.generic {{.*}} ins(%[[T]] :
#row = affine_map<(d0, d1) -> (d0)>
#rc = affine_map<(d0, d1) -> (d0, d1)>
#tt = affine_map<(d0, d1) -> (d1, d0)>
func.func @tied(%ids: tensor<2xindex>) -> (tensor<2x3xf32>, tensor<3x5xf32>) {
  %table = arith.constant dense<[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [1.0, 1.1, 1.2], [1.3, 1.4, 1.5]]> : tensor<5x3xf32>
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

// A splat read by several ops (torch-mlir merges the equal zero biases of a
// freshly initialized model into one constant) is one parameter per read,
// in the order of the reads, each at the location of the op that reads it;
// with untie-splats=false, one parameter.
// CHECK-LABEL: func.func @splat_biases(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// CHECK-SAME: %[[B1:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<0.000000e+00> : tensor<4xf32>, soap.parameter},
// CHECK-SAME: %[[B2:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<0.000000e+00> : tensor<4xf32>, soap.parameter})
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B1]] :
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[B2]] :
// TIED-LABEL: func.func @splat_biases(
// TIED-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// TIED-SAME: %[[B:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<0.000000e+00> : tensor<4xf32>, soap.parameter})
// TIED: %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] :
// TIED: linalg.generic {{.*}} ins(%[[H]], %[[B]] :
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#col3 = affine_map<(d0, d1) -> (d1)>
func.func @splat_biases(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %b = arith.constant dense<0.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel"]} ins(%h, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// torch-mlir's batch norm in an eval-mode export: one constant of ones is
// both the scale and the running variance, one of zeros both the shift and
// the running mean. The scale and the shift become parameters; the running
// statistics, read only as (x - mean) * rsqrt(var + eps), stay constants
// (with train-statistics=true they are lifted too).
// CHECK-LABEL: func.func @batch_norm(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// CHECK-SAME: %[[GAMMA:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<1.000000e+00> : tensor<4xf32>, soap.parameter},
// CHECK-SAME: %[[BETA:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<0.000000e+00> : tensor<4xf32>, soap.parameter})
// CHECK-DAG: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[GAMMA]], %[[BETA]], %[[ZEROS]], %[[ONES]] :
// TIED-LABEL: func.func @batch_norm(
// TIED-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// TIED-SAME: %[[ONES:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<1.000000e+00> : tensor<4xf32>, soap.parameter},
// TIED-SAME: %[[ZEROS:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<0.000000e+00> : tensor<4xf32>, soap.parameter})
// TIED: linalg.generic {{.*}} ins(%[[X]], %[[ONES]], %[[ZEROS]], %[[ZEROS]], %[[ONES]] :
#id4 = affine_map<(d0, d1) -> (d0, d1)>
#col4 = affine_map<(d0, d1) -> (d1)>
func.func @batch_norm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %ones = arith.constant dense<1.0> : tensor<4xf32>
  %zeros = arith.constant dense<0.0> : tensor<4xf32>
  %eps = arith.constant 1.0e-05 : f64
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #col4, #col4, #col4, #col4, #id4], iterator_types = ["parallel", "parallel"]} ins(%x, %ones, %zeros, %zeros, %ones : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %gamma: f32, %beta: f32, %mean: f32, %var: f32, %out: f32):
    %epsf = arith.truncf %eps : f64 to f32
    %v = arith.addf %var, %epsf : f32
    %r = math.rsqrt %v : f32
    %c = arith.subf %in, %mean : f32
    %n = arith.mulf %c, %r : f32
    %s = arith.mulf %n, %gamma : f32
    %t = arith.addf %s, %beta : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// The same with a division by sqrt(var + eps), eps first, each statistic its
// own constant: both stay constants, only the scale is lifted.
// CHECK-LABEL: func.func @batch_norm_div(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// CHECK-SAME: %[[GAMMA:[^:]*]]: tensor<4xf32> {soap.initial_value = dense<2.000000e+00> : tensor<4xf32>, soap.parameter})
// CHECK-DAG: %[[MEAN:.*]] = arith.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK-DAG: %[[VAR:.*]] = arith.constant dense<3.000000e+00> : tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MEAN]], %[[VAR]], %[[GAMMA]] :
#id6 = affine_map<(d0, d1) -> (d0, d1)>
#col6 = affine_map<(d0, d1) -> (d1)>
func.func @batch_norm_div(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %m = arith.constant dense<0.5> : tensor<4xf32>
  %v = arith.constant dense<3.0> : tensor<4xf32>
  %g = arith.constant dense<2.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id6, #col6, #col6, #col6, #id6], iterator_types = ["parallel", "parallel"]} ins(%x, %m, %v, %g : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %mean: f32, %var: f32, %gamma: f32, %out: f32):
    %eps = arith.constant 1.0e-05 : f32
    %ve = arith.addf %eps, %var : f32
    %s = math.sqrt %ve : f32
    %c = arith.subf %in, %mean : f32
    %n = arith.divf %c, %s : f32
    %t = arith.mulf %n, %gamma : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// The same reads where the "variance" is not under rsqrt(. + eps) (a
// learned scale inside a square root of the input): every read is a
// parameter.
// CHECK-LABEL: func.func @not_statistics(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {{.*}}soap.parameter},
// CHECK-SAME: %{{[^:]*}}: tensor<4xf32> {{.*}}soap.parameter})
// CHECK-NOT: arith.constant dense
#id5 = affine_map<(d0, d1) -> (d0, d1)>
#col5 = affine_map<(d0, d1) -> (d1)>
func.func @not_statistics(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %m = arith.constant dense<0.5> : tensor<4xf32>
  %w = arith.constant dense<2.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id5, #col5, #col5, #id5], iterator_types = ["parallel", "parallel"]} ins(%x, %m, %w : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %mean: f32, %scale: f32, %out: f32):
    %v = arith.addf %scale, %in : f32
    %r = math.rsqrt %v : f32
    %c = arith.subf %in, %mean : f32
    %n = arith.mulf %c, %r : f32
    linalg.yield %n : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
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

// -----

// A dense_resource blob (how torch-mlir writes large weights) read twice is
// one parameter: its elements are not known to be equal.
// CHECK-LABEL: func.func @blob(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>,
// CHECK-SAME: %[[B:[^:]*]]: tensor<4xf32> {soap.initial_value = dense_resource<bias> : tensor<4xf32>, soap.parameter})
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] :
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[B]] :
#id7 = affine_map<(d0, d1) -> (d0, d1)>
#col7 = affine_map<(d0, d1) -> (d1)>
func.func @blob(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %b = arith.constant dense_resource<bias> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id7, #col7, #id7], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id7, #col7, #id7], iterator_types = ["parallel", "parallel"]} ins(%h, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      bias: "0x040000000000803F0000004000004040000080C0"
    }
  }
#-}
