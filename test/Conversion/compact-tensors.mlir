// RUN: soap-opt %s -split-input-file --soap-compact-tensors | FileCheck %s

// A rank's tile of a data-parallel layer: the tensor shrinks to its rows,
// the insert and the read move with it; the reshape of it too.
// CHECK-LABEL: func.func @rows(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK:         %[[I:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<2x3x4xf32>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[I]] {{\[}}[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
// CHECK:         tensor.extract_slice %[[C]][1, 0] [1, 12] [1, 1] : tensor<2x12xf32> to tensor<1x12xf32>
func.func @rows(%tile: tensor<2x3x4xf32>) -> tensor<1x12xf32> {
  %e = tensor.empty() : tensor<8x3x4xf32>
  %i = tensor.insert_slice %tile into %e[4, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<8x3x4xf32>
  %c = tensor.collapse_shape %i [[0], [1, 2]] : tensor<8x3x4xf32> into tensor<8x12xf32>
  %r = tensor.extract_slice %c[5, 0] [1, 12] [1, 1] : tensor<8x12xf32> to tensor<1x12xf32>
  return %r : tensor<1x12xf32>
}

// -----

// Communication: each end of a transfer places the region by its own
// offsets; an all-reduce likewise. Two tiles on one rank: their bounding
// box.
// CHECK-LABEL: func.func @comm(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK:         %[[A:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0] [2, 4]
// CHECK:         %[[B:.*]] = tensor.insert_slice %{{.*}} into %[[A]][4, 0] [2, 4]
// CHECK:         %[[T:.*]] = soap.transfer %[[B]] [2, 0] [2, 4] from 1 to 0 : tensor<6x4xf32>
// CHECK:         %[[R:.*]] = soap.all_reduce %[[T]] [0, 0] [6, 4] sum devices [0, 1] : tensor<6x4xf32>
// CHECK:         tensor.extract_slice %[[R]][1, 1] [5, 2] [1, 1] : tensor<6x4xf32> to tensor<5x2xf32>
func.func @comm(%tile: tensor<2x4xf32>) -> tensor<5x2xf32> {
  %e = tensor.empty() : tensor<16x4xf32>
  %a = tensor.insert_slice %tile into %e[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<16x4xf32>
  %b = tensor.insert_slice %tile into %a[6, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<16x4xf32>
  %t = soap.transfer %b [4, 0] [2, 4] from 1 to 0 : tensor<16x4xf32>
  %r = soap.all_reduce %t [2, 0] [6, 4] sum devices [0, 1] : tensor<16x4xf32>
  %s = tensor.extract_slice %r[3, 1] [5, 2] [1, 1] : tensor<16x4xf32> to tensor<5x2xf32>
  return %s : tensor<5x2xf32>
}

// -----

// Strided reads span from the first to the last element they read.
// CHECK-LABEL: func.func @strided(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<5xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[E]][0] [5] [1]
// CHECK:         tensor.extract_slice %{{.*}}[0] [3] [2] : tensor<5xf32> to tensor<3xf32>
func.func @strided(%tile: tensor<5xf32>) -> tensor<3xf32> {
  %e = tensor.empty() : tensor<20xf32>
  %i = tensor.insert_slice %tile into %e[10] [5] [1] : tensor<5xf32> into tensor<20xf32>
  %s = tensor.extract_slice %i[10] [3] [2] : tensor<20xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

// An expand_shape whose fine box is part of a group: the group's inner
// dimensions stay whole, so the coarse side moves by whole rows of them.
// CHECK-LABEL: func.func @expand(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<12xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[E]][0] [12] [1] : tensor<12xf32> into tensor<12xf32>
// CHECK:         %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK:         tensor.extract_slice %[[X]][1, 1] [1, 2] [1, 1] : tensor<3x4xf32> to tensor<1x2xf32>
func.func @expand(%tile: tensor<12xf32>) -> tensor<1x2xf32> {
  %e = tensor.empty() : tensor<32xf32>
  %i = tensor.insert_slice %tile into %e[16] [12] [1] : tensor<12xf32> into tensor<32xf32>
  %x = tensor.expand_shape %i [[0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
  %s = tensor.extract_slice %x[5, 1] [1, 2] [1, 1] : tensor<8x4xf32> to tensor<1x2xf32>
  return %s : tensor<1x2xf32>
}

// -----

// A collapse whose box is part of an inner dimension: that dimension stays
// whole (a shift of the collapsed rows must be a shift of the source).
// CHECK-LABEL: func.func @collapse_inner(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x4xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[E]][0, 1] [1, 2]
// CHECK:         tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK:         tensor.extract_slice %{{.*}}[1] [2] [1] : tensor<4xf32> to tensor<2xf32>
func.func @collapse_inner(%tile: tensor<1x2xf32>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %i = tensor.insert_slice %tile into %e[2, 1] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<3x4xf32>
  %c = tensor.collapse_shape %i [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  %s = tensor.extract_slice %c[9] [2] [1] : tensor<12xf32> to tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// Kept whole: a use of the whole tensor (here the return; also a
// linalg operand or a region's yield), a dynamic offset, and a tensor
// whose accesses cover it.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-3: tensor.empty() : tensor<8xf32>
func.func @kept(%tile: tensor<2xf32>, %i: index) -> (tensor<8xf32>, tensor<2xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %a = tensor.insert_slice %tile into %e0[0] [2] [1] : tensor<2xf32> into tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %b = tensor.insert_slice %tile into %e1[0] [2] [1] : tensor<2xf32> into tensor<8xf32>
  %s = tensor.extract_slice %b[%i] [2] [1] : tensor<8xf32> to tensor<2xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %t = soap.transfer %e2 [0] [8] from 0 to 1 : tensor<8xf32>
  return %a, %s, %t : tensor<8xf32>, tensor<2xf32>, tensor<8xf32>
}

// -----

// A rank function's arguments: each becomes the part the rank reads (its
// offsets in soap.region_offsets), an unread one nothing, and each call
// passes the part. A function that is not a rank function keeps its
// arguments.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME:      %[[W:.*]]: tensor<8x6xf32>, %[[U:.*]]: tensor<4xf32>
// CHECK:         %[[WP:.*]] = tensor.extract_slice %[[W]][2, 3] [4, 3] [1, 1] : tensor<8x6xf32> to tensor<4x3xf32>
// CHECK:         %[[UP:.*]] = tensor.extract_slice %[[U]][0] [0] [1] : tensor<4xf32> to tensor<0xf32>
// CHECK:         call @entry__rank1(%[[WP]], %[[UP]])
// CHECK:         call @helper(%[[W]])
// CHECK-LABEL: func.func private @entry__rank1(
// CHECK-SAME:      %[[A:.*]]: tensor<4x3xf32> {soap.region_offsets = array<i64: 2, 3>}
// CHECK-SAME:      %{{.*}}: tensor<0xf32> {soap.region_offsets = array<i64: 0>}
// CHECK-SAME:      attributes {soap.rank_function = 1 : i64}
// CHECK:         tensor.extract_slice %[[A]][0, 0] [2, 3] [1, 1]
// CHECK:         tensor.extract_slice %[[A]][3, 0] [1, 3] [1, 1]
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME:      tensor<8x6xf32>
func.func @entry(%w: tensor<8x6xf32>, %u: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x1xf32>) {
  %a:2 = call @entry__rank1(%w, %u) : (tensor<8x6xf32>, tensor<4xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>)
  %b = call @helper(%w) : (tensor<8x6xf32>) -> tensor<1x1xf32>
  return %a#0, %a#1, %b : tensor<2x3xf32>, tensor<1x3xf32>, tensor<1x1xf32>
}
func.func private @entry__rank1(%w: tensor<8x6xf32>, %u: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>) attributes {soap.rank_function = 1 : i64} {
  %p = tensor.extract_slice %w[2, 3] [2, 3] [1, 1] : tensor<8x6xf32> to tensor<2x3xf32>
  %q = tensor.extract_slice %w[5, 3] [1, 3] [1, 1] : tensor<8x6xf32> to tensor<1x3xf32>
  return %p, %q : tensor<2x3xf32>, tensor<1x3xf32>
}
func.func private @helper(%w: tensor<8x6xf32>) -> tensor<1x1xf32> {
  %p = tensor.extract_slice %w[0, 0] [1, 1] [1, 1] : tensor<8x6xf32> to tensor<1x1xf32>
  return %p : tensor<1x1xf32>
}

// -----

// In-place updates (results marked soap.updates_input): rank 1 reads and
// updates columns 2-3 of the weight, so the weight argument and the
// returned new value both shrink to them (the result says where its part
// lies); rank 0 computes neither update (it returns the weight untouched and
// an empty bias), so both shrink to nothing. Callers put each part back into
// a whole value at its offsets.
// CHECK-LABEL: func.func @step(
// CHECK:         %[[P:.*]]:2 = call @step__rank1(%{{.*}}, %{{.*}}) : (tensor<4x2xf32>, tensor<6xf32>) -> (tensor<4x2xf32>, tensor<6xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK:         %[[W:.*]] = tensor.insert_slice %[[P]]#0 into %[[E]][0, 2] [4, 2] [1, 1]
// CHECK:         %[[Q:.*]]:2 = call @step__rank0(%{{.*}}, %{{.*}}) : (tensor<0x0xf32>, tensor<0xf32>) -> (tensor<0x0xf32>, tensor<0xf32>)
// CHECK:         %[[W0:.*]] = tensor.insert_slice %[[Q]]#0 into %{{.*}}[0, 0] [0, 0] [1, 1]
// CHECK:         %[[B0:.*]] = tensor.insert_slice %[[Q]]#1 into %{{.*}}[0] [0] [1]
// CHECK:         return %[[W]], %[[P]]#1, %[[W0]], %[[B0]]
// CHECK-LABEL: func.func private @step__rank1(
// CHECK-SAME:      %[[W1:.*]]: tensor<4x2xf32> {soap.region_offsets = array<i64: 0, 2>}
// CHECK-SAME:      -> (tensor<4x2xf32> {soap.region_offsets = array<i64: 0, 2>, soap.updates_input = 0 : i64}, tensor<6xf32> {soap.updates_input = 1 : i64})
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[W1]][0, 0] [4, 2] [1, 1]
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x2xf32>)
// CHECK:         %[[I:.*]] = tensor.insert_slice %[[N]] into %[[W1]][0, 0] [4, 2] [1, 1]
// CHECK:         return %[[I]], %{{.*}} : tensor<4x2xf32>, tensor<6xf32>
// CHECK-LABEL: func.func private @step__rank0(
// CHECK-SAME:      -> (tensor<0x0xf32> {soap.region_offsets = array<i64: 0, 0>, soap.updates_input = 0 : i64}, tensor<0xf32> {soap.region_offsets = array<i64: 0>, soap.updates_input = 1 : i64})
// CHECK:         %[[Z:.*]] = tensor.empty() : tensor<0xf32>
// CHECK:         return %{{.*}}, %[[Z]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%w: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>, tensor<6xf32>) {
  %r1:2 = call @step__rank1(%w, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>)
  %r0:2 = call @step__rank0(%w, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>)
  return %r1#0, %r1#1, %r0#0, %r0#1 : tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>, tensor<6xf32>
}
func.func private @step__rank1(%w: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32> {soap.updates_input = 0 : i64}, tensor<6xf32> {soap.updates_input = 1 : i64}) attributes {soap.rank_function = 1 : i64} {
  %s = tensor.extract_slice %w[0, 2] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
  %n = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%s : tensor<4x2xf32>) {
  ^bb0(%o: f32):
    %t = arith.addf %o, %o : f32
    linalg.yield %t : f32
  } -> tensor<4x2xf32>
  %i = tensor.insert_slice %n into %w[0, 2] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  %full = tensor.empty() : tensor<6xf32>
  %bs = tensor.insert_slice %b into %full[0] [6] [1] : tensor<6xf32> into tensor<6xf32>
  return %i, %bs : tensor<4x6xf32>, tensor<6xf32>
}
func.func private @step__rank0(%w: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32> {soap.updates_input = 0 : i64}, tensor<6xf32> {soap.updates_input = 1 : i64}) attributes {soap.rank_function = 0 : i64} {
  %e = tensor.empty() : tensor<6xf32>
  return %w, %e : tensor<4x6xf32>, tensor<6xf32>
}

// -----

// Only rank functions return parts: the entry keeps the program's
// signature, so an in-place update it returns stays whole.
// CHECK-LABEL: func.func @entry_update(
// CHECK-SAME:      -> (tensor<4x6xf32> {soap.updates_input = 0 : i64})
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK:         tensor.insert_slice %{{.*}} into %[[E]][0, 0] [4, 2] [1, 1]
func.func @entry_update(%w: tensor<4x6xf32>) -> (tensor<4x6xf32> {soap.updates_input = 0 : i64}) {
  %e = tensor.empty() : tensor<4x6xf32>
  %s = tensor.extract_slice %w[0, 0] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
  %i = tensor.insert_slice %s into %e[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  return %i : tensor<4x6xf32>
}
