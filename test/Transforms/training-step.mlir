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
// Each update right after its gradient (the last op it waits for), not at
// the end of the step.
// CHECK: %[[NB:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[DB]] :
// CHECK: %[[LRB:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf %[[LRB]], %{{.*}}
// CHECK: arith.subf
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

// A stride-2 convolution (batch split in 2) and a 2x2 / 2 max-pooling
// (channels split over devices 2, 3). The pooling's input gradient: rows and
// columns split into blocks of the stride (h = 2 q + r), a reduction over
// the one window that holds each element that routes the gradient to the
// maxima (no mask: the window is the block), with the pooling's config on
// its (n, c, q) loops, collapsed back. The convolution's input gradient:
// a stride-1 convolution of the dilated gradient with the flipped filter,
// channels swapped, with the forward config mapped onto its loops.

// GRAD-LABEL: func.func @conv(
// GRAD-SAME: -> (tensor<2x4x2x2xf32>, tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>)
// GRAD: %[[P:.*]] = linalg.pooling_nchw_max
// GRAD: %[[ONE:.*]] = tensor.empty() : tensor<1x1xf32>
// GRAD: %[[XB:.*]] = tensor.expand_shape %[[C:.*]] {{\[}}[0], [1], [2, 3], [4, 5]] output_shape [2, 4, 2, 2, 2, 2]
// GRAD: %[[DC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[ONE]], %[[XB]], %arg2, %[[P]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [1, 2, 1, 1, 1, 1, 1, 1], start = 2>}
// GRAD-NEXT: ^bb
// GRAD-NEXT: arith.cmpf oeq
// GRAD-NOT: linalg.index
// GRAD: linalg.yield
// GRAD: %[[DCC:.*]] = tensor.collapse_shape %[[DC]] {{\[}}[0], [1], [2, 3], [4, 5]] {{.*}} : tensor<2x4x2x2x2x2xf32> into tensor<2x4x4x4xf32>
// GRAD: tensor.expand_shape %[[DCC]] {{\[}}[0], [1], [2, 3], [4, 5]] output_shape [2, 4, 4, 1, 4, 1]
// GRAD: tensor.pad {{.*}} high[0, 0, 0, 1, 0, 1]
// GRAD: tensor.collapse_shape {{.*}} into tensor<2x4x8x8xf32>
// GRAD: %[[DIL:.*]] = tensor.pad {{.*}} low[0, 0, 2, 2] high[0, 0, 1, 1]
// GRAD: to tensor<2x4x11x11xf32>
// GRAD: %[[FLIP:.*]] = linalg.generic {indexing_maps = [#[[FLIPMAP:.*]], #{{.*}}]
// GRAD-SAME: ins(%arg1 : tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<3x4x3x3xf32>)
// GRAD: %[[DX:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1]>, strides = dense<1> : tensor<2xi64>} ins(%[[DIL]], %[[FLIP]] :
// GRAD: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%arg0, %[[DCC]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1]>}
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

// The same 2x2 / 2 max-pooling channels-last (pooling_nhwc_max, channels
// split over devices 2, 3): the gradient's loops follow the tensor's dims,
// (n, qh, rh, qw, rw, c, eh, ew), and the pooling's config lands on n, qh,
// qw and c.
// GRAD-LABEL: func.func @pool_nhwc(
// GRAD: %[[P:.*]] = linalg.pooling_nhwc_max
// GRAD: %[[XB:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4], [5]] output_shape [2, 2, 2, 2, 2, 4]
// GRAD: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %[[XB]], %arg2, %[[P]] : {{.*}} attrs = {soap.config = #soap.config<degrees = [1, 1, 1, 1, 1, 2, 1, 1], start = 2>}
// GRAD: tensor.collapse_shape %[[DX]] {{\[}}[0], [1, 2], [3, 4], [5]] {{.*}} : tensor<2x2x2x2x2x4xf32> into tensor<2x4x4x4xf32>
func.func @pool_nhwc(%x: tensor<2x4x4x4xf32>, %s: tensor<4xf32> {soap.parameter}) -> tensor<2x2x2x4xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<2x4x4x4xf32>
  %xs = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<2x4x4x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x4x4x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %ep = tensor.empty() : tensor<2x2x2x4xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>, soap.config = #soap.config<degrees = [1, 1, 1, 2, 1, 1], start = 2>}
      ins(%xs, %win : tensor<2x4x4x4xf32>, tensor<2x2xf32>) outs(%fp : tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  return %p : tensor<2x2x2x4xf32>
}

