#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#last3 = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#red4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#sd4 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
module {
  func.func @block(%x: tensor<2x8x32xf32>,
                   %rms1_w: tensor<32xf32>,
                   %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>, %wv: tensor<16x32xf32>,
                   %wo: tensor<32x32xf32>,
                   %rms2_w: tensor<32xf32>,
                   %w1: tensor<64x32xf32>, %w3: tensor<64x32xf32>, %w2: tensor<32x64xf32>) -> tensor<2x8x32xf32> {
    %c0 = arith.constant 0.000000e+00 : f32
    %c1 = arith.constant 1.000000e+00 : f32
    %cn = arith.constant 3.200000e+01 : f32
    %eps = arith.constant 9.99999997e-07 : f32
    %sqrtd = arith.constant 2.82842708 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %cos = arith.constant dense<[[1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00, 1.00000000e+00], [5.40302306e-01, 9.95004165e-01, 9.99950000e-01, 9.99999500e-01, 5.40302306e-01, 9.95004165e-01, 9.99950000e-01, 9.99999500e-01], [-4.16146837e-01, 9.80066578e-01, 9.99800007e-01, 9.99998000e-01, -4.16146837e-01, 9.80066578e-01, 9.99800007e-01, 9.99998000e-01], [-9.89992497e-01, 9.55336489e-01, 9.99550034e-01, 9.99995500e-01, -9.89992497e-01, 9.55336489e-01, 9.99550034e-01, 9.99995500e-01], [-6.53643621e-01, 9.21060994e-01, 9.99200107e-01, 9.99992000e-01, -6.53643621e-01, 9.21060994e-01, 9.99200107e-01, 9.99992000e-01], [2.83662185e-01, 8.77582562e-01, 9.98750260e-01, 9.99987500e-01, 2.83662185e-01, 8.77582562e-01, 9.98750260e-01, 9.99987500e-01], [9.60170287e-01, 8.25335615e-01, 9.98200540e-01, 9.99982000e-01, 9.60170287e-01, 8.25335615e-01, 9.98200540e-01, 9.99982000e-01], [7.53902254e-01, 7.64842187e-01, 9.97551000e-01, 9.99975500e-01, 7.53902254e-01, 7.64842187e-01, 9.97551000e-01, 9.99975500e-01]]> : tensor<8x8xf32>
    %sin = arith.constant dense<[[0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00], [8.41470985e-01, 9.98334166e-02, 9.99983333e-03, 9.99999833e-04, 8.41470985e-01, 9.98334166e-02, 9.99983333e-03, 9.99999833e-04], [9.09297427e-01, 1.98669331e-01, 1.99986667e-02, 1.99999867e-03, 9.09297427e-01, 1.98669331e-01, 1.99986667e-02, 1.99999867e-03], [1.41120008e-01, 2.95520207e-01, 2.99955002e-02, 2.99999550e-03, 1.41120008e-01, 2.95520207e-01, 2.99955002e-02, 2.99999550e-03], [-7.56802495e-01, 3.89418342e-01, 3.99893342e-02, 3.99998933e-03, -7.56802495e-01, 3.89418342e-01, 3.99893342e-02, 3.99998933e-03], [-9.58924275e-01, 4.79425539e-01, 4.99791693e-02, 4.99997917e-03, -9.58924275e-01, 4.79425539e-01, 4.99791693e-02, 4.99997917e-03], [-2.79415498e-01, 5.64642473e-01, 5.99640065e-02, 5.99996400e-03, -2.79415498e-01, 5.64642473e-01, 5.99640065e-02, 5.99996400e-03], [6.56986599e-01, 6.44217687e-01, 6.99428473e-02, 6.99994283e-03, 6.56986599e-01, 6.44217687e-01, 6.99428473e-02, 6.99994283e-03]]> : tensor<8x8xf32>
    %mask = arith.constant dense<[[0.00000000e+00, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, 0.00000000e+00, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, -1.00000000e+09, -1.00000000e+09, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, -1.00000000e+09, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, -1.00000000e+09], [0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00, 0.00000000e+00]]> : tensor<8x8xf32>

    // ---- RMSNorm 1 ----
    %e28 = tensor.empty() : tensor<2x8xf32>
    %z28 = linalg.fill ins(%c0 : f32) outs(%e28 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %ss1 = linalg.generic {indexing_maps = [#id3, #red3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<2x8x32xf32>) outs(%z28 : tensor<2x8xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %m = arith.mulf %a, %a : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<2x8xf32>
    %rs1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%ss1 : tensor<2x8xf32>) outs(%e28 : tensor<2x8xf32>) {
      ^bb0(%a: f32, %o: f32):
        %m = arith.divf %a, %cn : f32
        %p = arith.addf %m, %eps : f32
        %r = math.rsqrt %p : f32
        linalg.yield %r : f32
    } -> tensor<2x8xf32>
    %e2832 = tensor.empty() : tensor<2x8x32xf32>
    %n1 = linalg.generic {indexing_maps = [#id3, #red3, #last3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %rs1, %rms1_w : tensor<2x8x32xf32>, tensor<2x8xf32>, tensor<32xf32>) outs(%e2832 : tensor<2x8x32xf32>) {
      ^bb0(%a: f32, %r: f32, %w: f32, %o: f32):
        %m = arith.mulf %a, %r : f32
        %m2 = arith.mulf %m, %w : f32
        linalg.yield %m2 : f32
    } -> tensor<2x8x32xf32>

    // ---- q/k/v projections ----
    %n1c = tensor.collapse_shape %n1 [[0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
    %eT32 = tensor.empty() : tensor<32x32xf32>
    %wqT = linalg.transpose ins(%wq : tensor<32x32xf32>) outs(%eT32 : tensor<32x32xf32>) permutation = [1, 0]
    %eT16 = tensor.empty() : tensor<32x16xf32>
    %wkT = linalg.transpose ins(%wk : tensor<16x32xf32>) outs(%eT16 : tensor<32x16xf32>) permutation = [1, 0]
    %wvT = linalg.transpose ins(%wv : tensor<16x32xf32>) outs(%eT16 : tensor<32x16xf32>) permutation = [1, 0]
    %e1632 = tensor.empty() : tensor<16x32xf32>
    %z1632 = linalg.fill ins(%c0 : f32) outs(%e1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %e1616 = tensor.empty() : tensor<16x16xf32>
    %z1616 = linalg.fill ins(%c0 : f32) outs(%e1616 : tensor<16x16xf32>) -> tensor<16x16xf32>
    %q2d = linalg.matmul ins(%n1c, %wqT : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %k2d = linalg.matmul ins(%n1c, %wkT : tensor<16x32xf32>, tensor<32x16xf32>) outs(%z1616 : tensor<16x16xf32>) -> tensor<16x16xf32>
    %v2d = linalg.matmul ins(%n1c, %wvT : tensor<16x32xf32>, tensor<32x16xf32>) outs(%z1616 : tensor<16x16xf32>) -> tensor<16x16xf32>
    %q4 = tensor.expand_shape %q2d [[0, 1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<16x32xf32> into tensor<2x8x4x8xf32>
    %k4 = tensor.expand_shape %k2d [[0, 1], [2, 3]] output_shape [2, 8, 2, 8] : tensor<16x16xf32> into tensor<2x8x2x8xf32>
    %v4 = tensor.expand_shape %v2d [[0, 1], [2, 3]] output_shape [2, 8, 2, 8] : tensor<16x16xf32> into tensor<2x8x2x8xf32>
    %eq = tensor.empty() : tensor<2x4x8x8xf32>
    %ekv = tensor.empty() : tensor<2x2x8x8xf32>
    %q = linalg.transpose ins(%q4 : tensor<2x8x4x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
    %k = linalg.transpose ins(%k4 : tensor<2x8x2x8xf32>) outs(%ekv : tensor<2x2x8x8xf32>) permutation = [0, 2, 1, 3]
    %v = linalg.transpose ins(%v4 : tensor<2x8x2x8xf32>) outs(%ekv : tensor<2x2x8x8xf32>) permutation = [0, 2, 1, 3]

    // ---- rotary (rotate_half) ----
    %q1 = tensor.extract_slice %q[0, 0, 0, 0] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
    %q2 = tensor.extract_slice %q[0, 0, 0, 4] [2, 4, 8, 4] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<2x4x8x4xf32>
    %eqh = tensor.empty() : tensor<2x4x8x4xf32>
    %nq2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%q2 : tensor<2x4x8x4xf32>) outs(%eqh : tensor<2x4x8x4xf32>) {
      ^bb0(%a: f32, %o: f32):
        %n = arith.negf %a : f32
        linalg.yield %n : f32
    } -> tensor<2x4x8x4xf32>
    %rq = tensor.concat dim(3) %nq2, %q1 : (tensor<2x4x8x4xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x8xf32>
    %qr = linalg.generic {indexing_maps = [#id4, #sd4, #id4, #sd4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%q, %cos, %rq, %sin : tensor<2x4x8x8xf32>, tensor<8x8xf32>, tensor<2x4x8x8xf32>, tensor<8x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) {
      ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %o: f32):
        %m1 = arith.mulf %a, %c : f32
        %m2 = arith.mulf %r, %s : f32
        %y = arith.addf %m1, %m2 : f32
        linalg.yield %y : f32
    } -> tensor<2x4x8x8xf32>
    %k1 = tensor.extract_slice %k[0, 0, 0, 0] [2, 2, 8, 4] [1, 1, 1, 1] : tensor<2x2x8x8xf32> to tensor<2x2x8x4xf32>
    %k2 = tensor.extract_slice %k[0, 0, 0, 4] [2, 2, 8, 4] [1, 1, 1, 1] : tensor<2x2x8x8xf32> to tensor<2x2x8x4xf32>
    %ekh = tensor.empty() : tensor<2x2x8x4xf32>
    %nk2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%k2 : tensor<2x2x8x4xf32>) outs(%ekh : tensor<2x2x8x4xf32>) {
      ^bb0(%a: f32, %o: f32):
        %n = arith.negf %a : f32
        linalg.yield %n : f32
    } -> tensor<2x2x8x4xf32>
    %rk = tensor.concat dim(3) %nk2, %k1 : (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x8x8xf32>
    %kr = linalg.generic {indexing_maps = [#id4, #sd4, #id4, #sd4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%k, %cos, %rk, %sin : tensor<2x2x8x8xf32>, tensor<8x8xf32>, tensor<2x2x8x8xf32>, tensor<8x8xf32>) outs(%ekv : tensor<2x2x8x8xf32>) {
      ^bb0(%a: f32, %c: f32, %r: f32, %s: f32, %o: f32):
        %m1 = arith.mulf %a, %c : f32
        %m2 = arith.mulf %r, %s : f32
        %y = arith.addf %m1, %m2 : f32
        linalg.yield %y : f32
    } -> tensor<2x2x8x8xf32>

    // ---- repeat_kv (2 -> 4 heads) ----
    %erep = tensor.empty() : tensor<2x2x2x8x8xf32>
    %kb = linalg.broadcast ins(%kr : tensor<2x2x8x8xf32>) outs(%erep : tensor<2x2x2x8x8xf32>) dimensions = [2]
    %vb = linalg.broadcast ins(%v : tensor<2x2x8x8xf32>) outs(%erep : tensor<2x2x2x8x8xf32>) dimensions = [2]
    %krep = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x2x8x8xf32> into tensor<2x4x8x8xf32>
    %vrep = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<2x2x2x8x8xf32> into tensor<2x4x8x8xf32>

    // ---- attention ----
    %kT = linalg.transpose ins(%krep : tensor<2x4x8x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) permutation = [0, 1, 3, 2]
    %q3 = tensor.collapse_shape %qr [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
    %kT3 = tensor.collapse_shape %kT [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
    %v3 = tensor.collapse_shape %vrep [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
    %e888 = tensor.empty() : tensor<8x8x8xf32>
    %z888 = linalg.fill ins(%c0 : f32) outs(%e888 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %sc3 = linalg.batch_matmul ins(%q3, %kT3 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%z888 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %sc = tensor.expand_shape %sc3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
    %scd = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%sc : tensor<2x4x8x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) {
      ^bb0(%a: f32, %o: f32):
        %d = arith.divf %a, %sqrtd : f32
        linalg.yield %d : f32
    } -> tensor<2x4x8x8xf32>
    %scm = linalg.generic {indexing_maps = [#id4, #sd4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%scd, %mask : tensor<2x4x8x8xf32>, tensor<8x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) {
      ^bb0(%a: f32, %m: f32, %o: f32):
        %d = arith.addf %a, %m : f32
        linalg.yield %d : f32
    } -> tensor<2x4x8x8xf32>
    %e248 = tensor.empty() : tensor<2x4x8xf32>
    %mi = linalg.fill ins(%ninf : f32) outs(%e248 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %mx = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%scm : tensor<2x4x8x8xf32>) outs(%mi : tensor<2x4x8xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %m = arith.maximumf %a, %acc : f32
        linalg.yield %m : f32
    } -> tensor<2x4x8xf32>
    %ex = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%scm, %mx : tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) {
      ^bb0(%a: f32, %m: f32, %o: f32):
        %s = arith.subf %a, %m : f32
        %e = math.exp %s : f32
        linalg.yield %e : f32
    } -> tensor<2x4x8x8xf32>
    %si = linalg.fill ins(%c0 : f32) outs(%e248 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %sm = linalg.generic {indexing_maps = [#id4, #red4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%ex : tensor<2x4x8x8xf32>) outs(%si : tensor<2x4x8xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
    } -> tensor<2x4x8xf32>
    %pr = linalg.generic {indexing_maps = [#id4, #red4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%ex, %sm : tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) outs(%eq : tensor<2x4x8x8xf32>) {
      ^bb0(%a: f32, %s: f32, %o: f32):
        %d = arith.divf %a, %s : f32
        linalg.yield %d : f32
    } -> tensor<2x4x8x8xf32>
    %pr3 = tensor.collapse_shape %pr [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
    %at3 = linalg.batch_matmul ins(%pr3, %v3 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%z888 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %at = tensor.expand_shape %at3 [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
    %eat = tensor.empty() : tensor<2x8x4x8xf32>
    %atT = linalg.transpose ins(%at : tensor<2x4x8x8xf32>) outs(%eat : tensor<2x8x4x8xf32>) permutation = [0, 2, 1, 3]
    %atc = tensor.collapse_shape %atT [[0, 1], [2, 3]] : tensor<2x8x4x8xf32> into tensor<16x32xf32>
    %woT = linalg.transpose ins(%wo : tensor<32x32xf32>) outs(%eT32 : tensor<32x32xf32>) permutation = [1, 0]
    %o2d = linalg.matmul ins(%atc, %woT : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %o3 = tensor.expand_shape %o2d [[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf32> into tensor<2x8x32xf32>
    %h = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %o3 : tensor<2x8x32xf32>, tensor<2x8x32xf32>) outs(%e2832 : tensor<2x8x32xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
    } -> tensor<2x8x32xf32>

    // ---- RMSNorm 2 ----
    %ss2 = linalg.generic {indexing_maps = [#id3, #red3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h : tensor<2x8x32xf32>) outs(%z28 : tensor<2x8xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %m = arith.mulf %a, %a : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<2x8xf32>
    %rs2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%ss2 : tensor<2x8xf32>) outs(%e28 : tensor<2x8xf32>) {
      ^bb0(%a: f32, %o: f32):
        %m = arith.divf %a, %cn : f32
        %p = arith.addf %m, %eps : f32
        %r = math.rsqrt %p : f32
        linalg.yield %r : f32
    } -> tensor<2x8xf32>
    %n2 = linalg.generic {indexing_maps = [#id3, #red3, #last3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%h, %rs2, %rms2_w : tensor<2x8x32xf32>, tensor<2x8xf32>, tensor<32xf32>) outs(%e2832 : tensor<2x8x32xf32>) {
      ^bb0(%a: f32, %r: f32, %w: f32, %o: f32):
        %m = arith.mulf %a, %r : f32
        %m2 = arith.mulf %m, %w : f32
        linalg.yield %m2 : f32
    } -> tensor<2x8x32xf32>

    // ---- SwiGLU MLP ----
    %n2c = tensor.collapse_shape %n2 [[0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
    %eT64 = tensor.empty() : tensor<32x64xf32>
    %w1T = linalg.transpose ins(%w1 : tensor<64x32xf32>) outs(%eT64 : tensor<32x64xf32>) permutation = [1, 0]
    %w3T = linalg.transpose ins(%w3 : tensor<64x32xf32>) outs(%eT64 : tensor<32x64xf32>) permutation = [1, 0]
    %eT642 = tensor.empty() : tensor<64x32xf32>
    %w2T = linalg.transpose ins(%w2 : tensor<32x64xf32>) outs(%eT642 : tensor<64x32xf32>) permutation = [1, 0]
    %e1664 = tensor.empty() : tensor<16x64xf32>
    %z1664 = linalg.fill ins(%c0 : f32) outs(%e1664 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %g = linalg.matmul ins(%n2c, %w1T : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z1664 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %u = linalg.matmul ins(%n2c, %w3T : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z1664 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %gu = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%g, %u : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e1664 : tensor<16x64xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %na = arith.negf %a : f32
        %ea = math.exp %na : f32
        %den = arith.addf %ea, %c1 : f32
        %sg = arith.divf %c1, %den : f32
        %si2 = arith.mulf %a, %sg : f32
        %y = arith.mulf %si2, %b : f32
        linalg.yield %y : f32
    } -> tensor<16x64xf32>
    %d2d = linalg.matmul ins(%gu, %w2T : tensor<16x64xf32>, tensor<64x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %d3 = tensor.expand_shape %d2d [[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf32> into tensor<2x8x32xf32>
    %out = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%h, %d3 : tensor<2x8x32xf32>, tensor<2x8x32xf32>) outs(%e2832 : tensor<2x8x32xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
    } -> tensor<2x8x32xf32>
    return %out : tensor<2x8x32xf32>
  }
}
