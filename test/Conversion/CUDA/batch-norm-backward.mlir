// RUN: soap-opt %s --soap-training-step="returns=outputs" --soap-lower-to-cuda="to-llvm=false" | FileCheck %s

// A batch norm (eval form: x * w + b per channel) and ReLU, its training
// step through the whole CUDA lowering: three kernels. The forward pass;
// the partial sums of the weight and bias gradients (sum of dY * X and sum
// of dY per channel, one op since soap-cuda-fuse-sibling-reductions: dY
// read once); and their combination with both SGD updates
// (soap-cuda-fuse-parallel-loops: the gradients' frees no longer separate
// the loops). Before: seven kernels (two partials, two combinations, two
// updates).
// CHECK-LABEL: func.func @bn_relu(
// CHECK-COUNT-3: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @bn_relu_kernel_0
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32)
// CHECK:       gpu.module @bn_relu_kernel_1
// CHECK:         gpu.func @bn_relu_kernel(%{{.*}}: index, %[[DW:.*]]: memref<8xf32>, %[[DB:.*]]: memref<8xf32>, %{{.*}}: memref<8x32xf32>, %{{.*}}: memref<8x32xf32>, %[[W:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK:           %[[SUMS:.*]]:2 = scf.for {{.*}} -> (f32, f32)
// CHECK:           memref.store %[[SUMS]]#0, %[[DW]]
// CHECK:           memref.store %[[SUMS]]#1, %[[DB]]
// CHECK:           arith.subf
// CHECK:           memref.store %{{.*}}, %[[W]]
// CHECK:           arith.subf
// CHECK:           memref.store %{{.*}}, %[[B]]
// CHECK:           gpu.return
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @bn_relu(%x: tensor<2x8x16x16xf32>, %w: tensor<8xf32> {soap.parameter}, %b: tensor<8xf32> {soap.parameter}) -> tensor<2x8x16x16xf32> {
  %e = tensor.empty() : tensor<2x8x16x16xf32>
  %zero = arith.constant 0.0 : f32
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %w, %b : tensor<2x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<2x8x16x16xf32>) {
  ^bb0(%a: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %t : f32
    %q = arith.maximumf %r, %zero : f32
    linalg.yield %q : f32
  } -> tensor<2x8x16x16xf32>
  return %y : tensor<2x8x16x16xf32>
}