// -----

// A grouped convolution (torch-mlir's export of groups > 1; groups split in
// 2, stride 2): its input gradient is a stride-1 grouped convolution of the
// dilated gradient, the filter flipped in its window with its output and
// input channels swapped ([G, F, C, KH, KW] -> [G, C, F, KH, KW]); its
// loops (n, g, c, h, w, f, kh, kw) take the forward's groups split.

// GRAD-DAG: #[[GFLIP:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, -d3 + 2, -d4 + 2)>
// GRAD-LABEL: func.func @grouped(
// GRAD: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4], [5, 6]] output_shape [2, 2, 4, 4, 1, 4, 1]
// GRAD: tensor.pad {{.*}} high[0, 0, 0, 0, 1, 0, 1]
// GRAD: %[[DIL:.*]] = tensor.pad {{.*}} low[0, 0, 0, 2, 2] high[0, 0, 0, 1, 1]
// GRAD: to tensor<2x2x4x11x11xf32>
// GRAD: %[[FLIP:.*]] = linalg.generic {indexing_maps = [#[[GFLIP]], #{{.*}}]
// GRAD-SAME: ins(%arg1 : tensor<2x4x3x3x3xf32>) outs(%{{.*}} : tensor<2x3x4x3x3xf32>)
// GRAD: %[[DX:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [1, 2, 1, 1, 1, 1, 1, 1]>, strides = dense<1> : tensor<2xi64>} ins(%[[DIL]], %[[FLIP]] : tensor<2x2x4x11x11xf32>, tensor<2x3x4x3x3xf32>)
// GRAD-SAME: -> tensor<2x2x3x9x9xf32>
// GRAD: return %{{.*}}, %[[DX]], %{{.*}}

func.func @grouped(%x: tensor<2x2x3x9x9xf32>, %w: tensor<2x4x3x3x3xf32> {soap.parameter}) -> tensor<2x2x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x4x4x4xf32>) -> tensor<2x2x4x4x4xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, soap.config = #soap.config<degrees = [1, 2, 1, 1, 1, 1, 1, 1]>}
      ins(%x, %w : tensor<2x2x3x9x9xf32>, tensor<2x4x3x3x3xf32>) outs(%f : tensor<2x2x4x4x4xf32>) -> tensor<2x2x4x4x4xf32>
  return %c : tensor<2x2x4x4x4xf32>
}

// -----

// A channels-last depthwise convolution (JAX, TensorFlow; channels split
// in 2): rows and columns are dims 1 and 2, the filter [KH, KW, C] is
// flipped in its window only, and the input gradient's loops are the
// forward's.

// GRAD-DAG: #[[DFLIP:map[0-9]*]] = affine_map<(d0, d1, d2) -> (-d0 + 2, -d1 + 2, d2)>
// GRAD-LABEL: func.func @depthwise_nhwc(
// GRAD: %[[DIL:.*]] = tensor.pad {{.*}} low[0, 2, 2, 0] high[0, 2, 2, 0]
// GRAD: to tensor<2x9x9x4xf32>
// GRAD: %[[FLIP:.*]] = linalg.generic {indexing_maps = [#[[DFLIP]], #{{.*}}]
// GRAD-SAME: ins(%arg1 : tensor<3x3x4xf32>)
// GRAD: %[[DX:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [1, 1, 1, 2, 1, 1]>, strides = dense<1> : tensor<2xi64>} ins(%[[DIL]], %[[FLIP]] :
// GRAD-SAME: -> tensor<2x7x7x4xf32>
// GRAD: return %{{.*}}, %[[DX]], %{{.*}}

