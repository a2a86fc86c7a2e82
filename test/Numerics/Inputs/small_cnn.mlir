// A small CNN (batch 4, 3x16x16 images): padded 3x3 conv + per-channel scale
// + relu, max pooling, a second conv, global average pooling, a classifier.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @small_cnn(%x: tensor<4x3x16x16xf32>,
                     %w1: tensor<8x3x3x3xf32> {soap.parameter}, %s1: tensor<8xf32> {soap.parameter},
                     %w2: tensor<16x8x3x3xf32> {soap.parameter},
                     %fc: tensor<16x10xf32> {soap.parameter}) -> tensor<4x10xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %p1 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x3x16x16xf32> to tensor<4x3x18x18xf32>
  %e1 = tensor.empty() : tensor<4x8x16x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p1, %w1 : tensor<4x3x18x18xf32>, tensor<8x3x3x3xf32>) outs(%f1 : tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32> loc("conv1")
  %r1 = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %s1 : tensor<4x8x16x16xf32>, tensor<8xf32>) outs(%e1 : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8x16x16xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %ep = tensor.empty() : tensor<4x8x8x8xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%r1, %win : tensor<4x8x16x16xf32>, tensor<2x2xf32>) outs(%fp : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32> loc("pool")
  %p2 = tensor.pad %pool low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x8x8x8xf32> to tensor<4x8x10x10xf32>
  %e2 = tensor.empty() : tensor<4x16x8x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16x8x8xf32>) -> tensor<4x16x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p2, %w2 : tensor<4x8x10x10xf32>, tensor<16x8x3x3xf32>) outs(%f2 : tensor<4x16x8x8xf32>) -> tensor<4x16x8x8xf32> loc("conv2")
  %eg = tensor.empty() : tensor<4x16xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<4x16xf32>) -> tensor<4x16xf32>
  %g = linalg.reduce ins(%c2 : tensor<4x16x8x8xf32>) outs(%fg : tensor<4x16xf32>) dimensions = [2, 3]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } loc("gap")
  %eo = tensor.empty() : tensor<4x10xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x10xf32>) -> tensor<4x10xf32>
  %y = linalg.matmul ins(%g, %fc : tensor<4x16xf32>, tensor<16x10xf32>) outs(%fo : tensor<4x10xf32>) -> tensor<4x10xf32> loc("classifier")
  return %y : tensor<4x10xf32>
}
