// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-bubble-up-slices))" | FileCheck %s

// A stride-2 spread of a whole 16-sample gradient (expand, pad with the
// stride's zeros, collapse) of which the rank reads samples 4..7: only
// those samples are sliced, expanded, padded and collapsed.
// CHECK-LABEL: func.func @spread(
// CHECK-SAME:      %[[DY:.*]]: tensor<16x8x3x3xf32>)
// CHECK:         %[[PART:.*]] = tensor.extract_slice %[[DY]][4, 0, 0, 0] [4, 8, 3, 3] [1, 1, 1, 1] : tensor<16x8x3x3xf32> to tensor<4x8x3x3xf32>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[PART]] {{\[}}[0], [1], [2, 3], [4, 5]] output_shape [4, 8, 3, 1, 3, 1]
// CHECK:         %[[P:.*]] = tensor.pad %[[E]] low[0, 0, 0, 0, 0, 0] high[0, 0, 0, 1, 0, 1]
// CHECK:         } : tensor<4x8x3x1x3x1xf32> to tensor<4x8x3x2x3x2xf32>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0], [1], [2, 3], [4, 5]] : tensor<4x8x3x2x3x2xf32> into tensor<4x8x6x6xf32>
// CHECK:         return %[[C]] : tensor<4x8x6x6xf32>
func.func @spread(%dy: tensor<16x8x3x3xf32>) -> tensor<4x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.expand_shape %dy [[0], [1], [2, 3], [4, 5]] output_shape [16, 8, 3, 1, 3, 1] : tensor<16x8x3x3xf32> into tensor<16x8x3x1x3x1xf32>
  %p = tensor.pad %e low[0, 0, 0, 0, 0, 0] high[0, 0, 0, 1, 0, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index, %f: index, %g: index):
    tensor.yield %zero : f32
  } : tensor<16x8x3x1x3x1xf32> to tensor<16x8x3x2x3x2xf32>
  %c = tensor.collapse_shape %p [[0], [1], [2, 3], [4, 5]] : tensor<16x8x3x2x3x2xf32> into tensor<16x8x6x6xf32>
  %part = tensor.extract_slice %c[4, 0, 0, 0] [4, 8, 6, 6] [1, 1, 1, 1] : tensor<16x8x6x6xf32> to tensor<4x8x6x6xf32>
  return %part : tensor<4x8x6x6xf32>
}

// -----