func.func @depthwise_nhwc(%x: tensor<2x7x7x4xf32>, %w: tensor<3x3x4xf32> {soap.parameter}) -> tensor<2x5x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5x5x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [1, 1, 1, 2, 1, 1]>}
      ins(%x, %w : tensor<2x7x7x4xf32>, tensor<3x3x4xf32>) outs(%f : tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  return %c : tensor<2x5x5x4xf32>
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

// -----

// Pooling input gradients that need masks. A 3x3 / 2 max-pooling of 5x5:
// x padded to whole 2x2 blocks (6x6) and split into them, the gradient and
// the maxima padded by one window before and after, two windows per
// dimension (eh, ew) with offset r + 2 - 2 e < 3, and the result sliced back
// to 5x5. A global 5x4 sum-pooling (stride 1: no blocks): the windows
// themselves (one: no padding); rows are all inside it, columns need
// 0 <= w - e < 4.

// GRAD-LABEL: func.func @pools(
// GRAD: %[[XS:.*]] = linalg.generic
// GRAD: %[[MP:.*]] = linalg.pooling_nchw_max
// GRAD: %[[GP:.*]] = linalg.pooling_nchw_sum
// GRAD: %[[ONE:.*]] = tensor.empty() : tensor<1x1xf32>
// GRAD: %[[DG:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[ONE]], %arg3 : tensor<1x1xf32>, tensor<1x2x1x1xf32>) outs(%{{.*}} : tensor<1x2x5x5xf32>)
// GRAD-NEXT: ^bb
// GRAD: %[[E:.*]] = linalg.index 5
// GRAD: %[[SE:.*]] = arith.muli %[[E]]
// GRAD: %[[Q:.*]] = linalg.index 3
// GRAD: %[[OFF:.*]] = arith.subi %{{.*}}, %[[SE]]
// GRAD: arith.cmpi slt, %[[OFF]], %c4
// GRAD: arith.cmpi sge, %[[OFF]], %c0
// GRAD-NOT: linalg.index
// GRAD: linalg.yield
// GRAD-NOT: tensor.collapse_shape %[[DG]]
// GRAD: %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
// GRAD: %[[XP:.*]] = tensor.pad %[[XS]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// GRAD: %[[XB:.*]] = tensor.expand_shape %[[XP]] {{.*}} output_shape [1, 2, 3, 2, 3, 2]
// GRAD: %[[GG:.*]] = tensor.pad %arg2 low[0, 0, 1, 1] high[0, 0, 1, 1]
// GRAD: %[[YY:.*]] = tensor.pad %[[MP]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// GRAD: %[[DM:.*]] = linalg.generic {{.*}} ins(%[[WIN]], %[[XB]], %[[GG]], %[[YY]] : {{.*}}) outs(%{{.*}} : tensor<1x2x3x2x3x2xf32>)
// GRAD-NEXT: ^bb
// GRAD-NEXT: %[[HIT:.*]] = arith.cmpf oeq
// GRAD-NEXT: linalg.index 3
// GRAD-NEXT: linalg.index 6
// GRAD: arith.cmpi slt, %{{.*}}, %c3
// GRAD: linalg.index 5
// GRAD-NEXT: linalg.index 7
// GRAD: arith.cmpi slt, %{{.*}}, %c3
// GRAD: linalg.yield
// GRAD: %[[DMC:.*]] = tensor.collapse_shape %[[DM]] {{.*}} into tensor<1x2x6x6xf32>
// GRAD: tensor.extract_slice %[[DMC]][0, 0, 0, 0] [1, 2, 5, 5] [1, 1, 1, 1]

func.func @pools(%x: tensor<1x2x5x5xf32>, %s: tensor<2xf32> {soap.parameter}) -> (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) {
  %ninf = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x5x5xf32>
  %xs = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<1x2x5x5xf32>, tensor<2xf32>) outs(%e : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x5x5xf32>
  %win3 = tensor.empty() : tensor<3x3xf32>
  %ep = tensor.empty() : tensor<1x2x2x2xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %mp = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%xs, %win3 : tensor<1x2x5x5xf32>, tensor<3x3xf32>) outs(%fp : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %win5 = tensor.empty() : tensor<5x4xf32>
  %eg = tensor.empty() : tensor<1x2x1x1xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %gp = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win5 : tensor<1x2x5x5xf32>, tensor<5x4xf32>) outs(%fg : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %mp, %gp : tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>
}

// -----

// The image's zero padding, read by the convolution and its filter
// gradient, becomes one pad per reader, without a config of its own: each
// is grouped with its reader, whose tiles pad the part they read (a layer
// of its own could not follow a split of the convolution's output width,
// and one device padded the whole image for the others).

// CHECK-LABEL: func.func @padded_image(
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-NOT: soap.config
// CHECK: } : tensor<4x3x8x8xf32> to tensor<4x3x10x10xf32>
// CHECK: %[[Q:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-NOT: soap.config
// CHECK: } : tensor<4x3x8x8xf32> to tensor<4x3x10x10xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1], devices = [1, 0]>{{.*}} ins(%[[Q]], %arg1
// CHECK: linalg.generic {{.*}} ins(%[[P]], %arg2
func.func @padded_image(%x: tensor<4x3x8x8xf32>, %w: tensor<6x3x3x3xf32> {soap.parameter}) -> tensor<4x6x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x3x8x8xf32> to tensor<4x3x10x10xf32>
  %e = tensor.empty() : tensor<4x6x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6x8x8xf32>) -> tensor<4x6x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1], devices = [1, 0]>}
    ins(%p, %w : tensor<4x3x10x10xf32>, tensor<6x3x3x3xf32>) outs(%f : tensor<4x6x8x8xf32>) -> tensor<4x6x8x8xf32>
  return %c : tensor<4x6x8x8xf32>
}

