// RUN: soap-opt %s --soap-dump-graph -o /dev/null | FileCheck %s
// RUN: soap-opt %s --soap-dump-graph=json -o /dev/null | FileCheck %s --check-prefix=JSON

// The cost model's contraction class (GEMM / cuDNN rates) follows what an
// op computes, not its name: a linalg.generic that sums products of its two
// inputs (upstream's contraction interface; the convolution interface with a
// multiply-accumulate body) is a contraction like linalg.matmul. Pooling
// (the convolution interface's loops, a max body) and a row sum are not.

#mm_a = affine_map<(i, j, k) -> (i, k)>
#mm_b = affine_map<(i, j, k) -> (k, j)>
#mm_c = affine_map<(i, j, k) -> (i, j)>
#conv_x = affine_map<(n, f, w, c, r) -> (n, c, w + r)>
#conv_w = affine_map<(n, f, w, c, r) -> (f, c, r)>
#conv_y = affine_map<(n, f, w, c, r) -> (n, f, w)>
#pool_x = affine_map<(n, c, w, r) -> (n, c, w * 2 + r)>
#pool_k = affine_map<(n, c, w, r) -> (r)>
#pool_y = affine_map<(n, c, w, r) -> (n, c, w)>
#row = affine_map<(n, j) -> (n, j)>
#row_sum = affine_map<(n, j) -> (n)>

// CHECK-LABEL: graph @mixed
// CHECK: node 0 "mixed_matmul" linalg.generic loops=[S:4, P:8, R:16] flops={{.*}} contraction{{$}}
// CHECK: node 1 "conv1d" linalg.generic loops=[S:4, P:6, A:6, R:8, R:3] flops={{.*}} contraction{{$}}
// CHECK: node 2 "pool" linalg.generic loops=[S:4, A:6, A:2, R:2] flops={{.*}} bytes={{[^ ]*$}}
// CHECK: node 4 "row_sum" linalg.generic loops=[S:4, R:12] flops={{.*}} bytes={{[^ ]*$}}
// CHECK: node 5 "named" linalg.matmul loops=[S:4, P:3, R:8] flops={{.*}} contraction{{$}}

// JSON: "nodes":
// JSON: "name": "mixed_matmul"
// JSON-NOT: "name"
// JSON: "contraction": true
// JSON: "name": "conv1d"
// JSON-NOT: "name"
// JSON: "contraction": true
// JSON: "name": "pool"
// JSON-NOT: "contraction"
// JSON: "name": "row_sum"
// JSON-NOT: "contraction"
// JSON: "name": "named"
// JSON-NOT: "name"
// JSON: "contraction": true
func.func @mixed(%x: tensor<4x16xf32>, %w: tensor<16x8xbf16>,
                 %xc: tensor<4x8x8xf32>, %w2: tensor<6x8x3xf32>, %w3: tensor<8x3xf32>)
    -> (tensor<4xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  // x (f32) times w (bf16, widened in the body) into f32.
  %e0 = tensor.empty() : tensor<4x8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x16xf32>, tensor<16x8xbf16>)
      outs(%f0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc("mixed_matmul")
  // A 1-d convolution written as a generic: 8 channels in, 6 out, width 3.
  %e1 = tensor.empty() : tensor<4x6x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %c = linalg.generic {indexing_maps = [#conv_x, #conv_w, #conv_y],
                       iterator_types = ["parallel", "parallel", "parallel",
                                         "reduction", "reduction"]}
      ins(%xc, %w2 : tensor<4x8x8xf32>, tensor<6x8x3xf32>)
      outs(%f1 : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6x6xf32> loc("conv1d")
  // Max pooling along the width, window 2, stride 2.
  %win = tensor.empty() : tensor<2xf32>
  %e2 = tensor.empty() : tensor<4x6x2xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x6x2xf32>) -> tensor<4x6x2xf32>
  %pl = linalg.generic {indexing_maps = [#pool_x, #pool_k, #pool_y],
                        iterator_types = ["parallel", "parallel", "parallel",
                                          "reduction"]}
      ins(%c, %win : tensor<4x6x6xf32>, tensor<2xf32>)
      outs(%f2 : tensor<4x6x2xf32>) {
  ^bb0(%a: f32, %k: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x6x2xf32> loc("pool")
  %flat = tensor.collapse_shape %pl [[0], [1, 2]]
      : tensor<4x6x2xf32> into tensor<4x12xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#row, #row_sum],
                         iterator_types = ["parallel", "reduction"]}
      ins(%flat : tensor<4x12xf32>) outs(%f3 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32> loc("row_sum")
  %e4 = tensor.empty() : tensor<4x3xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %n = linalg.matmul ins(%h, %w3 : tensor<4x8xf32>, tensor<8x3xf32>)
      outs(%f4 : tensor<4x3xf32>) -> tensor<4x3xf32> loc("named")
  return %sum, %n : tensor<4xf32>, tensor<4x3xf32>
}
