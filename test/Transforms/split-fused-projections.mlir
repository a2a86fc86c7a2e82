// RUN: soap-opt %s --soap-split-fused-projections --split-input-file | FileCheck %s

// GPT-2's attention input: one matmul for q, k and v (48 = 3 x 2 heads x 8
// columns) and its bias add, reshaped to [B, S, 3, H, D] and sliced. Each
// part gets a matmul of its own on its 16 columns of the weight, a bias add
// on its part of the bias and a reshape; the parts are named in column
// order.
// CHECK-LABEL: func.func @gpt2_qkv(
// CHECK-SAME:    %[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x48xf32>, %[[B:.*]]: tensor<48xf32>
// CHECK-DAG:     %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0] [16, 16] [1, 1]
// CHECK-DAG:     %[[W1:.*]] = tensor.extract_slice %[[W]][0, 16] [16, 16] [1, 1]
// CHECK-DAG:     %[[W2:.*]] = tensor.extract_slice %[[W]][0, 32] [16, 16] [1, 1]
// CHECK-DAG:     %[[F0:.*]] = linalg.fill {{.*}} -> tensor<8x16xf32>
// CHECK-DAG:     %[[M0:.*]] = linalg.matmul {soap.name = "c_attn.0"} ins(%[[X]], %[[W0]] : {{.*}}) outs(%[[F0]] :
// CHECK-DAG:     %[[M1:.*]] = linalg.matmul {soap.name = "c_attn.1"} ins(%[[X]], %[[W1]] :
// CHECK-DAG:     %[[M2:.*]] = linalg.matmul {soap.name = "c_attn.2"} ins(%[[X]], %[[W2]] :
// CHECK-DAG:     %[[B0:.*]] = tensor.extract_slice %[[B]][0] [16] [1]
// CHECK-DAG:     %[[A0:.*]] = linalg.generic {{.*}} ins(%[[M0]], %[[B0]] : tensor<8x16xf32>, tensor<16xf32>) {{.*}}soap.name = "bias_add.0"
// CHECK-DAG:     %[[E0:.*]] = tensor.expand_shape %[[A0]] {{\[}}[0, 1], [2, 3, 4]] output_shape [2, 4, 1, 2, 8] {soap.name = "split_heads.0"}
// CHECK-DAG:     %[[Q:.*]] = tensor.extract_slice %[[E0]][0, 0, 0, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] {soap.name = "q"} : tensor<2x4x1x2x8xf32> to tensor<2x4x2x8xf32>
// CHECK-DAG:     %[[A2:.*]] = linalg.generic {{.*}} ins(%[[M2]], %{{.*}} : tensor<8x16xf32>, tensor<16xf32>) {{.*}}soap.name = "bias_add.2"
// CHECK-DAG:     %[[E2:.*]] = tensor.expand_shape %[[A2]] {{.*}} {soap.name = "split_heads.2"}
// CHECK-DAG:     %[[V:.*]] = tensor.extract_slice %[[E2]]{{.*}} {soap.name = "v"}
// CHECK-NOT:     tensor<8x48xf32>
// CHECK:         return %[[Q]], %{{.*}}, %[[V]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @gpt2_qkv(%x: tensor<8x16xf32>, %w: tensor<16x48xf32>, %b: tensor<48xf32>) -> (tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x48xf32>) -> tensor<8x48xf32>
  %m = linalg.matmul {soap.name = "c_attn"} ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
  %a = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<8x48xf32>, tensor<48xf32>) outs(%e : tensor<8x48xf32>) attrs = {soap.name = "bias_add"} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x48xf32>
  %h = tensor.expand_shape %a [[0, 1], [2, 3, 4]] output_shape [2, 4, 3, 2, 8] {soap.name = "split_heads"} : tensor<8x48xf32> into tensor<2x4x3x2x8xf32>
  %q = tensor.extract_slice %h[0, 0, 0, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] {soap.name = "q"} : tensor<2x4x3x2x8xf32> to tensor<2x4x2x8xf32>
  %k = tensor.extract_slice %h[0, 0, 1, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] {soap.name = "k"} : tensor<2x4x3x2x8xf32> to tensor<2x4x2x8xf32>
  %v = tensor.extract_slice %h[0, 0, 2, 0, 0] [2, 4, 1, 2, 8] [1, 1, 1, 1, 1] {soap.name = "v"} : tensor<2x4x3x2x8xf32> to tensor<2x4x2x8xf32>
  return %q, %k, %v : tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>
}

