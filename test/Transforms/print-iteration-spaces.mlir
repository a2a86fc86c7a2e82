// RUN: soap-opt %s --soap-print-iteration-spaces -o /dev/null | FileCheck %s
// Loop kinds: S (sample: batch of the data input), P (parameter: indexes a
// weight and the output), A (other parallel loops), R (reduction).

// CHECK: linalg.matmul {{.*}}print-iteration-spaces.mlir":[[@LINE+2]]{{.*}} loops=3 [S:64, P:256, R:128]
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// Both sides of a batch matmul carry the batch loop: no parameter loop.
// CHECK: linalg.batch_matmul {{.*}} loops=4 [S:8, A:16, A:32, R:64]
func.func @batch_matmul(%a: tensor<8x16x64xf32>, %b: tensor<8x64x32xf32>, %c: tensor<8x16x32xf32>) -> tensor<8x16x32xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<8x16x64xf32>, tensor<8x64x32xf32>) outs(%c : tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  return %0 : tensor<8x16x32xf32>
}

// Loops (n, f, oh, ow, c, kh, kw).
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} loops=7 [S:32, P:64, A:56, A:56, R:3, R:3, R:3]
func.func @conv_nchw(%x: tensor<32x3x58x58xf32>, %w: tensor<64x3x3x3xf32>, %o: tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<32x3x58x58xf32>, tensor<64x3x3x3xf32>) outs(%o : tensor<32x64x56x56xf32>) -> tensor<32x64x56x56xf32>
  return %0 : tensor<32x64x56x56xf32>
}

// Loops (n, oh, ow, f, kh, kw, c); stride 2.
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} loops=7 [S:16, A:28, A:28, P:128, R:3, R:3, R:64]
func.func @conv_nhwc(%x: tensor<16x57x57x64xf32>, %w: tensor<3x3x64x128xf32>, %o: tensor<16x28x28x128xf32>) -> tensor<16x28x28x128xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<16x57x57x64xf32>, tensor<3x3x64x128xf32>) outs(%o : tensor<16x28x28x128xf32>) -> tensor<16x28x28x128xf32>
  return %0 : tensor<16x28x28x128xf32>
}

// Elementwise with a per-channel bias: the bias is a weight, so the channel
// loop is a parameter loop.
// CHECK: linalg.generic {{.*}} loops=2 [S:64, P:1024]
func.func @bias_relu(%x: tensor<64x1024xf32>, %b: tensor<1024xf32>) -> tensor<64x1024xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<64x1024xf32>, tensor<1024xf32>) outs(%x : tensor<64x1024xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// A plain elementwise op: only sample and attribute loops.
// CHECK: linalg.generic {{.*}} loops=3 [S:4, A:16, A:16]
func.func @elementwise(%x: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x16x16xf32>) outs(%x : tensor<4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.tanh %in : f32
    linalg.yield %e : f32
  } -> tensor<4x16x16xf32>
  return %0 : tensor<4x16x16xf32>
}

// Pooling: loops (n, c, oh, ow, kh, kw); the window operand is no weight
// loop carrier for parallel loops.
// CHECK: linalg.pooling_nchw_max {{.*}} loops=6 [S:8, A:64, A:27, A:27, R:3, R:3]
func.func @max_pool(%x: tensor<8x64x55x55xf32>, %o: tensor<8x64x27x27xf32>) -> tensor<8x64x27x27xf32> {
  %window = tensor.empty() : tensor<3x3xf32>
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %window : tensor<8x64x55x55xf32>, tensor<3x3xf32>) outs(%o : tensor<8x64x27x27xf32>) -> tensor<8x64x27x27xf32>
  return %0 : tensor<8x64x27x27xf32>
}

// A row reduction (sum over the last dimension).
// CHECK: linalg.reduce {{.*}} loops=2 [S:64, R:1000]
func.func @reduction(%x: tensor<64x1000xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %0 = linalg.reduce ins(%x : tensor<64x1000xf32>) outs(%init : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<64xf32>
}

// Weights marked by the constant they come from.
// CHECK: linalg.matmul {{.*}} loops=3 [S:2, P:8, R:4]
func.func @constant_weight(%a: tensor<2x4xf32>, %c: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = arith.constant dense<1.0> : tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<2x4xf32>, tensor<4x8xf32>) outs(%c : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// Ops known only through TilingInterface (tensor.pad): the result's shape.
// CHECK: tensor.pad {{.*}} loops=4 [S:2, A:3, A:34, A:34]
func.func @pad(%x: tensor<2x3x32x32xf32>) -> tensor<2x3x34x34xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x3x32x32xf32> to tensor<2x3x34x34xf32>
  return %0 : tensor<2x3x34x34xf32>
}

// Dynamic extents print as '?'.
// CHECK: linalg.generic {{.*}} loops=2 [S:?, A:8]
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// Ops without an iteration space print nothing.
// CHECK-NOT: arith.
// CHECK-NOT: func.return
