// An inception-like branchy block (batch 4, 8x8x8 input): three branches
// (1x1 conv; 1x1 then 3x3 conv; 3x3 max pool then 1x1 conv) joined by a
// concatenation, then a 1x1 conv on the joined channels.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @inception_block(%x: tensor<4x8x8x8xf32>,
                           %wa: tensor<4x8x1x1xf32> {soap.parameter},
                           %wb1: tensor<4x8x1x1xf32> {soap.parameter}, %wb2: tensor<8x4x3x3xf32> {soap.parameter},
                           %wc: tensor<4x8x1x1xf32> {soap.parameter},
                           %wo: tensor<8x16x1x1xf32> {soap.parameter}) -> tensor<4x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e4 = tensor.empty() : tensor<4x4x8x8xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
  %a = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wa : tensor<4x8x8x8xf32>, tensor<4x8x1x1xf32>) outs(%f4 : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32> loc("branch_a")
  %b1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wb1 : tensor<4x8x8x8xf32>, tensor<4x8x1x1xf32>) outs(%f4 : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32> loc("branch_b1")
  %b1r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b1 : tensor<4x4x8x8xf32>) outs(%e4 : tensor<4x4x8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x4x8x8xf32>
  %pb = tensor.pad %b1r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x4x8x8xf32> to tensor<4x4x10x10xf32>
  %e8 = tensor.empty() : tensor<4x8x8x8xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %b2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%pb, %wb2 : tensor<4x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%f8 : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32> loc("branch_b2")
  %pc = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<4x8x8x8xf32> to tensor<4x8x10x10xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%e8 : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%pc, %win : tensor<4x8x10x10xf32>, tensor<3x3xf32>) outs(%fp : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32> loc("branch_c_pool")
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%pool, %wc : tensor<4x8x8x8xf32>, tensor<4x8x1x1xf32>) outs(%f4 : tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32> loc("branch_c")
  %ecat = tensor.empty() : tensor<4x16x8x8xf32>
  %cat0 = tensor.insert_slice %a into %ecat[0, 0, 0, 0] [4, 4, 8, 8] [1, 1, 1, 1] : tensor<4x4x8x8xf32> into tensor<4x16x8x8xf32> loc("concat")
  %cat1 = tensor.insert_slice %b2 into %cat0[0, 4, 0, 0] [4, 8, 8, 8] [1, 1, 1, 1] : tensor<4x8x8x8xf32> into tensor<4x16x8x8xf32>
  %cat2 = tensor.insert_slice %c into %cat1[0, 12, 0, 0] [4, 4, 8, 8] [1, 1, 1, 1] : tensor<4x4x8x8xf32> into tensor<4x16x8x8xf32>
  %o = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%cat2, %wo : tensor<4x16x8x8xf32>, tensor<8x16x1x1xf32>) outs(%f8 : tensor<4x8x8x8xf32>) -> tensor<4x8x8x8xf32> loc("out")
  return %o : tensor<4x8x8x8xf32>
}