// An elementwise op (a ReLU's gradient) computed whole and read by two
// identical slices: they merge, and the op computes only that part.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME:      %[[X:.*]]: tensor<16x8xf32>, %[[DY:.*]]: tensor<16x8xf32>)
// CHECK-DAG:     %[[XP:.*]] = tensor.extract_slice %[[X]][4, 0] [4, 8] [1, 1]
// CHECK-DAG:     %[[DYP:.*]] = tensor.extract_slice %[[DY]][4, 0] [4, 8] [1, 1]
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[XP]], %[[DYP]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:         return %[[G]], %[[G]] : tensor<4x8xf32>, tensor<4x8xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: tensor<16x8xf32>, %dy: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<16x8xf32>
  %g = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %dy : tensor<16x8xf32>, tensor<16x8xf32>) outs(%init : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %b, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %p1 = tensor.extract_slice %g[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %p2 = tensor.extract_slice %g[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  return %p1, %p2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A tile's own result read back through an interior slice: the slice of
// the insert_slice region is the tile's value; the whole tensor is not
// read.
// CHECK-LABEL: func.func @tile_result(
// CHECK-SAME:      %[[T:.*]]: tensor<4x8xf32>
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return %[[T]] : tensor<4x8xf32>
func.func @tile_result(%tile: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %full = tensor.empty() : tensor<16x8xf32>
  %ins = tensor.insert_slice %tile into %full[4, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<16x8xf32>
  %part = tensor.extract_slice %ins[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  return %part : tensor<4x8xf32>
}

// -----

// A filter flipped for a convolution's input gradient (channels swapped,
// window reversed) of which the rank reads output channels 4..7 and window
// row 0: it flips only W[4..7][:][2][:], the rows that become them, so the
// rank reads (and holds, soap-compact-tensors) no more of W than its part.
// CHECK: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3 + 2)>
// CHECK-LABEL: func.func @flipped_filter(
// CHECK-SAME:      %[[W:.*]]: tensor<8x16x3x3xf32>)
// CHECK:         %[[PART:.*]] = tensor.extract_slice %[[W]][4, 0, 2, 0] [4, 16, 1, 3] [1, 1, 1, 1] : tensor<8x16x3x3xf32> to tensor<4x16x1x3xf32>
// CHECK:         %[[F:.*]] = linalg.generic {indexing_maps = [#[[FLIP]], #{{.*}}], {{.*}} ins(%[[PART]] : tensor<4x16x1x3xf32>) outs(%{{.*}} : tensor<16x4x1x3xf32>)
// CHECK:         return %[[F]] : tensor<16x4x1x3xf32>
#flip = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 2, -d3 + 2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @flipped_filter(%w: tensor<8x16x3x3xf32>) -> tensor<16x4x1x3xf32> {
  %init = tensor.empty() : tensor<16x8x3x3xf32>
  %f = linalg.generic {indexing_maps = [#flip, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<8x16x3x3xf32>) outs(%init : tensor<16x8x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16x8x3x3xf32>
  %part = tensor.extract_slice %f[0, 4, 0, 0] [16, 4, 1, 3] [1, 1, 1, 1] : tensor<16x8x3x3xf32> to tensor<16x4x1x3xf32>
  return %part : tensor<16x4x1x3xf32>
}

// -----

// A reversal over part of a dim only (rows 3 - d of 4, d < 3): not matched,
// the slice stays below the op.
// CHECK-LABEL: func.func @shifted_read(
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:         tensor.extract_slice %[[G]][0, 0, 1, 0]
#shifted = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2 + 3, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @shifted_read(%w: tensor<8x16x4x3xf32>) -> tensor<16x8x1x3xf32> {
  %init = tensor.empty() : tensor<16x8x3x3xf32>
  %f = linalg.generic {indexing_maps = [#shifted, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<8x16x4x3xf32>) outs(%init : tensor<16x8x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<16x8x3x3xf32>
  %part = tensor.extract_slice %f[0, 0, 1, 0] [16, 8, 1, 3] [1, 1, 1, 1] : tensor<16x8x3x3xf32> to tensor<16x8x1x3xf32>
  return %part : tensor<16x8x1x3xf32>
}

// -----

// The same through a copy that writes its loops permuted (out[d1, d0]) and
// reads dim 1 of its input reversed: the slice out[0:2, 1:4] is loops
// d0 in [1, 4), d1 in [0, 2), input rows 1..3 and columns 5 - 0 - 2 = 3..4.
// CHECK: #[[REV:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 1)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @permuted_output(
// CHECK-SAME:      %[[X:.*]]: tensor<6x5xf32>)
// CHECK:         %[[PART:.*]] = tensor.extract_slice %[[X]][1, 3] [3, 2] [1, 1] : tensor<6x5xf32> to tensor<3x2xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[REV]], #[[OUT]]], {{.*}} ins(%[[PART]] : tensor<3x2xf32>) outs(%{{.*}} : tensor<2x3xf32>)
#rev = affine_map<(d0, d1) -> (d0, -d1 + 4)>
#out = affine_map<(d0, d1) -> (d1, d0)>
func.func @permuted_output(%x: tensor<6x5xf32>) -> tensor<2x3xf32> {
  %init = tensor.empty() : tensor<5x6xf32>
  %t = linalg.generic {indexing_maps = [#rev, #out], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<6x5xf32>) outs(%init : tensor<5x6xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<5x6xf32>
  %part = tensor.extract_slice %t[0, 1] [2, 3] [1, 1] : tensor<5x6xf32> to tensor<2x3xf32>
  return %part : tensor<2x3xf32>
}
