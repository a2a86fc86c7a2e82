// RUN: soap-opt %s --soap-split-merged-batch-loops --split-input-file | FileCheck %s

// Attention as torch-mlir exports it: [B, H, S, D] collapsed to
// [B * H, S, D] for two batch matmuls, a softmax-like chain between them,
// the context expanded back. Every op of the chain gets a loop for the
// samples and one for the heads, reads the tensors before the collapses and
// writes the one after the expansion; the names stay.
// CHECK-DAG:   #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG:   #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %[[QA:.*]]: tensor<2x3x4x8xf32>, %[[KA:.*]]: tensor<2x3x8x4xf32>, %[[VA:.*]]: tensor<2x3x4x8xf32>
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[SC:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[QA]], %[[KA]] : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>)
// CHECK-SAME:      soap.name = "scores"
// CHECK:         %[[EX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SC]] : tensor<2x3x4x4xf32>)
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[EX]] : tensor<2x3x4x4xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[EX]], %[[SUM]] : tensor<2x3x4x4xf32>, tensor<2x3x4xf32>)
// CHECK:         %[[CTX:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[VA]] : tensor<2x3x4x4xf32>, tensor<2x3x4x8xf32>)
// CHECK-SAME:      outs(%{{.*}} : tensor<2x3x4x8xf32>)
// CHECK-SAME:      soap.name = "context"
// CHECK-NOT:     tensor.expand_shape
// CHECK:         return %[[CTX]] : tensor<2x3x4x8xf32>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @attention(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x3x8x4xf32> into tensor<6x8x4xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
  %es = tensor.empty() : tensor<6x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %s = linalg.batch_matmul {soap.name = "scores"} ins(%q3, %k3 : tensor<6x4x8xf32>, tensor<6x8x4xf32>) outs(%fs : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %ex = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<6x4x4xf32>) outs(%es : tensor<6x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<6x4x4xf32>
  %er = tensor.empty() : tensor<6x4xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<6x4xf32>) -> tensor<6x4xf32>
  %sum = linalg.reduce ins(%ex : tensor<6x4x4xf32>) outs(%fr : tensor<6x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<6x4x4xf32>, tensor<6x4xf32>) outs(%es : tensor<6x4x4xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.divf %a, %t : f32
    linalg.yield %d : f32
  } -> tensor<6x4x4xf32>
  %ec = tensor.empty() : tensor<6x4x8xf32>
  %fc = linalg.fill ins(%zero : f32) outs(%ec : tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  %c = linalg.batch_matmul {soap.name = "context"} ins(%p, %v3 : tensor<6x4x4xf32>, tensor<6x4x8xf32>) outs(%fc : tensor<6x4x8xf32>) -> tensor<6x4x8xf32>
  %c4 = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 3, 4, 8] : tensor<6x4x8xf32> into tensor<2x3x4x8xf32>
  return %c4 : tensor<2x3x4x8xf32>
}

// -----

// A reshape that merges a matmul's M dims (the tokens of a linear layer) is
// left, and so is an elementwise op on merged dims with no expanded op
// beside it.
// CHECK-LABEL: func.func @tokens(
// CHECK:         tensor.collapse_shape
// CHECK:         linalg.matmul
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:         tensor.expand_shape
func.func @tokens(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %xf = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%xf, %w : tensor<8x8xf32>, tensor<8x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %y3 = tensor.expand_shape %t [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  return %y3 : tensor<2x4x16xf32>
}

// -----

// A batch matmul whose result another op reads besides the expansion stays
// (expanding it would compute it twice); its operands' collapse still
// folds into it: the result is collapsed for the other reader.
// CHECK-LABEL: func.func @shared_result(
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x4xf32> into tensor<6x4x4xf32>
// CHECK:         return %[[G]], %[[C]]
func.func @shared_result(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x8x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<6x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x3x4x8xf32> into tensor<6x4x8xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x3x8x4xf32> into tensor<6x8x4xf32>
  %es = tensor.empty() : tensor<6x4x4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<6x4x8xf32>, tensor<6x8x4xf32>) outs(%fs : tensor<6x4x4xf32>) -> tensor<6x4x4xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 3, 4, 4] : tensor<6x4x4xf32> into tensor<2x3x4x4xf32>
  return %s4, %s : tensor<2x3x4x4xf32>, tensor<6x4x4xf32>
}

// -----

// A model without such reshapes is left as it is (not even canonicalized).
// CHECK-LABEL: func.func @untouched(
// CHECK:         %[[E:.*]] = tensor.expand_shape
// CHECK:         tensor.collapse_shape %[[E]]
func.func @untouched(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %c = tensor.collapse_shape %e [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