// -----

// A last layer whose bias add (fused after the matmul, so without a config
// of its own) reads nothing but the matmul: the bias gradient reads only
// the cotangent. It takes the layout the bias add gets from the matmul (the
// batch split over devices 1 and 0), so each device sums its own samples
// (a partial sum the partitioner all-reduces) instead of device 0 summing
// the whole batch and sending the others the result.

// CHECK-LABEL: func.func @last_bias(
// CHECK: linalg.matmul
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} attrs = {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%arg3 : tensor<8x6xf32>) {{.*}}soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>
func.func @last_bias(%x: tensor<8x4xf32>, %w: tensor<4x6xf32> {soap.parameter},
                     %b: tensor<6xf32> {soap.parameter}) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %m = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
      ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<8x6xf32>, tensor<6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// A reshape's gradient follows the batch split through merged dims: the
// collapse of (batch, rows) into one dim of 32 has as its gradient an
// expand of the matmul's input gradient, split on the 32 in two blocks of
// 16 = two blocks of the batch, so it takes degree 2 on its batch loop (on
// devices 1 and 0) rather than running whole on device 0 with the gradient
// gathered there (a transformer's attention heads: 588 transfers in a
// data-parallel step on 4 ranks, now 3).

// CHECK-LABEL: func.func @reshaped(
// CHECK: tensor.expand_shape {{.*}} output_shape [8, 4, 6] {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
func.func @reshaped(%x: tensor<8x4x3xf32>, %p: tensor<3x6xf32> {soap.parameter}, %w: tensor<6x5xf32> {soap.parameter}) -> tensor<32x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, r, c, k) -> (b, r, k)>, affine_map<(b, r, c, k) -> (k, c)>, affine_map<(b, r, c, k) -> (b, r, c)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"], soap.config = #soap.config<degrees = [2, 1, 1, 1], devices = [1, 0]>}
      ins(%x, %p : tensor<8x4x3xf32>, tensor<3x6xf32>) outs(%z : tensor<8x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4x6xf32>
  %c = tensor.collapse_shape %y [[0, 1], [2]] {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>} : tensor<8x4x6xf32> into tensor<32x6xf32>
  %e2 = tensor.empty() : tensor<32x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x5xf32>) -> tensor<32x5xf32>
  %r = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
      ins(%c, %w : tensor<32x6xf32>, tensor<6x5xf32>) outs(%f : tensor<32x5xf32>) -> tensor<32x5xf32>
  return %r : tensor<32x5xf32>
}

// -----

// A concatenation built of insert_slices: its gradient takes slices of the
// cotangent and writes zeros over them (a fill: no input at all). Those
// layers read no configured layer; they take the split of their readers,
// back from the product's gradient fused after them (the batch over
// devices 1 and 0), instead of device 0 (inception_v3's data-parallel step
// on 4 ranks: 108 transfers, now 3).

// CHECK-LABEL: func.func @inserted(
// CHECK: tensor.extract_slice %arg2[0, 6] [8, 6] [1, 1] {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
// CHECK: linalg.fill {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
// CHECK: tensor.insert_slice {{.*}} into %arg2[0, 6] [8, 6] [1, 1] {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
func.func @inserted(%x: tensor<8x6xf32>, %p: tensor<8x6xf32> {soap.parameter}) -> tensor<8x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
      ins(%x, %p : tensor<8x6xf32>, tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    linalg.yield %m : f32
  } -> tensor<8x6xf32>
  %d = tensor.empty() : tensor<8x12xf32>
  %i1 = tensor.insert_slice %a into %d[0, 0] [8, 6] [1, 1] {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>} : tensor<8x6xf32> into tensor<8x12xf32>
  %i2 = tensor.insert_slice %a into %i1[0, 6] [8, 6] [1, 1] {soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>} : tensor<8x6xf32> into tensor<8x12xf32>
  return %i2 : tensor<8x12xf32>
}

// -----

// A weight read by two matmuls (an RNN's time steps) and a bias read at
// constant rows (an LSTM's stacked gate biases: row 0 by both steps, row 1
// by the second): each gradient accumulates along its readers, the sum of
// the earlier steps (later in the backward pass) starting from the sum so
// far, one chain per row read, instead of separate sums from zeros added
// at the end. Split over the batch, the partial sums then stay on their
// devices along the chain, and one all-reduce per chain combines them
// (soap-partition).

