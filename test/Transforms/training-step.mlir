// RUN: soap-opt %s -split-input-file --soap-training-step="learning-rate=0.5" | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-training-step="returns=gradients" | FileCheck %s --check-prefix=GRAD
// RUN: soap-opt %s -split-input-file --soap-training-step="returns=outputs" | FileCheck %s --check-prefix=OUTPUTS

// A linear layer with bias and relu, its matmul split on the batch over
// devices 1 and 0. The step takes the result's cotangent, returns the result
// and the SGD-updated weight and bias. Each gradient runs over its forward
// op's loops with its forward op's config; the bias and weight gradients
// reduce over the (split) batch loop: partial sums the partitioner combines.

// CHECK-LABEL: func.func @fc(
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32>, %[[W:.*]]: tensor<4x6xf32> {soap.parameter}, %[[B:.*]]: tensor<6xf32> {soap.parameter}, %[[DY:.*]]: tensor<8x6xf32>)
// CHECK-SAME: -> (tensor<8x6xf32>, tensor<4x6xf32>, tensor<6xf32>)
// CHECK: %[[M:.*]] = linalg.matmul
// The forward relu, no longer grouped with the matmul, takes its layout.
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[B]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
// d(pre-activation): relu's gradient, elementwise.
// CHECK: %[[DM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[M]], %[[B]], %[[DY]] : {{.*}}soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>
// CHECK: arith.cmpf oge
// CHECK: arith.select
// d(bias): the batch loop is a reduction now.
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[M]], %[[B]], %[[DY]] : {{.*}}soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>
// d(weight) = x^T . dM over the matmul's loops (m, n, k), the matmul's config.
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[X]], %[[DM]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
// CHECK: arith.mulf
// CHECK: arith.addf
// No gradient for the data input x.
// CHECK-NOT: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: %[[NW:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[DW]] :
// CHECK: %[[LR:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf %[[LR]], %{{.*}}
// CHECK: arith.subf
// CHECK: %[[NB:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[DB]] :
// CHECK: return %[[Y]], %[[NW]], %[[NB]]

// In place: each update writes over the parameter (its destination, so
// bufferization can use the parameter's buffer), and its result is marked
// as the new value of that argument.
// OUTPUTS-LABEL: func.func @fc(
// OUTPUTS-SAME: -> (tensor<8x6xf32>, tensor<4x6xf32> {soap.updates_input = 1 : i64}, tensor<6xf32> {soap.updates_input = 2 : i64})
// OUTPUTS: %[[NW:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x6xf32>) outs(%arg1 : tensor<4x6xf32>)
// OUTPUTS: ^bb0(%[[G:.*]]: f32, %[[P:.*]]: f32):
// OUTPUTS: %[[S:.*]] = arith.mulf %{{.*}}, %[[G]]
// OUTPUTS: arith.subf %[[P]], %[[S]]
// OUTPUTS: %[[NB:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<6xf32>) outs(%arg2 : tensor<6xf32>)
// OUTPUTS: return %{{.*}}, %[[NW]], %[[NB]]

// GRAD-LABEL: func.func @fc(
// GRAD-SAME: -> (tensor<8x6xf32>, tensor<8x4xf32>, tensor<4x6xf32>, tensor<6xf32>)
// d(x) = dM . w^T: the k loop indexes x, the n loop is the reduction.
// GRAD: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]}
// GRAD: return %{{.*}}, %[[DX]], %{{.*}}, %{{.*}} :

#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @fc(%x: tensor<8x4xf32>, %w: tensor<4x6xf32> {soap.parameter},
              %b: tensor<6xf32> {soap.parameter}) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %m = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
      ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<8x6xf32>, tensor<6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// A stride-2 convolution (batch split in 2) and an overlapping 2x2 / 2
// max-pooling (channels split over devices 2, 3). The pooling's input
// gradient: the output gradient dilated by the stride (expand, pad the unit
// dims, collapse, pad by the window) and a window reduction that routes it to
// the maxima, with the pooling's config. The convolution's input gradient:
// a stride-1 convolution of the dilated gradient with the flipped filter,
// channels swapped, with the forward config mapped onto its loops.

