// A residual block with batch norms (eval form: x * weight + bias per
// channel) and a projection shortcut, batch 4, 4 -> 8 channels at 16x16
// (enough for soap-cuda-split-reductions to split the channel sums):
// conv 3x3 + bn1 + relu, conv 3x3 + bn2, shortcut conv 1x1 + bn3, add,
// relu. bn2's and bn3's gradients read the same dY (the add's).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @residual_bn(%x: tensor<4x4x16x16xf32>,
                       %w1: tensor<8x4x3x3xf32> {soap.parameter}, %g1: tensor<8xf32> {soap.parameter}, %b1: tensor<8xf32> {soap.parameter},
                       %w2: tensor<8x8x3x3xf32> {soap.parameter}, %g2: tensor<8xf32> {soap.parameter}, %b2: tensor<8xf32> {soap.parameter},
                       %w3: tensor<8x4x1x1xf32> {soap.parameter}, %g3: tensor<8xf32> {soap.parameter}, %b3: tensor<8xf32> {soap.parameter}) -> tensor<4x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32>
  %p1 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x4x16x16xf32> to tensor<4x4x18x18xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p1, %w1 : tensor<4x4x18x18xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32> loc("conv1")
  %n1 = linalg.generic {indexing_maps = [#id4, #ch, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %g1, %b1 : tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16x16xf32> loc("bn1")
  %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n1 : tensor<4x8x16x16xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16x16xf32> loc("relu1")
  %p2 = tensor.pad %r1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x8x16x16xf32> to tensor<4x8x18x18xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p2, %w2 : tensor<4x8x18x18xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32> loc("conv2")
  %n2 = linalg.generic {indexing_maps = [#id4, #ch, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2, %g2, %b2 : tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16x16xf32> loc("bn2")
  %c3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w3 : tensor<4x4x16x16xf32>, tensor<8x4x1x1xf32>) outs(%f : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32> loc("shortcut")
  %n3 = linalg.generic {indexing_maps = [#id4, #ch, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c3, %g3, %b3 : tensor<4x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16x16xf32> loc("bn3")
  %sum = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%n2, %n3 : tensor<4x8x16x16xf32>, tensor<4x8x16x16xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8x16x16xf32> loc("add")
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<4x8x16x16xf32>) outs(%e : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16x16xf32> loc("relu")
  return %y : tensor<4x8x16x16xf32>
}