// CHECK-LABEL: func.func @shared_weight(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32>, %[[W:[^:]*]]: tensor<4x4xf32> {soap.parameter}, %[[B:[^:]*]]: tensor<2x4xf32> {soap.parameter}, %[[DY:[^:]*]]: tensor<8x4xf32>)
// The second step's bias rows 0 and 1, from zeros (one chain each):
// CHECK: %[[Z0:.*]] = linalg.fill {{.*}} -> tensor<4xf32>
// CHECK: %[[ROW0:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[B]], %[[DY]] : {{.*}}) outs(%[[Z0]] : tensor<4xf32>)
// CHECK: %[[Z1:.*]] = linalg.fill {{.*}} -> tensor<4xf32>
// CHECK: %[[ROW1:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}}, %[[B]], %[[DY]] : {{.*}}) outs(%[[Z1]] : tensor<4xf32>)
// The second matmul's weight gradient, from zeros:
// CHECK: %[[ZW:.*]] = linalg.fill {{.*}} -> tensor<4x4xf32>
// CHECK: %[[DW2:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>) outs(%[[ZW]] : tensor<4x4xf32>)
// The first step's row 0 and weight gradients, onto the second's:
// CHECK: %[[ROW0ALL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<8x4xf32>) outs(%[[ROW0]] : tensor<4xf32>)
// The update adds each chain at its row itself (no zeros to place it in,
// no op that sums the rows first); it follows the last of them, before
// the weight's gradient is complete:
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%[[B]], %[[ROW0ALL]], %[[ROW1]] : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[P:[^:]*]]: f32, %[[G0:[^:]*]]: f32, %[[G1:[^:]*]]: f32, %{{[^:]*}}: f32):
// CHECK-NEXT: %[[I0:.*]] = linalg.index 0
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[AT0:.*]] = arith.cmpi eq, %[[I0]], %[[C0]]
// CHECK-NEXT: %[[Z0:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[T0:.*]] = arith.select %[[AT0]], %[[G0]], %[[Z0]]
// CHECK-NEXT: %[[I1:.*]] = linalg.index 0
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[AT1:.*]] = arith.cmpi eq, %[[I1]], %[[C1]]
// CHECK-NEXT: %[[Z1:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[T1:.*]] = arith.select %[[AT1]], %[[G1]], %[[Z1]]
// CHECK-NEXT: %[[DB:.*]] = arith.addf %[[T0]], %[[T1]]
// CHECK-NEXT: %[[LR:.*]] = arith.constant 5.0
// CHECK-NEXT: %[[STEP:.*]] = arith.mulf %[[LR]], %[[DB]]
// CHECK-NEXT: arith.subf %[[P]], %[[STEP]]
// The weight's gradient after it:
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[X]], %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>) outs(%[[DW2]] : tensor<4x4xf32>)
// No sum of separate gradients:
// CHECK-NOT: ins(%[[DW2]]
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[DW]] :

// Returned, the gradient is that sum on its own:
// GRAD-LABEL: func.func @shared_weight(
// GRAD-NOT: tensor.pad
// GRAD: %[[DB:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// GRAD: return %{{.*}}, %{{.*}}, %{{.*}}, %[[DB]] :

// In place, the update reads the rows' chain sums (left all-reduced on
// every device that holds the bias) and writes over the bias:
// OUTPUTS-LABEL: func.func @shared_weight(
// OUTPUTS-NOT: tensor.pad
// OUTPUTS: %[[NB:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>) outs(%arg2 : tensor<2x4xf32>)
// OUTPUTS: return %{{.*}}, %{{.*}}, %[[NB]] :