// GRAD-LABEL: func.func @conv(
// GRAD-SAME: -> (tensor<2x4x2x2xf32>, tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>)
// GRAD: %[[P:.*]] = linalg.pooling_nchw_max
// GRAD: tensor.expand_shape %arg2 {{\[}}[0], [1], [2, 3], [4, 5]] output_shape [2, 4, 2, 1, 2, 1]
// GRAD: tensor.pad {{.*}} high[0, 0, 0, 1, 0, 1]
// GRAD: tensor.collapse_shape {{.*}} into tensor<2x4x4x4xf32>
// GRAD: %[[DD:.*]] = tensor.pad {{.*}} low[0, 0, 1, 1] high[0, 0, 0, 0]
// GRAD: %[[YD:.*]] = tensor.pad {{.*}} low[0, 0, 1, 1] high[0, 0, 0, 0]
// GRAD: %[[DC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}}, %[[DD]], %[[YD]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [1, 2, 1, 1, 1, 1], start = 2>}
// GRAD: arith.cmpf oeq
// GRAD: %[[DIL:.*]] = tensor.pad {{.*}} low[0, 0, 2, 2] high[0, 0, 1, 1]
// GRAD: to tensor<2x4x11x11xf32>
// GRAD: %[[FLIP:.*]] = linalg.generic {indexing_maps = [#[[FLIPMAP:.*]], #{{.*}}]
// GRAD-SAME: ins(%arg1 : tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<3x4x3x3xf32>)
// GRAD: %[[DX:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1]>, strides = dense<1> : tensor<2xi64>} ins(%[[DIL]], %[[FLIP]] :
// GRAD: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%arg0, %[[DC]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1]>}
// GRAD: return %[[P]], %[[DX]], %[[DW]]

// CHECK-LABEL: func.func @conv(
// CHECK-SAME: -> (tensor<2x4x2x2xf32>, tensor<4x3x3x3xf32>)

func.func @conv(%x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32> {soap.parameter}) -> tensor<2x4x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<2x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1]>}
      ins(%x, %w : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %ep = tensor.empty() : tensor<2x4x2x2xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>, soap.config = #soap.config<degrees = [1, 2, 1, 1, 1, 1], start = 2>}
      ins(%c, %win : tensor<2x4x4x4xf32>, tensor<2x2xf32>) outs(%fp : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
  return %p : tensor<2x4x2x2xf32>
}

// -----

// An embedding (a one-hot selection reduction over the vocabulary) through
// a reshape and a slice into tanh / exp / div. The table's gradient sums the
// cotangent into the selected rows; the integer ids get none.

// GRAD-LABEL: func.func @embed(
// GRAD-SAME: %arg2: tensor<8xf32>) -> (tensor<8xf32>, tensor<10x3xf32>)
// GRAD: %[[DT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg2 :
// GRAD: math.tanh
// GRAD: math.exp
// GRAD: arith.subf
// The slice's gradient: placed in zeros by a pad (the partitioner splits it).
// GRAD: %[[DI:.*]] = tensor.pad %[[DT]] low[2] high[2]
// GRAD: } : tensor<8xf32> to tensor<12xf32>
// GRAD: %[[DE:.*]] = tensor.expand_shape %[[DI]] {{\[}}[0, 1]] output_shape [4, 3]
// GRAD: %[[DTAB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg0, %[[DE]] :
// GRAD: arith.cmpi eq
// GRAD: arith.select
// GRAD: arith.addf
// GRAD: return %{{.*}}, %[[DTAB]]
#tok = affine_map<(d0, d1, d2) -> (d0)>
#tab = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @embed(%ids: tensor<4xi64>, %table: tensor<10x3xf32> {soap.parameter}) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %g = linalg.generic {indexing_maps = [#tok, #tab, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<4xi64>, tensor<10x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%i: i64, %t: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %i, %vi : i64
    %r = arith.select %hit, %t, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %c = tensor.collapse_shape %g [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  %s = tensor.extract_slice %c [2] [8] [1] : tensor<12xf32> to tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = math.tanh %a : f32
    %y = math.exp %x : f32
    %z = arith.divf %y, %a : f32
    linalg.yield %z : f32
  } -> tensor<8xf32>
  return %t : tensor<8xf32>
}
