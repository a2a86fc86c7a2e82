// RUN: soap-opt %s -split-input-file --soap-spread-strided-inserts | FileCheck %s

// torch-mlir's transposed convolution input: 4x4 rows and columns spread by
// 2 at offset 2 in 11x11 zeros. Each strided dim becomes (n, 1), padded to
// (n, 2) and collapsed (8), then one pad puts it at the offsets (2 before,
// 11 - 2 - 8 = 1 after).
// CHECK-LABEL: func.func @transposed_conv_input(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4x4xf32>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3], [4, 5]] output_shape [2, 3, 4, 1, 4, 1]
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[S:.*]] = tensor.pad %[[E]] low[0, 0, 0, 0, 0, 0] high[0, 0, 0, 1, 0, 1]
// CHECK:           tensor.yield %[[ZERO]]
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1], [2, 3], [4, 5]] : tensor<2x3x4x2x4x2xf32> into tensor<2x3x8x8xf32>
// CHECK:         %[[P:.*]] = tensor.pad %[[C]] low[0, 0, 2, 2] high[0, 0, 1, 1]
// CHECK:         } : tensor<2x3x8x8xf32> to tensor<2x3x11x11xf32>
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return %[[P]]
func.func @transposed_conv_input(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x11x11xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x11x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x11x11xf32>) -> tensor<2x3x11x11xf32>
  %d = tensor.insert_slice %x into %z[0, 0, 2, 2] [2, 3, 4, 4] [1, 1, 2, 2] : tensor<2x3x4x4xf32> into tensor<2x3x11x11xf32>
  return %d : tensor<2x3x11x11xf32>
}

// -----

// A splat constant's value fills the gaps; a stride of 3 whose spread (3 x 3
// = 9) runs past the 8 columns after offset 0 is cut to 8.
// CHECK-LABEL: func.func @splat_constant(
// CHECK:         arith.constant 5.000000e-01 : f32
// CHECK:         tensor.collapse_shape {{.*}} into tensor<4x9xf32>
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [4, 8] [1, 1] : tensor<4x9xf32> to tensor<4x8xf32>
// CHECK-NOT:     tensor.insert_slice
func.func @splat_constant(%x: tensor<4x3xf32>) -> tensor<4x8xf32> {
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %d = tensor.insert_slice %x into %half[0, 0] [4, 3] [1, 3] : tensor<4x3xf32> into tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// Left alone: a destination that is not a splat, a unit-stride insertion,
// and dynamic offsets.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: tensor.insert_slice
func.func @kept(%x: tensor<2x2xf32>, %d: tensor<4x4xf32>, %i: index) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = tensor.insert_slice %x into %d[0, 0] [2, 2] [2, 2] : tensor<2x2xf32> into tensor<4x4xf32>
  %b = tensor.insert_slice %x into %z[1, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %c = tensor.insert_slice %x into %z[%i, 0] [2, 2] [2, 2] : tensor<2x2xf32> into tensor<4x4xf32>
  return %a, %b, %c : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
