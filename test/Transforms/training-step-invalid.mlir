// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-training-step
// RUN: not soap-opt %s -split-input-file --soap-training-step="returns=weights" 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: soap-training-step: returns must be 'parameters', 'gradients' or 'outputs', not 'weights'
// RUN: not soap-opt %s -split-input-file --soap-training-step="learning-rate=inf" 2>&1 | FileCheck %s --check-prefix=RATE
// RATE: soap-training-step: learning-rate must be a finite number, not negative: INF
// RUN: not soap-opt %s -split-input-file --soap-training-step="learning-rate=-0.5" 2>&1 | FileCheck %s --check-prefix=NEGRATE
// NEGRATE: soap-training-step: learning-rate must be a finite number, not negative: -5.000000e-01

// expected-error @below {{training step: 'scale' has no parameters to train (mark them with 'soap.parameter')}}
func.func @scale(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// expected-error @below {{training step: 'int_weights' has no floating-point parameters to train: argument #1 ('tensor<4x4xi32>') is marked 'soap.parameter', but only floating-point tensors have gradients}}
func.func @int_weights(%x: tensor<4x4xi32>, %w: tensor<4x4xi32> {soap.parameter}) -> tensor<4x4xi32> {
  %e = tensor.empty() : tensor<4x4xi32>
  %y = linalg.add ins(%x, %w : tensor<4x4xi32>, tensor<4x4xi32>) outs(%e : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %y : tensor<4x4xi32>
}

// -----

func.func @sine(%x: tensor<4xf32>, %w: tensor<4xf32> {soap.parameter}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{training step: cannot differentiate 'math.sin' in the body of 'linalg.generic'}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = math.sin %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @shifted(%x: tensor<4xf32>, %w: tensor<5xf32> {soap.parameter}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{training step: cannot differentiate 'linalg.generic' with respect to operand 1: it is read through a map that is not a projection of the loops}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 + 1)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<4xf32>, tensor<5xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @product(%x: tensor<4x3xf32>, %w: tensor<3xf32> {soap.parameter}) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{training step: cannot differentiate 'linalg.generic': its reduction is not a sum, max or one-hot selection of its inputs}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<3xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.mulf %acc, %m : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @softmax(%x: tensor<4x3xf32>, %w: tensor<3xf32> {soap.parameter}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x3xf32>
  // expected-error @below {{training step: cannot differentiate 'linalg.softmax'}}
  %s = linalg.softmax dimension(1) ins(%y : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

// (Both results are read: an unused one would be dropped first.)
func.func @two_results(%x: tensor<4x3xf32>, %w: tensor<4x3xf32> {soap.parameter}) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{training step: cannot differentiate 'linalg.generic' with 2 outputs (only elementwise ones)}}
  %y:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%f, %f : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %p: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    %t = arith.addf %p, %a : f32
    linalg.yield %s, %t : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @gather(%ids: tensor<4xindex>, %table: tensor<10xf32> {soap.parameter}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{training step: cannot differentiate 'linalg.generic': its body reads a tensor that needs a gradient (a gather)}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%ids : tensor<4xindex>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: index, %o: f32):
    %v = tensor.extract %table[%i] : tensor<10xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A convolution without an input-gradient form (a depthwise 1-D one).
func.func @depthwise_conv1d(%x: tensor<1x5x2xf32>, %w: tensor<3x2xf32> {soap.parameter}) -> tensor<1x3x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  // expected-error @below {{training step: cannot differentiate 'linalg.depthwise_conv_1d_nwc_wc' (the convolutions it differentiates: conv_2d_nchw_fchw, conv_2d_nhwc_hwcf, conv_2d_nhwc_fhwc, depthwise_conv_2d_nchw_chw, depthwise_conv_2d_nhwc_hwc, conv_2d_ngchw_gfchw, conv_1d_ncw_fcw, conv_1d_nwc_wcf, conv_3d_ncdhw_fcdhw, conv_3d_ndhwc_dhwcf; poolings: pooling_nchw_max, pooling_nchw_sum, pooling_nhwc_max, pooling_nhwc_sum)}}
  %c = linalg.depthwise_conv_1d_nwc_wc {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
      ins(%x, %w : tensor<1x5x2xf32>, tensor<3x2xf32>) outs(%f : tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %c : tensor<1x3x2xf32>
}

// -----

func.func @dilated_pool(%x: tensor<1x2x5x5xf32>, %s: tensor<2xf32> {soap.parameter}) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x2x5x5xf32>
  %xs = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<1x2x5x5xf32>, tensor<2xf32>) outs(%e0 : tensor<1x2x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x5x5xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  // expected-error @below {{training step: dilated poolings are not differentiated yet}}
  %p = linalg.pooling_nchw_sum {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xs, %win : tensor<1x2x5x5xf32>, tensor<2x2xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %p : tensor<1x2x3x3xf32>
}

// -----

// A dynamic batch on the path from a parameter: the gradient ops are built
// with static shapes, so the step refuses it (it used to emit a tensor.empty
// without its dynamic size, which the verifier rejected).
func.func @dynamic_pool(%x: tensor<?x2x5x5xf32>, %s: tensor<2xf32> {soap.parameter}) -> tensor<?x2x2x2xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x5x5xf32>
  %e = tensor.empty(%n) : tensor<?x2x5x5xf32>
  // expected-error @below {{training step: 'linalg.generic' has a result of dynamic shape ('tensor<?x2x5x5xf32>') on the path from a parameter; the gradients need static shapes}}
  %xs = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<?x2x5x5xf32>, tensor<2xf32>) outs(%e : tensor<?x2x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x2x5x5xf32>
  %win3 = tensor.empty() : tensor<3x3xf32>
  %ep = tensor.empty(%n) : tensor<?x2x2x2xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
  %mp = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%xs, %win3 : tensor<?x2x5x5xf32>, tensor<3x3xf32>) outs(%fp : tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
  return %mp : tensor<?x2x2x2xf32>
}

// -----

// A parameter of dynamic shape.
// expected-error @below {{training step: argument 1 has a dynamic shape ('tensor<?xf32>'); the gradients need static shapes}}
func.func @dynamic_parameter(%x: tensor<4xf32>, %s: tensor<?xf32> {soap.parameter}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