#id = affine_map<(d0, d1) -> (d0, d1)>
#row0 = affine_map<(d0, d1) -> (0, d1)>
#row1 = affine_map<(d0, d1) -> (1, d1)>
func.func @shared_weight(%x: tensor<8x4xf32>, %w: tensor<4x4xf32> {soap.parameter},
                         %b: tensor<2x4xf32> {soap.parameter}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h1 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
      ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #row0, #id], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
      ins(%h1, %b : tensor<8x4xf32>, tensor<2x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %h2 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
      ins(%a1, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #row0, #row1, #id], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1], devices = [1, 0]>}
      ins(%h2, %b, %b : tensor<8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    %t = arith.mulf %s, %r : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %a2 : tensor<8x4xf32>
}

// -----

// An activation read by two matmuls split by their output columns (the
// projections of a transformer's residual stream, an RNN layer's output
// read by its next step and by the next layer): its gradient is two
// reductions over those columns, the first reader's (later in the backward
// pass) summed onto the second's, one chain, as for a shared weight. The
// partitioner then combines the devices' partial sums once, not once per
// reader before adding the results up.

// CHECK-LABEL: func.func @shared_activation(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32>, %[[W0:[^:]*]]: tensor<4x6xf32> {soap.parameter}, %[[W1:[^:]*]]: tensor<6x4xf32> {soap.parameter}, %[[W2:[^:]*]]: tensor<6x4xf32> {soap.parameter}, %[[DY1:[^:]*]]: tensor<8x4xf32>, %[[DY2:[^:]*]]: tensor<8x4xf32>)
// The second reader's part, from zeros:
// CHECK: %[[Z:.*]] = linalg.fill ins({{.*}} -> tensor<8x6xf32>
// CHECK: %[[DH2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[W2]], %[[DY2]] : {{.*}}) outs(%[[Z]] : tensor<8x6xf32>) {{.*}}devices = [0, 1]>}
// The first reader's, onto it:
// CHECK: %[[DH:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[W1]], %[[DY1]] : {{.*}}) outs(%[[DH2]] : tensor<8x6xf32>) {{.*}}devices = [0, 1]>}
// No sum of separate gradients: the first matmul's weight gradient reads
// the chain's end.
// CHECK-NOT: ins(%[[DH2]]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[DH]] : tensor<8x4xf32>, tensor<8x6xf32>)

func.func @shared_activation(%x: tensor<8x4xf32>, %w0: tensor<4x6xf32> {soap.parameter},
                             %w1: tensor<6x4xf32> {soap.parameter},
                             %w2: tensor<6x4xf32> {soap.parameter}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e6 = tensor.empty() : tensor<8x6xf32>
  %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f6 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y1 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2], devices = [0, 1]>}
      ins(%h, %w1 : tensor<8x6xf32>, tensor<6x4xf32>) outs(%f4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y2 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2], devices = [0, 1]>}
      ins(%h, %w2 : tensor<8x6xf32>, tensor<6x4xf32>) outs(%f4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y1, %y2 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// An op a layer fuses after its anchor (a ReLU after a matmul on device 3)
// keeps the anchor's layout, although the next layer splits the batch over
// devices 1 and 2: the simulator runs it on its layer's tiles, so it is
// not sent there first. Its gradient takes it too.

// CHECK-LABEL: func.func @fused_stays(
// CHECK: %[[H:.*]] = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 1], devices = [3]>}
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<8x4xf32>) {{.*}}soap.config = #soap.config<degrees = [1, 1], start = 3>}
// CHECK: linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 2]>} ins(%[[R]],
// The ReLU's gradient:
// CHECK: linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>) {{.*}}soap.config = #soap.config<degrees = [1, 1], start = 3>}

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fused_stays(%x: tensor<8x4xf32>, %w1: tensor<4x4xf32> {soap.parameter},
                       %w2: tensor<4x4xf32> {soap.parameter}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 1], devices = [3]>}
      ins(%x, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.maximumf %p, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %y = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 2]>}
      ins(%r, %w2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Unmarked weights found by the heuristic (vectors beside matrix data): an
// eval-mode batch norm's running mean and variance, read only as
// (x - mean) * rsqrt(var + eps), are buffers, not weights. The step updates
// the weight, gamma and beta and leaves mean and var alone (PyTorch's
// optimizer does not touch buffers).
// CHECK-LABEL: func.func @batch_norm_buffers(
// CHECK-SAME: %{{[^:]*}}: tensor<2x4xf32>, %{{[^:]*}}: tensor<4x4xf32> {soap.parameter}, %{{[^:]*}}: tensor<4xf32> {soap.parameter}, %{{[^:]*}}: tensor<4xf32> {soap.parameter}, %[[MEAN:[^:]*]]: tensor<4xf32>, %[[VAR:[^:]*]]: tensor<4xf32>, %{{[^:]*}}: tensor<2x4xf32>)
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>)
#bn_id = affine_map<(d0, d1) -> (d0, d1)>
#bn_col = affine_map<(d0, d1) -> (d1)>
func.func @batch_norm_buffers(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>,
                              %gamma: tensor<4xf32>, %beta: tensor<4xf32>,
                              %mean: tensor<4xf32>, %var: tensor<4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#bn_id, #bn_col, #bn_col, #bn_col, #bn_col, #bn_id], iterator_types = ["parallel", "parallel"]} ins(%h, %gamma, %beta, %mean, %var : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %g: f32, %b: f32, %m: f32, %v: f32, %out: f32):
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    %c = arith.subf %in, %m : f32
    %n = arith.mulf %c, %r : f32
    %s = arith.mulf %n, %g : f32
    %t = arith.addf %s, %b : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A "same" convolution (input padded by 1) split over its output columns
// on 4 devices. Its input gradient is the stride-1 convolution of dY
// padded by K-1 - 1 = 1, over the unpadded input's 8 columns, which the
// forward's split of 4 divides: each device computes the gradient of its
// own columns (over the padded input's 10 columns the split would not
// divide, and one device would compute all of it).
// CHECK-LABEL: func.func @same_conv_width(
// CHECK: %[[DYP:.*]] = tensor.pad %arg3 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<2x6x8x8xf32> to tensor<2x6x10x10xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}soap.config = #soap.config<degrees = [1, 1, 1, 4, 1, 1, 1], devices = [3, 2, 1, 0]>{{.*}} ins(%[[DYP]], %{{.*}} : tensor<2x6x10x10xf32>, tensor<3x6x3x3xf32>) outs(%{{.*}} : tensor<2x3x8x8xf32>)
// CHECK-NOT: tensor.extract_slice
#scale_a = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4_a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @same_conv_width(%x: tensor<2x3x8x8xf32>, %s: tensor<3xf32> {soap.parameter}, %w: tensor<6x3x3x3xf32> {soap.parameter}) -> tensor<2x6x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.empty() : tensor<2x3x8x8xf32>
  %xs = linalg.generic {indexing_maps = [#id4_a, #scale_a, #id4_a], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<2x3x8x8xf32>, tensor<3xf32>) outs(%xe : tensor<2x3x8x8xf32>) attrs = {soap.config = #soap.config<degrees = [1, 1, 1, 4], devices = [3, 2, 1, 0]>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3x8x8xf32>
  %p = tensor.pad %xs low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
  %e = tensor.empty() : tensor<2x6x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [1, 1, 1, 4, 1, 1, 1], devices = [3, 2, 1, 0]>}
    ins(%p, %w : tensor<2x3x10x10xf32>, tensor<6x3x3x3xf32>) outs(%f : tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
  return %c : tensor<2x6x8x8xf32>
}

// -----

// A convolution whose window rows are split over devices 2, 0, 1. Its
// input gradient reads the filter flipped, row k at K-1 - k: its tile of
// window rows k runs on the device of the forward's tile of rows K-1 - k
// (devices 1, 0, 2), which holds that part of the filter.
// CHECK-LABEL: func.func @window_split(
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}soap.config = #soap.config<degrees = [1, 1, 1, 1, 1, 3, 1], devices = [2, 0, 1]>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}soap.config = #soap.config<degrees = [1, 1, 1, 1, 1, 3, 1], devices = [1, 0, 2]>{{.*}} outs(%{{.*}} : tensor<2x3x8x8xf32>)
#scale_b = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4_b = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @window_split(%x: tensor<2x3x8x8xf32>, %s: tensor<3xf32> {soap.parameter}, %w: tensor<6x3x3x3xf32> {soap.parameter}) -> tensor<2x6x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.empty() : tensor<2x3x8x8xf32>
  %xs = linalg.generic {indexing_maps = [#id4_b, #scale_b, #id4_b], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<2x3x8x8xf32>, tensor<3xf32>) outs(%xe : tensor<2x3x8x8xf32>) attrs = {soap.config = #soap.config<degrees = [1, 1, 1, 1], start = 1>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3x8x8xf32>
  %e = tensor.empty() : tensor<2x6x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x6x6xf32>) -> tensor<2x6x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, soap.config = #soap.config<degrees = [1, 1, 1, 1, 1, 3, 1], devices = [2, 0, 1]>}
    ins(%xs, %w : tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>) outs(%f : tensor<2x6x6x6xf32>) -> tensor<2x6x6x6xf32>
  return %c : tensor<2x6x6x6xf32>
}

// -----

// The ops a layer's gradient is made of are named after it (soap.name
// "<name>.grad", "<name>.grad.1", ...: the partitioned program and the
// runtime's errors from its library calls then say whose backward an op
// is). An op without a name (an activation a layer fuses after its anchor)
// counts as the layer of the named op it reads; the parameter updates have
// no layer, and get no name.
// CHECK-LABEL: func.func @named(
// CHECK: linalg.matmul {soap.name = "fc"}
// CHECK-NEXT: linalg.generic {indexing_maps = {{.*}} iterator_types = ["parallel", "parallel"]} ins({{.*}}) outs({{.*}}) {
// CHECK: linalg.matmul {soap.name = "out"}
// The output's gradient (dy v^T) and v's gradient (y^T dy).
// CHECK: linalg.generic {{.*}}soap.name = "out.grad"
// CHECK: linalg.generic {{.*}}soap.name = "out.grad.1"
// The ReLU's gradient, then w's.
// CHECK: linalg.generic {{.*}}soap.name = "fc.grad"
// CHECK: linalg.generic {{.*}}soap.name = "fc.grad.1"
// CHECK-NOT: soap.name
// CHECK: return
// With the input's gradients too: two ops for each matmul.
// GRAD-LABEL: func.func @named(
// GRAD: soap.name = "out"
// GRAD: soap.name = "out.grad"
// GRAD: soap.name = "out.grad.1"
// GRAD: soap.name = "fc.grad"
// GRAD: soap.name = "fc.grad.1"
// GRAD: soap.name = "fc.grad.2"
// GRAD-NOT: soap.name
// GRAD: return
#id_n = affine_map<(d0, d1) -> (d0, d1)>
func.func @named(%x: tensor<8x4xf32>, %w: tensor<4x6xf32> {soap.parameter}, %v: tensor<6x2xf32> {soap.parameter}) -> tensor<8x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %m = linalg.matmul {soap.name = "fc"} ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.generic {indexing_maps = [#id_n, #id_n], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x6xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %o = linalg.matmul {soap.name = "out"} ins(%y, %v : tensor<8x6xf32>, tensor<6x2xf32>) outs(%f2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %o : tensor<8x2xf32>
}

// -----

// A concatenation: the second insert has no name of its own and counts
// as the layer it writes into ("cat"), not as the matmul it reads ("b").
// CHECK-LABEL: func.func @concat(
// CHECK: tensor.extract_slice {{.*}} {soap.name = "cat.grad"}
// CHECK: tensor.insert_slice {{.*}} {soap.name = "cat.grad.1"}
// CHECK: tensor.extract_slice {{.*}} {soap.name = "cat.grad.2"}
func.func @concat(%x: tensor<4x2xf32>, %w: tensor<2x3xf32> {soap.parameter}, %v: tensor<2x5xf32> {soap.parameter}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = linalg.matmul {soap.name = "a"} ins(%x, %w : tensor<4x2xf32>, tensor<2x3xf32>) outs(%f3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e5 = tensor.empty() : tensor<4x5xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %b = linalg.matmul {soap.name = "b"} ins(%x, %v : tensor<4x2xf32>, tensor<2x5xf32>) outs(%f5 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0] [4, 3] [1, 1] {soap.name = "cat"} : tensor<4x3xf32> into tensor<4x8xf32>
  %c1 = tensor.insert_slice %b into %c0[0, 3] [4, 5] [1, 1] : tensor<4x5xf32> into tensor<4x8xf32>
  return %c1 : tensor<4x8xf32>
}

// -----

// A contraction's bf16 operands (mixed precision: bf16 products summed into
// f32): their gradients, f32 cotangent times bf16, sum in f32 and are
// rounded to bf16 once, after the sum (as cuBLAS computes them), not at
// every product and partial sum.
// GRAD-LABEL: func.func @mixed_precision(
// GRAD-SAME:    -> (tensor<4x16xf32>, tensor<4x8xbf16>, tensor<8x16xbf16>)
// GRAD:         %[[DX:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x16xbf16>, tensor<4x16xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// GRAD:           %[[E:.*]] = arith.extf %{{.*}} : bf16 to f32
// GRAD:           %[[P:.*]] = arith.mulf %{{.*}}, %[[E]] : f32
// GRAD-NOT:       truncf
// GRAD:           arith.addf %{{.*}}, %[[P]] : f32
// GRAD:         %[[DW:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x16xf32>)
// GRAD:         %[[RX:.*]] = linalg.generic {{.*}} ins(%[[DX]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// GRAD:           arith.truncf %{{.*}} : f32 to bf16
// GRAD:         %[[RW:.*]] = linalg.generic {{.*}} ins(%[[DW]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// GRAD:         return %{{.*}}, %[[RX]], %[[RW]]
func.func @mixed_precision(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16> {soap.parameter}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
