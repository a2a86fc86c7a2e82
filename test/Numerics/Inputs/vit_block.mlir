// Tiny ViT encoder (1 layer), torch-mlir linalg-on-tensors style.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bc4 = affine_map<(d0, d1, d2, d3) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pos3 = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#lst3 = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col2 = affine_map<(d0, d1) -> (d1)>
#sc4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module {
  func.func @vit(%arg0: tensor<2x3x16x16xf32>,
                 %arg1: tensor<32x3x4x4xf32>, %arg2: tensor<32xf32>,
                 %arg3: tensor<1x1x32xf32>, %arg4: tensor<1x17x32xf32>,
                 %arg5: tensor<32xf32>, %arg6: tensor<32xf32>,
                 %arg7: tensor<96x32xf32>, %arg8: tensor<96xf32>,
                 %arg9: tensor<32x32xf32>, %arg10: tensor<32xf32>,
                 %arg11: tensor<32xf32>, %arg12: tensor<32xf32>,
                 %arg13: tensor<64x32xf32>, %arg14: tensor<64xf32>,
                 %arg15: tensor<32x64xf32>, %arg16: tensor<32xf32>,
                 %arg17: tensor<32xf32>, %arg18: tensor<32xf32>,
                 %arg19: tensor<10x32xf32>, %arg20: tensor<10xf32>) -> tensor<2x10xf32> {
    %cst0 = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %inv32 = arith.constant 3.125000e-02 : f32
    %eps = arith.constant 9.99999997E-7 : f32
    %scale = arith.constant 0.353553385 : f32
    %half = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32

    // ---- patch embedding: conv 4x4 stride 4, bias broadcast into init ----
    %e0 = tensor.empty() : tensor<2x32x4x4xf32>
    %cb = linalg.generic {indexing_maps = [#bc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<32xf32>) outs(%e0 : tensor<2x32x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x32x4x4xf32>
    %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<4> : vector<2xi64>} ins(%arg0, %arg1 : tensor<2x3x16x16xf32>, tensor<32x3x4x4xf32>) outs(%cb : tensor<2x32x4x4xf32>) -> tensor<2x32x4x4xf32>
    %flat = tensor.collapse_shape %conv [[0], [1], [2, 3]] : tensor<2x32x4x4xf32> into tensor<2x32x16xf32>
    %e1 = tensor.empty() : tensor<2x16x32xf32>
    %patches = linalg.transpose ins(%flat : tensor<2x32x16xf32>) outs(%e1 : tensor<2x16x32xf32>) permutation = [0, 2, 1]

    // ---- class token: expand to batch, concat in front ----
    %clsc = tensor.collapse_shape %arg3 [[0, 1, 2]] : tensor<1x1x32xf32> into tensor<32xf32>
    %e2 = tensor.empty() : tensor<2x1x32xf32>
    %clsb = linalg.broadcast ins(%clsc : tensor<32xf32>) outs(%e2 : tensor<2x1x32xf32>) dimensions = [0, 1]
    %tok = tensor.concat dim(1) %clsb, %patches : (tensor<2x1x32xf32>, tensor<2x16x32xf32>) -> tensor<2x17x32xf32>

    // ---- position embedding ----
    %e3 = tensor.empty() : tensor<2x17x32xf32>
    %x0 = linalg.generic {indexing_maps = [#id3, #pos3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%tok, %arg4 : tensor<2x17x32xf32>, tensor<1x17x32xf32>) outs(%e3 : tensor<2x17x32xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<2x17x32xf32>

    // ---- LayerNorm 1 ----
    %e4 = tensor.empty() : tensor<2x17xf32>
    %z4 = linalg.fill ins(%cst0 : f32) outs(%e4 : tensor<2x17xf32>) -> tensor<2x17xf32>
    %s1 = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x0 : tensor<2x17x32xf32>) outs(%z4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %m1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s1 : tensor<2x17xf32>) outs(%e4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %inv32 : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %v1s = linalg.generic {indexing_maps = [#id3, #row3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x0, %m1 : tensor<2x17x32xf32>, tensor<2x17xf32>) outs(%z4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %d = arith.subf %in, %in_1 : f32
      %q = arith.mulf %d, %d : f32
      %r = arith.addf %q, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %ln1 = linalg.generic {indexing_maps = [#id3, #row3, #row3, #lst3, #lst3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x0, %m1, %v1s, %arg5, %arg6 : tensor<2x17x32xf32>, tensor<2x17xf32>, tensor<2x17xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e3 : tensor<2x17x32xf32>) {
    ^bb0(%in: f32, %mu: f32, %vs: f32, %w: f32, %b: f32, %out: f32):
      %v = arith.mulf %vs, %inv32 : f32
      %ve = arith.addf %v, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %in, %mu : f32
      %n = arith.mulf %d, %rs : f32
      %nw = arith.mulf %n, %w : f32
      %r = arith.addf %nw, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x17x32xf32>

    // ---- qkv = ln1 @ Wqkv^T + b  (collapse, matmul, expand) ----
    %e5 = tensor.empty() : tensor<32x96xf32>
    %wqkvT = linalg.transpose ins(%arg7 : tensor<96x32xf32>) outs(%e5 : tensor<32x96xf32>) permutation = [1, 0]
    %ln1c = tensor.collapse_shape %ln1 [[0, 1], [2]] : tensor<2x17x32xf32> into tensor<34x32xf32>
    %e6 = tensor.empty() : tensor<34x96xf32>
    %z6 = linalg.fill ins(%cst0 : f32) outs(%e6 : tensor<34x96xf32>) -> tensor<34x96xf32>
    %qkv0 = linalg.matmul ins(%ln1c, %wqkvT : tensor<34x32xf32>, tensor<32x96xf32>) outs(%z6 : tensor<34x96xf32>) -> tensor<34x96xf32>
    %qkv1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%qkv0, %arg8 : tensor<34x96xf32>, tensor<96xf32>) outs(%e6 : tensor<34x96xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<34x96xf32>
    %qkv = tensor.expand_shape %qkv1 [[0, 1], [2, 3, 4]] output_shape [2, 17, 3, 4, 8] : tensor<34x96xf32> into tensor<2x17x3x4x8xf32>
    %q0 = tensor.extract_slice %qkv[0, 0, 0, 0, 0] [2, 17, 1, 4, 8] [1, 1, 1, 1, 1] : tensor<2x17x3x4x8xf32> to tensor<2x17x4x8xf32>
    %k0 = tensor.extract_slice %qkv[0, 0, 1, 0, 0] [2, 17, 1, 4, 8] [1, 1, 1, 1, 1] : tensor<2x17x3x4x8xf32> to tensor<2x17x4x8xf32>
    %v0 = tensor.extract_slice %qkv[0, 0, 2, 0, 0] [2, 17, 1, 4, 8] [1, 1, 1, 1, 1] : tensor<2x17x3x4x8xf32> to tensor<2x17x4x8xf32>
    %e7 = tensor.empty() : tensor<2x4x17x8xf32>
    %q1 = linalg.transpose ins(%q0 : tensor<2x17x4x8xf32>) outs(%e7 : tensor<2x4x17x8xf32>) permutation = [0, 2, 1, 3]
    %v1 = linalg.transpose ins(%v0 : tensor<2x17x4x8xf32>) outs(%e7 : tensor<2x4x17x8xf32>) permutation = [0, 2, 1, 3]
    %e8 = tensor.empty() : tensor<2x4x8x17xf32>
    %k1 = linalg.transpose ins(%k0 : tensor<2x17x4x8xf32>) outs(%e8 : tensor<2x4x8x17xf32>) permutation = [0, 2, 3, 1]
    %q2 = tensor.collapse_shape %q1 [[0, 1], [2], [3]] : tensor<2x4x17x8xf32> into tensor<8x17x8xf32>
    %v2 = tensor.collapse_shape %v1 [[0, 1], [2], [3]] : tensor<2x4x17x8xf32> into tensor<8x17x8xf32>
    %k2 = tensor.collapse_shape %k1 [[0, 1], [2], [3]] : tensor<2x4x8x17xf32> into tensor<8x8x17xf32>
    %e9 = tensor.empty() : tensor<8x17x17xf32>
    %z9 = linalg.fill ins(%cst0 : f32) outs(%e9 : tensor<8x17x17xf32>) -> tensor<8x17x17xf32>
    %sc0 = linalg.batch_matmul ins(%q2, %k2 : tensor<8x17x8xf32>, tensor<8x8x17xf32>) outs(%z9 : tensor<8x17x17xf32>) -> tensor<8x17x17xf32>
    %sc1 = tensor.expand_shape %sc0 [[0, 1], [2], [3]] output_shape [2, 4, 17, 17] : tensor<8x17x17xf32> into tensor<2x4x17x17xf32>
    %e10 = tensor.empty() : tensor<2x4x17x17xf32>
    %sc2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc1 : tensor<2x4x17x17xf32>) outs(%e10 : tensor<2x4x17x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %scale : f32
      linalg.yield %r : f32
    } -> tensor<2x4x17x17xf32>
    // softmax over last dim
    %e11 = tensor.empty() : tensor<2x4x17xf32>
    %ninf11 = linalg.fill ins(%ninf : f32) outs(%e11 : tensor<2x4x17xf32>) -> tensor<2x4x17xf32>
    %mx = linalg.generic {indexing_maps = [#id4, #sc4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sc2 : tensor<2x4x17x17xf32>) outs(%ninf11 : tensor<2x4x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.maximumf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x17xf32>
    %ex = linalg.generic {indexing_maps = [#id4, #sc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc2, %mx : tensor<2x4x17x17xf32>, tensor<2x4x17xf32>) outs(%e10 : tensor<2x4x17x17xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %d = arith.subf %in, %in_1 : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
    } -> tensor<2x4x17x17xf32>
    %z11 = linalg.fill ins(%cst0 : f32) outs(%e11 : tensor<2x4x17xf32>) -> tensor<2x4x17xf32>
    %sm = linalg.generic {indexing_maps = [#id4, #sc4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x17x17xf32>) outs(%z11 : tensor<2x4x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x17xf32>
    %pr = linalg.generic {indexing_maps = [#id4, #sc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x4x17x17xf32>, tensor<2x4x17xf32>) outs(%e10 : tensor<2x4x17x17xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.divf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x17x17xf32>
    %pr2 = tensor.collapse_shape %pr [[0, 1], [2], [3]] : tensor<2x4x17x17xf32> into tensor<8x17x17xf32>
    %e12 = tensor.empty() : tensor<8x17x8xf32>
    %z12 = linalg.fill ins(%cst0 : f32) outs(%e12 : tensor<8x17x8xf32>) -> tensor<8x17x8xf32>
    %at0 = linalg.batch_matmul ins(%pr2, %v2 : tensor<8x17x17xf32>, tensor<8x17x8xf32>) outs(%z12 : tensor<8x17x8xf32>) -> tensor<8x17x8xf32>
    %at1 = tensor.expand_shape %at0 [[0, 1], [2], [3]] output_shape [2, 4, 17, 8] : tensor<8x17x8xf32> into tensor<2x4x17x8xf32>
    %e13 = tensor.empty() : tensor<2x17x4x8xf32>
    %at2 = linalg.transpose ins(%at1 : tensor<2x4x17x8xf32>) outs(%e13 : tensor<2x17x4x8xf32>) permutation = [0, 2, 1, 3]
    %at3 = tensor.collapse_shape %at2 [[0], [1], [2, 3]] : tensor<2x17x4x8xf32> into tensor<2x17x32xf32>

    // ---- output projection: 3D x 2D as torch-mlir's aten.matmul (broadcast + batch_matmul) ----
    %e14 = tensor.empty() : tensor<32x32xf32>
    %wpT = linalg.transpose ins(%arg9 : tensor<32x32xf32>) outs(%e14 : tensor<32x32xf32>) permutation = [1, 0]
    %e15 = tensor.empty() : tensor<2x32x32xf32>
    %wpB = linalg.broadcast ins(%wpT : tensor<32x32xf32>) outs(%e15 : tensor<2x32x32xf32>) dimensions = [0]
    %z3 = linalg.fill ins(%cst0 : f32) outs(%e3 : tensor<2x17x32xf32>) -> tensor<2x17x32xf32>
    %pj0 = linalg.batch_matmul ins(%at3, %wpB : tensor<2x17x32xf32>, tensor<2x32x32xf32>) outs(%z3 : tensor<2x17x32xf32>) -> tensor<2x17x32xf32>
    %x1 = linalg.generic {indexing_maps = [#id3, #lst3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pj0, %arg10, %x0 : tensor<2x17x32xf32>, tensor<32xf32>, tensor<2x17x32xf32>) outs(%e3 : tensor<2x17x32xf32>) {
    ^bb0(%in: f32, %b: f32, %res: f32, %out: f32):
      %t = arith.addf %in, %b : f32
      %r = arith.addf %res, %t : f32
      linalg.yield %r : f32
    } -> tensor<2x17x32xf32>

    // ---- LayerNorm 2 ----
    %s2 = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x1 : tensor<2x17x32xf32>) outs(%z4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %m2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s2 : tensor<2x17xf32>) outs(%e4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %inv32 : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %v2s = linalg.generic {indexing_maps = [#id3, #row3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x1, %m2 : tensor<2x17x32xf32>, tensor<2x17xf32>) outs(%z4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %d = arith.subf %in, %in_1 : f32
      %q = arith.mulf %d, %d : f32
      %r = arith.addf %q, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %ln2 = linalg.generic {indexing_maps = [#id3, #row3, #row3, #lst3, #lst3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x1, %m2, %v2s, %arg11, %arg12 : tensor<2x17x32xf32>, tensor<2x17xf32>, tensor<2x17xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e3 : tensor<2x17x32xf32>) {
    ^bb0(%in: f32, %mu: f32, %vs: f32, %w: f32, %b: f32, %out: f32):
      %v = arith.mulf %vs, %inv32 : f32
      %ve = arith.addf %v, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %in, %mu : f32
      %n = arith.mulf %d, %rs : f32
      %nw = arith.mulf %n, %w : f32
      %r = arith.addf %nw, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x17x32xf32>

    // ---- MLP 32 -> 64 (exact GELU) -> 32 ----
    %e16 = tensor.empty() : tensor<32x64xf32>
    %w1T = linalg.transpose ins(%arg13 : tensor<64x32xf32>) outs(%e16 : tensor<32x64xf32>) permutation = [1, 0]
    %ln2c = tensor.collapse_shape %ln2 [[0, 1], [2]] : tensor<2x17x32xf32> into tensor<34x32xf32>
    %e17 = tensor.empty() : tensor<34x64xf32>
    %z17 = linalg.fill ins(%cst0 : f32) outs(%e17 : tensor<34x64xf32>) -> tensor<34x64xf32>
    %h0 = linalg.matmul ins(%ln2c, %w1T : tensor<34x32xf32>, tensor<32x64xf32>) outs(%z17 : tensor<34x64xf32>) -> tensor<34x64xf32>
    %h1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h0, %arg14 : tensor<34x64xf32>, tensor<64xf32>) outs(%e17 : tensor<34x64xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<34x64xf32>
    %h2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h1 : tensor<34x64xf32>) outs(%e17 : tensor<34x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.mulf %in, %rsqrt2 : f32
      %e = math.erf %a : f32
      %p = arith.addf %e, %one : f32
      %hx = arith.mulf %in, %half : f32
      %r = arith.mulf %hx, %p : f32
      linalg.yield %r : f32
    } -> tensor<34x64xf32>
    %e18 = tensor.empty() : tensor<64x32xf32>
    %w2T = linalg.transpose ins(%arg15 : tensor<32x64xf32>) outs(%e18 : tensor<64x32xf32>) permutation = [1, 0]
    %e19 = tensor.empty() : tensor<34x32xf32>
    %z19 = linalg.fill ins(%cst0 : f32) outs(%e19 : tensor<34x32xf32>) -> tensor<34x32xf32>
    %o0 = linalg.matmul ins(%h2, %w2T : tensor<34x64xf32>, tensor<64x32xf32>) outs(%z19 : tensor<34x32xf32>) -> tensor<34x32xf32>
    %o1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%o0, %arg16 : tensor<34x32xf32>, tensor<32xf32>) outs(%e19 : tensor<34x32xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<34x32xf32>
    %o2 = tensor.expand_shape %o1 [[0, 1], [2]] output_shape [2, 17, 32] : tensor<34x32xf32> into tensor<2x17x32xf32>
    %x2 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x1, %o2 : tensor<2x17x32xf32>, tensor<2x17x32xf32>) outs(%e3 : tensor<2x17x32xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<2x17x32xf32>

    // ---- final LayerNorm ----
    %s3 = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2 : tensor<2x17x32xf32>) outs(%z4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %m3 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s3 : tensor<2x17xf32>) outs(%e4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %inv32 : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %v3s = linalg.generic {indexing_maps = [#id3, #row3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2, %m3 : tensor<2x17x32xf32>, tensor<2x17xf32>) outs(%z4 : tensor<2x17xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %d = arith.subf %in, %in_1 : f32
      %q = arith.mulf %d, %d : f32
      %r = arith.addf %q, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x17xf32>
    %lnf = linalg.generic {indexing_maps = [#id3, #row3, #row3, #lst3, #lst3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x2, %m3, %v3s, %arg17, %arg18 : tensor<2x17x32xf32>, tensor<2x17xf32>, tensor<2x17xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e3 : tensor<2x17x32xf32>) {
    ^bb0(%in: f32, %mu: f32, %vs: f32, %w: f32, %b: f32, %out: f32):
      %v = arith.mulf %vs, %inv32 : f32
      %ve = arith.addf %v, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %in, %mu : f32
      %n = arith.mulf %d, %rs : f32
      %nw = arith.mulf %n, %w : f32
      %r = arith.addf %nw, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x17x32xf32>

    // ---- class token -> head ----
    %cls = tensor.extract_slice %lnf[0, 0, 0] [2, 1, 32] [1, 1, 1] : tensor<2x17x32xf32> to tensor<2x32xf32>
    %e20 = tensor.empty() : tensor<32x10xf32>
    %whT = linalg.transpose ins(%arg19 : tensor<10x32xf32>) outs(%e20 : tensor<32x10xf32>) permutation = [1, 0]
    %e21 = tensor.empty() : tensor<2x10xf32>
    %z21 = linalg.fill ins(%cst0 : f32) outs(%e21 : tensor<2x10xf32>) -> tensor<2x10xf32>
    %lg0 = linalg.matmul ins(%cls, %whT : tensor<2x32xf32>, tensor<32x10xf32>) outs(%z21 : tensor<2x10xf32>) -> tensor<2x10xf32>
    %lg1 = linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%lg0, %arg20 : tensor<2x10xf32>, tensor<10xf32>) outs(%e21 : tensor<2x10xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %r = arith.addf %in, %in_1 : f32
      linalg.yield %r : f32
    } -> tensor<2x10xf32>
    return %lg1 : tensor<2x10xf32>
  }
}
