// A two-layer MLP as torch-mlir exports it with a symbolic batch size
// (torch.export's dynamic_shapes): the input is tensor<?x16xf32>, sizes
// come from tensor.dim, the export asserts that the matmul's operands
// agree, and the weights are constants (transposed before use, as
// torch.nn.Linear's are). soapc --batch=N makes it static.
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
module {
  func.func @dynamic_batch_mlp(%arg0: tensor<?x16xf32>) -> tensor<?x4xf32> {
    %c0 = arith.constant 0 : index
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %w1 = arith.constant dense<[[0.11, -0.2, 0.3, 0.05, -0.14, 0.21, -0.08, 0.17, 0.02, -0.3, 0.12, 0.09, -0.05, 0.23, -0.19, 0.07], [-0.12, 0.25, 0.04, -0.18, 0.3, -0.06, 0.14, 0.01, -0.22, 0.16, -0.09, 0.27, 0.13, -0.02, 0.08, -0.24], [0.2, 0.03, -0.15, 0.26, -0.11, 0.09, 0.18, -0.27, 0.06, 0.12, 0.24, -0.07, -0.16, 0.05, 0.29, -0.1], [-0.04, -0.13, 0.22, 0.08, 0.15, -0.25, 0.01, 0.19, -0.17, 0.28, -0.03, 0.11, 0.2, -0.21, 0.06, 0.14], [0.07, 0.18, -0.26, -0.09, 0.02, 0.13, -0.2, 0.24, 0.1, -0.05, 0.16, -0.28, 0.03, 0.12, -0.11, 0.25], [0.23, -0.08, 0.1, 0.17, -0.29, 0.04, 0.26, -0.12, -0.01, 0.2, -0.15, 0.06, 0.27, -0.18, 0.09, -0.03], [-0.19, 0.06, 0.28, -0.02, 0.12, 0.21, -0.1, 0.05, 0.25, -0.14, 0.08, 0.19, -0.23, 0.01, 0.16, -0.07], [0.09, -0.27, -0.03, 0.14, 0.22, -0.16, 0.07, 0.29, -0.06, 0.01, 0.18, -0.12, 0.11, 0.26, -0.2, 0.04]]> : tensor<8x16xf32>
    %b1 = arith.constant dense<[0.01, -0.02, 0.03, 0.0, 0.05, -0.01, 0.02, -0.03]> : tensor<8xf32>
    %w2 = arith.constant dense<[[0.3, -0.1, 0.2, 0.05, -0.25, 0.15, 0.1, -0.2], [-0.15, 0.25, -0.05, 0.2, 0.1, -0.3, 0.05, 0.15], [0.05, 0.1, 0.3, -0.2, 0.15, 0.05, -0.25, 0.2], [0.2, -0.05, -0.15, 0.25, -0.1, 0.2, 0.3, -0.05]]> : tensor<4x8xf32>
    %b2 = arith.constant dense<[0.02, 0.0, -0.01, 0.03]> : tensor<4xf32>
    %dim = tensor.dim %arg0, %c0 : tensor<?x16xf32>
    %n = arith.index_cast %dim : index to i64
    %positive = arith.cmpi sgt, %n, %c0_i64 : i64
    cf.assert %positive, "batch must be positive"
    // Layer 1: x W1^T + b1, ReLU.
    %t1e = tensor.empty() : tensor<16x8xf32>
    %t1 = linalg.transpose ins(%w1 : tensor<8x16xf32>) outs(%t1e : tensor<16x8xf32>) permutation = [1, 0]
    %h0 = tensor.empty(%dim) : tensor<?x8xf32>
    %h0f = linalg.fill ins(%cst : f32) outs(%h0 : tensor<?x8xf32>) -> tensor<?x8xf32>
    %h1 = linalg.matmul ins(%arg0, %t1 : tensor<?x16xf32>, tensor<16x8xf32>) outs(%h0f : tensor<?x8xf32>) -> tensor<?x8xf32>
    %h2 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%h1, %b1 : tensor<?x8xf32>, tensor<8xf32>) outs(%h0 : tensor<?x8xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %s = arith.addf %in, %b : f32
      %r = arith.maximumf %s, %cst : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    // Layer 2: h W2^T + b2.
    %t2e = tensor.empty() : tensor<8x4xf32>
    %t2 = linalg.transpose ins(%w2 : tensor<4x8xf32>) outs(%t2e : tensor<8x4xf32>) permutation = [1, 0]
    %dim2 = tensor.dim %h2, %c0 : tensor<?x8xf32>
    %o0 = tensor.empty(%dim2) : tensor<?x4xf32>
    %o0f = linalg.fill ins(%cst : f32) outs(%o0 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %o1 = linalg.matmul ins(%h2, %t2 : tensor<?x8xf32>, tensor<8x4xf32>) outs(%o0f : tensor<?x4xf32>) -> tensor<?x4xf32>
    %o2 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%o1, %b2 : tensor<?x4xf32>, tensor<4xf32>) outs(%o0 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %s = arith.addf %in, %b : f32
      linalg.yield %s : f32
    } -> tensor<?x4xf32>
    return %o2 : tensor<?x4xf32>
  }
}