// -----

// torch.split on the columns, without a reshape in between: the same, each
// part's matmul replacing its slice.
// CHECK-LABEL: func.func @split_columns(
// CHECK:         %[[M0:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x16xf32>)
// CHECK:         %[[M1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK:         return %[[M0]], %[[M1]]
func.func @split_columns(%x: tensor<8x16xf32>, %w: tensor<16x48xf32>) -> (tensor<8x16xf32>, tensor<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x48xf32>) -> tensor<8x48xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
  %p0 = tensor.extract_slice %m[0, 0] [8, 16] [1, 1] : tensor<8x48xf32> to tensor<8x16xf32>
  %p1 = tensor.extract_slice %m[0, 16] [8, 32] [1, 1] : tensor<8x48xf32> to tensor<8x32xf32>
  return %p0, %p1 : tensor<8x16xf32>, tensor<8x32xf32>
}

// -----

// Left alone: slices of the rows (a recurrent model's time steps are not a
// projection's columns), overlapping slices, a result read whole as well,
// and slices that cut a reshaped group inside (a part of each head).
// CHECK-LABEL: func.func @left(
// CHECK-COUNT-4: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x48xf32>)
// CHECK-NOT:     linalg.matmul
func.func @left(%x: tensor<8x16xf32>, %w: tensor<16x48xf32>) -> (tensor<4x48xf32>, tensor<4x48xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x16xf32>, tensor<8x48xf32>, tensor<8x3x1x8xf32>, tensor<8x3x1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x48xf32>) -> tensor<8x48xf32>
  %rows = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
  %r0 = tensor.extract_slice %rows[0, 0] [4, 48] [1, 1] : tensor<8x48xf32> to tensor<4x48xf32>
  %r1 = tensor.extract_slice %rows[4, 0] [4, 48] [1, 1] : tensor<8x48xf32> to tensor<4x48xf32>
  %over = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
  %o0 = tensor.extract_slice %over[0, 0] [8, 32] [1, 1] : tensor<8x48xf32> to tensor<8x32xf32>
  %o1 = tensor.extract_slice %over[0, 16] [8, 32] [1, 1] : tensor<8x48xf32> to tensor<8x32xf32>
  %whole = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
  %w0 = tensor.extract_slice %whole[0, 0] [8, 16] [1, 1] : tensor<8x48xf32> to tensor<8x16xf32>
  %inner = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x48xf32>) outs(%f : tensor<8x48xf32>) -> tensor<8x48xf32>
  %h = tensor.expand_shape %inner [[0], [1, 2, 3]] output_shape [8, 3, 2, 8] : tensor<8x48xf32> into tensor<8x3x2x8xf32>
  %i0 = tensor.extract_slice %h[0, 0, 0, 0] [8, 3, 1, 8] [1, 1, 1, 1] : tensor<8x3x2x8xf32> to tensor<8x3x1x8xf32>
  %i1 = tensor.extract_slice %h[0, 0, 1, 0] [8, 3, 1, 8] [1, 1, 1, 1] : tensor<8x3x2x8xf32> to tensor<8x3x1x8xf32>
  return %r0, %r1, %o0, %o1, %w0, %whole, %i0, %i1 : tensor<4x48xf32>, tensor<4x48xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x16xf32>, tensor<8x48xf32>, tensor<8x3x1x8xf32>, tensor<8x3x1x8xf32>
}
