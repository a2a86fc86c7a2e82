// The batch-norm scale gradients (sum of dY * X per channel) of the layer
// shapes of resnet101 and inception_v3 at batch 64, for
// `TRAIN=0 benchmarks/kernel-coalescing.sh benchmarks/inputs/bn-scale-grads-b64.mlir`.
func.func @bn_grads(%dy0: tensor<64x1024x14x14xf32>, %x0: tensor<64x1024x14x14xf32>, %dy1: tensor<64x256x14x14xf32>, %x1: tensor<64x256x14x14xf32>, %dy2: tensor<64x2048x7x7xf32>, %x2: tensor<64x2048x7x7xf32>, %dy3: tensor<64x512x7x7xf32>, %x3: tensor<64x512x7x7xf32>, %dy4: tensor<64x512x28x28xf32>, %x4: tensor<64x512x28x28xf32>, %dy5: tensor<64x768x17x17xf32>, %x5: tensor<64x768x17x17xf32>) -> (tensor<1024xf32>, tensor<256xf32>, tensor<2048xf32>, tensor<512xf32>, tensor<512xf32>, tensor<768xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1024xf32>) -> tensor<1024xf32>
  %r0 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy0, %x0 : tensor<64x1024x14x14xf32>, tensor<64x1024x14x14xf32>) outs(%f0 : tensor<1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32> loc("scale_grad_1024x14x14")
  %e1 = tensor.empty() : tensor<256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256xf32>) -> tensor<256xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy1, %x1 : tensor<64x256x14x14xf32>, tensor<64x256x14x14xf32>) outs(%f1 : tensor<256xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<256xf32> loc("scale_grad_256x14x14")
  %e2 = tensor.empty() : tensor<2048xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2048xf32>) -> tensor<2048xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy2, %x2 : tensor<64x2048x7x7xf32>, tensor<64x2048x7x7xf32>) outs(%f2 : tensor<2048xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2048xf32> loc("scale_grad_2048x7x7")
  %e3 = tensor.empty() : tensor<512xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<512xf32>) -> tensor<512xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy3, %x3 : tensor<64x512x7x7xf32>, tensor<64x512x7x7xf32>) outs(%f3 : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<512xf32> loc("scale_grad_512x7x7")
  %e4 = tensor.empty() : tensor<512xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<512xf32>) -> tensor<512xf32>
  %r4 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy4, %x4 : tensor<64x512x28x28xf32>, tensor<64x512x28x28xf32>) outs(%f4 : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<512xf32> loc("scale_grad_512x28x28")
  %e5 = tensor.empty() : tensor<768xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<768xf32>) -> tensor<768xf32>
  %r5 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy5, %x5 : tensor<64x768x17x17xf32>, tensor<64x768x17x17xf32>) outs(%f5 : tensor<768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<768xf32> loc("scale_grad_768x17x17")
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<1024xf32>, tensor<256xf32>, tensor<2048xf32>, tensor<512xf32>, tensor<512xf32>, tensor<768xf32>
}
