// RUN: soap-opt %s -split-input-file --soap-partition --canonicalize | FileCheck %s

// A matmul split on its batch (2) and reduction (2) loops over devices 0-3,
// then a relu grouped with it, then a second matmul split on its output
// columns over devices 2 and 3.
// CHECK-LABEL: func.func @mm
// CHECK: %[[RANK:.*]] = soap.rank : index
// Tile 0 (rows 0-3, k 0-7) on device 0:
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[RANK]], %c0
// CHECK: scf.if %[[IS0]]
// CHECK: tensor.extract_slice %arg0[0, 0] [4, 8] [1, 1]
// CHECK: tensor.extract_slice %arg1[0, 0] [8, 4] [1, 1]
// CHECK: linalg.matmul ins({{.*}} : tensor<4x8xf32>, tensor<8x4xf32>) outs({{.*}} : tensor<4x4xf32>)
// CHECK: tensor.insert_slice {{.*}}[0, 0] [4, 4] [1, 1]
// Tile 1 (rows 0-3, k 8-15) on device 1, from the sum's identity:
// CHECK: tensor.extract_slice %arg0[0, 8] [4, 8] [1, 1]
// CHECK: tensor.extract_slice %arg1[8, 0] [8, 4] [1, 1]
// Partial sums combined per output region: devices 0 and 1 read nothing of
// rows 0-3 afterwards, so each keeps half of their sums (reduce-scatter);
// devices 2 and 3 read all of rows 4-7 (all-reduce).
// CHECK: soap.reduce_scatter %{{.*}} [0, 0] [4, 4] sum dim 0 devices [0, 1]
// CHECK: soap.all_reduce %{{.*}} [4, 0] [4, 4] sum devices [2, 3]
// The relu on each device of each reduction group, on what it holds:
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [2, 4]
// CHECK: arith.maximumf
// CHECK: tensor.extract_slice %{{.*}}[2, 0] [2, 4]
// CHECK: arith.maximumf
// CHECK-COUNT-2: arith.maximumf
// The second matmul reads all of the relu's output on devices 2 and 3,
// which hold rows 4-7 already; devices 0 and 1 send a half of rows 0-3 each:
// CHECK: soap.transfer %{{.*}} [0, 0] [2, 4] from 0 to 2
// CHECK: soap.transfer %{{.*}} [2, 0] [2, 4] from 1 to 2
// CHECK: soap.transfer %{{.*}} [0, 0] [2, 4] from 0 to 3
// CHECK: soap.transfer %{{.*}} [2, 0] [2, 4] from 1 to 3
// CHECK-NOT: soap.transfer
// CHECK: linalg.matmul ins({{.*}} : tensor<8x4xf32>, tensor<4x2xf32>) outs({{.*}} : tensor<8x2xf32>)
// CHECK: tensor.insert_slice {{.*}}[0, 2] [8, 2] [1, 1]
// Results gathered to rank 0:
// CHECK: soap.transfer %{{.*}} [0, 0] [8, 2] from 2 to 0
// CHECK: %[[OUT:.*]] = soap.transfer %{{.*}} [0, 2] [8, 2] from 3 to 0
// CHECK: return %[[OUT]]
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @mm(%a: tensor<8x16xf32>, %b: tensor<16x4xf32> {soap.parameter}, %w2: tensor<4x4xf32> {soap.parameter}) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 2]>} ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %zero : f32
      linalg.yield %m : f32
    } -> tensor<8x4xf32>
    %1 = linalg.matmul {soap.config = #soap.config<degrees = [1, 2, 1], start = 2>} ins(%r, %w2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}

// -----

// Data parallelism over a conv with padding and a pooling: the pad stays
// with its consumer, and each tile reads its own batch rows only (no
// communication until the gather). Each device pads and zero-fills only its
// tile, not the whole tensors.
// CHECK-LABEL: func.func @conv
// CHECK-NOT: soap.transfer {{.*}} to 1
// CHECK: scf.if
// CHECK: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 3, 8, 8]
// CHECK: tensor.pad %[[X0]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK-NEXT: ^bb
// CHECK-NEXT: tensor.yield
// CHECK-NEXT: } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
// CHECK: linalg.fill {{.*}} -> tensor<1x4x8x8xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} outs({{.*}} : tensor<1x4x8x8xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 4, 8, 8]
// CHECK: scf.if
// CHECK: %[[X1:.*]] = tensor.extract_slice %arg0[1, 0, 0, 0] [1, 3, 8, 8]
// CHECK: tensor.pad %[[X1]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: soap.transfer %{{.*}} [1, 0, 0, 0] [1, 4, 8, 8] from 1 to 0
// CHECK-NOT: tensor<2x3x10x10xf32>
// CHECK-NOT: linalg.fill {{.*}} -> tensor<2x4x8x8xf32>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32> {soap.parameter}) -> tensor<2x4x8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
    %e = tensor.empty() : tensor<2x4x8x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %c = linalg.conv_2d_nchw_fchw {soap.config = #soap.config<degrees = [2, 1, 1, 1, 1, 1, 1]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    return %c : tensor<2x4x8x8xf32>
  }
}

// -----

// A conv split on its output rows: each tile pads only the input rows it
// reads (its halo), with the padding on its own side of the image.
// CHECK-LABEL: func.func @conv_rows
// CHECK: %[[TOP:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 3, 5, 8]
// CHECK: tensor.pad %[[TOP]] low[0, 0, 1, 1] high[0, 0, 0, 1]
// CHECK: linalg.fill {{.*}} -> tensor<2x4x4x8xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins({{.*}} : tensor<2x3x6x10xf32>, tensor<4x3x3x3xf32>) outs({{.*}} : tensor<2x4x4x8xf32>)
// CHECK: %[[BOTTOM:.*]] = tensor.extract_slice %arg0[0, 0, 3, 0] [2, 3, 5, 8]
// CHECK: tensor.pad %[[BOTTOM]] low[0, 0, 0, 1] high[0, 0, 1, 1]
// CHECK: soap.transfer %{{.*}} [0, 0, 4, 0] [2, 4, 4, 8] from 1 to 0
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @conv_rows(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32> {soap.parameter}) -> tensor<2x4x8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
    %e = tensor.empty() : tensor<2x4x8x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %c = linalg.conv_2d_nchw_fchw {soap.config = #soap.config<degrees = [1, 1, 2, 1, 1, 1, 1]>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    return %c : tensor<2x4x8x8xf32>
  }
}

// -----

// A weight updated in place (a training step's SGD update, result marked
// soap.updates_input): the matmul splits the weight's columns over devices
// 0 and 1, so each device computes the update of its columns (whatever the
// update's own config says) and keeps it: no transfer of the new weight;
// only the output is gathered to rank 0.
// CHECK-LABEL: func.func @sgd_model_parallel
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if %[[IS0]]
// CHECK: tensor.extract_slice %arg1[0, 0] [4, 3] [1, 1]
// CHECK: tensor.extract_slice %arg2[0, 0] [4, 3] [1, 1]
// CHECK: arith.subf
// CHECK: tensor.insert_slice {{.*}}[0, 0] [4, 3] [1, 1]
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %{{.*}}, %c1
// CHECK: scf.if %[[IS1]]
// CHECK: tensor.extract_slice %arg1[0, 3] [4, 3] [1, 1]
// CHECK: tensor.extract_slice %arg2[0, 3] [4, 3] [1, 1]
// CHECK: arith.subf
// CHECK: tensor.insert_slice {{.*}}[0, 3] [4, 3] [1, 1]
// CHECK: %[[OUT:.*]] = soap.transfer %{{.*}} [0, 3] [8, 3] from 1 to 0
// CHECK-NOT: soap.transfer
// CHECK: return %[[OUT]], %{{.*}} : tensor<8x6xf32>, tensor<4x6xf32>

#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @sgd_model_parallel(%x: tensor<8x4xf32>, %w: tensor<4x6xf32> {soap.parameter}, %dw: tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<4x6xf32> {soap.updates_input = 1 : i64}) {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %m = linalg.matmul {soap.config = #soap.config<degrees = [1, 2, 1]>} ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f : tensor<8x6xf32>) -> tensor<8x6xf32>
    %ew = tensor.empty() : tensor<4x6xf32>
    %nw = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w, %dw : tensor<4x6xf32>, tensor<4x6xf32>) outs(%ew : tensor<4x6xf32>) attrs = {soap.config = #soap.config<degrees = [1, 1]>} {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %half, %g : f32
      %n = arith.subf %p, %s : f32
      linalg.yield %n : f32
    } -> tensor<4x6xf32>
    return %m, %nw : tensor<8x6xf32>, tensor<4x6xf32>
  }
}

// -----

// Data parallelism: both devices read all of the weight, so both compute
// all of its update.
// CHECK-LABEL: func.func @sgd_data_parallel
// CHECK-COUNT-2: linalg.matmul
// CHECK: arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if %{{.*}} -> (tensor<4x6xf32>)
// CHECK: arith.subf
// CHECK: arith.cmpi eq, %{{.*}}, %c1
// CHECK: scf.if %{{.*}} -> (tensor<4x6xf32>)
// CHECK: arith.subf
// CHECK: soap.transfer %{{.*}} [4, 0] [4, 6] from 1 to 0
// CHECK-NOT: soap.transfer
// CHECK: return
#id3 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @sgd_data_parallel(%x: tensor<8x4xf32>, %w: tensor<4x6xf32> {soap.parameter}, %dw: tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<4x6xf32> {soap.updates_input = 1 : i64}) {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %m = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1]>} ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f : tensor<8x6xf32>) -> tensor<8x6xf32>
    %ew = tensor.empty() : tensor<4x6xf32>
    %nw = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel"]} ins(%w, %dw : tensor<4x6xf32>, tensor<4x6xf32>) outs(%ew : tensor<4x6xf32>) attrs = {soap.config = #soap.config<degrees = [1, 1]>} {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %half, %g : f32
      %n = arith.subf %p, %s : f32
      linalg.yield %n : f32
    } -> tensor<4x6xf32>
    return %m, %nw : tensor<8x6xf32>, tensor<4x6xf32>
  }
}

// -----

// A weight split by its columns over devices 0 and 1, one part each: the
// result still says where the parts are. A rank's buffer covers what it
// touches, which can be more than its part (an op that runs whole on every
// device, such as a concatenation, reading the weight), so the exit gather
// must place each rank's part rather than its whole buffer (it did not: a
// ViT's position embedding came back with another rank's stale half).
// CHECK-LABEL: func.func @sgd_split_weight
// CHECK-SAME: soap.held_parts = array<i64: 0, 0, 0, 4, 4, 1, 0, 4, 4, 4>
#idw = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @sgd_split_weight(%x: tensor<8x4xf32>, %w: tensor<4x8xf32> {soap.parameter}, %dw: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<4x8xf32> {soap.updates_input = 1 : i64}) {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = linalg.matmul {soap.config = #soap.config<degrees = [1, 2, 1]>} ins(%x, %w : tensor<8x4xf32>, tensor<4x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
    %ew = tensor.empty() : tensor<4x8xf32>
    %nw = linalg.generic {indexing_maps = [#idw, #idw, #idw], iterator_types = ["parallel", "parallel"]} ins(%w, %dw : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ew : tensor<4x8xf32>) attrs = {soap.config = #soap.config<degrees = [1, 1]>} {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %half, %g : f32
      %n = arith.subf %p, %s : f32
      linalg.yield %n : f32
    } -> tensor<4x8xf32>
    return %y, %nw : tensor<8x8xf32>, tensor<4x8xf32>
  }
}

// -----

// A weight read in two slices (q's and k's columns of a fused projection),
// each split by its columns over devices 0 and 1: each device updates the
// columns it read, two parts each, the second written into the first's
// result (device 0: columns 4-5, then 0-1). No transfer of the gradient or
// of the new weight; the result says where the parts are, since each
// device's buffer holds stale columns between its two.
// CHECK-LABEL: func.func @sgd_sliced_weight
// CHECK-SAME: soap.held_parts = array<i64: 0, 0, 4, 4, 2, 0, 0, 0, 4, 2, 1, 0, 6, 4, 2, 1, 0, 2, 4, 2>
// CHECK-COUNT-4: linalg.matmul
// CHECK: %[[DEST:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[A:.*]] = scf.if
// CHECK: tensor.insert_slice %{{.*}} into %[[DEST]][0, 4] [4, 2] [1, 1]
// CHECK: %[[B:.*]] = scf.if
// CHECK: tensor.insert_slice %{{.*}} into %[[A]][0, 0] [4, 2] [1, 1]
// CHECK: %[[C:.*]] = scf.if
// CHECK: tensor.insert_slice %{{.*}} into %[[DEST]][0, 6] [4, 2] [1, 1]
// CHECK: %[[D:.*]] = scf.if
// CHECK: tensor.insert_slice %{{.*}} into %[[C]][0, 2] [4, 2] [1, 1]
// CHECK: soap.transfer %{{.*}} [0, 2] [8, 2] from 1 to 0 : tensor<8x4xf32>
// CHECK: soap.transfer %{{.*}} [0, 2] [8, 2] from 1 to 0 : tensor<8x4xf32>
// CHECK-NOT: soap.transfer
// CHECK: return %{{.*}}, %{{.*}}, %[[D]]
#id4 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @sgd_sliced_weight(%x: tensor<8x4xf32>, %w: tensor<4x8xf32> {soap.parameter}, %dw: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32> {soap.updates_input = 1 : i64}) {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %w0 = tensor.extract_slice %w[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
    %q = linalg.matmul {soap.config = #soap.config<degrees = [1, 2, 1]>} ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %w1 = tensor.extract_slice %w[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
    %k = linalg.matmul {soap.config = #soap.config<degrees = [1, 2, 1]>} ins(%x, %w1 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %ew = tensor.empty() : tensor<4x8xf32>
    %nw = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel"]} ins(%w, %dw : tensor<4x8xf32>, tensor<4x8xf32>) outs(%ew : tensor<4x8xf32>) attrs = {soap.config = #soap.config<degrees = [1, 1]>} {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %half, %g : f32
      %n = arith.subf %p, %s : f32
      linalg.yield %n : f32
    } -> tensor<4x8xf32>
    return %q, %k, %nw : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>
  }
}

// -----

// A gradient placed in zeros (a pad read by its update) where device 0's
// tile of the update covers only the padding: that tile reads a fill of
// its own shape, not the whole pad cut down (a weight in three parts
// updated in pieces would otherwise pad the other parts whole per piece).
// CHECK-LABEL: func.func @placed_part
// CHECK-NOT: tensor.pad
// CHECK: scf.if
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[ZEROS]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg0 : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: return
#id5 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @placed_part(%g: tensor<4x4xf32>, %w: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %zero = arith.constant 0.0 : f32
    %placed = tensor.pad %g low[0, 4] high[0, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<4x4xf32> to tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %r = linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel"]} ins(%w, %placed : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) attrs = {soap.config = #soap.config<degrees = [1, 2]>} {
    ^bb0(%p: f32, %d: f32, %o: f32):
      %n = arith.subf %p, %d : f32
      linalg.yield %n : f32
    } -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}

// -----

// Two sums over a batch split in two on the same devices (a weight's
// gradient accumulated over the two time steps that read it): the first
// sum's partial results are not combined. Each tile of the second starts
// from its own device's partial result, and one all-reduce combines both
// sums.

// CHECK-LABEL: func.func @chained_sums(
// CHECK-NOT: soap.all_reduce
// CHECK: %[[P1:.*]] = scf.if
// CHECK: %[[P0:.*]] = scf.if
// CHECK-NOT: soap.all_reduce
// CHECK: %[[Q0:.*]] = scf.if
// CHECK: linalg.generic {{.*}} outs(%[[P0]] : tensor<4x4xf32>)
// CHECK-NOT: soap.all_reduce
// CHECK: %[[Q1:.*]] = scf.if
// CHECK: linalg.generic {{.*}} outs(%[[Q0]] : tensor<4x4xf32>)
// CHECK: %[[SUM:.*]] = soap.all_reduce %[[Q1]] [0, 0] [4, 4] sum devices [0, 1]
// CHECK-NOT: soap.all_reduce
// CHECK: return %[[SUM]]

#xt = affine_map<(b, i, j) -> (b, i)>
#dy = affine_map<(b, i, j) -> (b, j)>
#w = affine_map<(b, i, j) -> (i, j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @chained_sums(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %dy: tensor<8x4xf32>) -> tensor<4x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %b = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [0, 1]>}
        ins(%y, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%a : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    return %b : tensor<4x4xf32>
  }
}

// -----

// The second sum on other devices: each device still sums its own part
// (devices 2 and 3 from zeros), nothing is sent, and one all-reduce over
// the four devices combines both sums (the simulator synchronizes a
// parameter over the devices whose tiles read it, once).

// CHECK-LABEL: func.func @chained_sums_elsewhere(
// CHECK-NOT: soap.transfer
// CHECK: %[[P:.*]] = scf.if
// CHECK: %[[Q:.*]] = scf.if
// CHECK-NOT: soap.all_reduce
// CHECK: %[[R:.*]] = scf.if
// CHECK: linalg.fill {{.*}} outs(%[[Q]] : tensor<4x4xf32>)
// CHECK: %[[S:.*]] = scf.if
// CHECK: linalg.fill {{.*}} outs(%[[R]] : tensor<4x4xf32>)
// CHECK-NOT: soap.transfer
// CHECK: %[[SUM:.*]] = soap.all_reduce %[[S]] [0, 0] [4, 4] sum devices [0, 1, 2, 3]
// CHECK-NOT: soap.all_reduce
// CHECK-NOT: soap.transfer
// CHECK: return %[[SUM]]

#xt = affine_map<(b, i, j) -> (b, i)>
#dy = affine_map<(b, i, j) -> (b, j)>
#w = affine_map<(b, i, j) -> (i, j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @chained_sums_elsewhere(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %dy: tensor<8x4xf32>) -> tensor<4x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 0]>}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %b = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [2, 3]>}
        ins(%y, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%a : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    return %b : tensor<4x4xf32>
  }
}

// -----

// The second sum whole on device 0, which summed only the left half of
// the first: device 0's partial sums start as zeros (a fill of the whole
// tensor), so its tile of the second sum reads its sums so far on the left
// and zeros on the right; device 1 summed the right half only. The right
// half is all-reduced over both devices, the left stays on device 0.

// CHECK-LABEL: func.func @chained_sums_overlap(
// CHECK: %[[Z:.*]] = scf.if
// CHECK: linalg.fill {{.*}} -> tensor<4x4xf32>
// CHECK: %[[L:.*]] = scf.if
// CHECK: tensor.insert_slice {{.*}} into %[[Z]][0, 0] [4, 2]
// CHECK: %[[R:.*]] = scf.if
// CHECK: tensor.insert_slice {{.*}} into %{{.*}}[0, 2] [4, 2]
// CHECK: %[[W:.*]] = scf.if
// CHECK: linalg.generic {{.*}} outs(%[[R]] : tensor<4x4xf32>)
// CHECK-NOT: soap.transfer
// CHECK: %[[SUM:.*]] = soap.all_reduce %[[W]] [0, 2] [4, 2] sum devices [0, 1]
// CHECK-NOT: soap.all_reduce
// CHECK: return %[[SUM]]
#xt = affine_map<(b, i, j) -> (b, i)>
#dy = affine_map<(b, i, j) -> (b, j)>
#w = affine_map<(b, i, j) -> (i, j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @chained_sums_overlap(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %dy: tensor<8x4xf32>) -> tensor<4x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1, 2], devices = [0, 1]>}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %b = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1, 1], devices = [0]>}
        ins(%y, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%a : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    return %b : tensor<4x4xf32>
  }
}

// -----

// A chain of sums (x W summed onto by h U: an RNN step's gates) whose
// result one device reads: the sums of the group's devices go to the
// reader and are added there (sumAtReaders, as the simulator counts: the
// first sum's result sent to the second), not all-reduced over the group.
// Device 0, outside the group of 1 and 2, gets both devices' partial sums
// (2 x the region, where the all-reduce and a send were 3 x); device 1,
// in it, the other's (1 x, where the all-reduce was 2 x).

// CHECK-LABEL: func.func @chained_sums_at_reader(
// CHECK-NOT: soap.all_reduce
// CHECK-DAG: %[[A:.*]] = soap.transfer %[[S:.*]] [0, 0] [4, 4] from 1 to 0 : tensor<4x4xf32>
// CHECK-DAG: %[[B:.*]] = soap.transfer %[[S]] [0, 0] [4, 4] from 2 to 0 : tensor<4x4xf32>
// CHECK: scf.if
// CHECK: arith.addf
// CHECK-NOT: soap.all_reduce
// CHECK: soap.transfer %{{.*}} [0, 0] [4, 4] from 2 to 1 : tensor<4x4xf32>
// CHECK-NOT: soap.all_reduce
// CHECK: return
#xt = affine_map<(b, i, j) -> (b, i)>
#dy = affine_map<(b, i, j) -> (b, j)>
#w = affine_map<(b, i, j) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @chained_sums_at_reader(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>, %dy: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 2]>}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %b = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 2]>}
        ins(%y, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%a : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1], devices = [0]>}
        ins(%b : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %m = arith.maximumf %p, %zero : f32
      linalg.yield %m : f32
    } -> tensor<4x4xf32>
    %c = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 2]>}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %d = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [1, 2]>}
        ins(%y, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1], devices = [1]>}
        ins(%d : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %m = arith.maximumf %p, %zero : f32
      linalg.yield %m : f32
    } -> tensor<4x4xf32>
    return %r, %t : tensor<4x4xf32>, tensor<4x4xf32>
  }
}

// -----

// An op that reads each input only where its loop 1 has one index (the
// sum of an LSTM's gate gradients the training step writes): split over
// that loop, each tile gets only the input it reads.

// CHECK-LABEL: func.func @read_where_an_index_holds(
// CHECK-NOT: soap.transfer
// CHECK: soap.transfer %{{.*}} [0, 0] [4, 16] from 0 to 1 : tensor<4x16xf32>
// CHECK-NOT: soap.transfer
// CHECK: soap.transfer %{{.*}} [0, 0] [4, 16] from 0 to 2 : tensor<4x16xf32>
// CHECK-NOT: soap.transfer {{.*}} : tensor<4x16xf32>
// CHECK: return
#part = affine_map<(d0, d1, d2) -> (d0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @read_where_an_index_holds(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x2x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<4x16xf32>
    %a0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1], devices = [0]>}
        ins(%x : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
    ^bb0(%p: f32, %o: f32):
      %m = arith.maximumf %p, %zero : f32
      linalg.yield %m : f32
    } -> tensor<4x16xf32>
    %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1], devices = [0]>}
        ins(%y : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
    ^bb0(%p: f32, %o: f32):
      %m = arith.maximumf %p, %zero : f32
      linalg.yield %m : f32
    } -> tensor<4x16xf32>
    %e3 = tensor.empty() : tensor<4x2x16xf32>
    %r = linalg.generic {indexing_maps = [#part, #part, #id3], iterator_types = ["parallel", "parallel", "parallel"], soap.config = #soap.config<degrees = [1, 2, 1], devices = [1, 2]>}
        ins(%a0, %a1 : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e3 : tensor<4x2x16xf32>) {
    ^bb0(%i0: f32, %i1: f32, %out: f32):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %l1 = linalg.index 1 : index
      %is0 = arith.cmpi eq, %l1, %c0 : index
      %is1 = arith.cmpi eq, %l1, %c1 : index
      %p0 = arith.select %is0, %i0, %zero : f32
      %p1 = arith.select %is1, %i1, %zero : f32
      %s = arith.addf %p0, %p1 : f32
      linalg.yield %s : f32
    } -> tensor<4x2x16xf32>
    return %r : tensor<4x2x16xf32>
  }
}

// -----

// A split sum whose init another device computes: only the tile at the
// first reduction coordinate (device 2) starts from the init and receives
// it; device 3's tile starts from zeros and is sent nothing.

// CHECK-LABEL: func.func @split_sum_init(
// CHECK: soap.transfer %{{.*}} [0, 0] [4, 4] from 0 to 2
// CHECK-NOT: soap.transfer
// Rank 0, not in the group, reads the result: each half from its holder.
// CHECK: soap.reduce_scatter %{{.*}} [0, 0] [4, 4] sum dim 0 devices [2, 3]
// CHECK-NEXT: soap.transfer %{{.*}} [0, 0] [2, 4] from 2 to 0
// CHECK-NEXT: soap.transfer %{{.*}} [2, 0] [2, 4] from 3 to 0
#xt = affine_map<(b, i, j) -> (b, i)>
#dy = affine_map<(b, i, j) -> (b, j)>
#w = affine_map<(b, i, j) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @split_sum_init(%x: tensor<8x4xf32>, %dy: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %init = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], soap.config = #soap.config<degrees = [1, 1], devices = [0]>}
        ins(%c : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %s = arith.mulf %p, %p : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %a = linalg.generic {indexing_maps = [#xt, #dy, #w], iterator_types = ["reduction", "parallel", "parallel"], soap.config = #soap.config<degrees = [2, 1, 1], devices = [2, 3]>}
        ins(%x, %dy : tensor<8x4xf32>, tensor<8x4xf32>) outs(%init : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    return %a : tensor<4x4xf32>
  }
}

// -----

// Megatron's row-parallel matmul before a layer split by rows on the same
// devices: the partial sums are reduce-scattered along the rows the next
// layer splits (each device gets its rows summed, half an all-reduce's
// traffic), and the bias-add of the matmul's group runs on each device's
// rows only. The next layer needs no transfer. Where a device reads more
// than its chunk (@row_parallel_whole: the next layer on device 0 alone),
// the sums are all-reduced as before.
// CHECK-LABEL: func.func @row_parallel(
// CHECK-NOT: soap.all_reduce
// CHECK: soap.reduce_scatter %{{.*}} [0, 0] [8, 4] sum dim 0 devices [0, 1]
// CHECK-NOT: soap.transfer
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 4]
// CHECK: arith.addf
// CHECK: tensor.extract_slice %{{.*}}[4, 0] [4, 4]
// CHECK: arith.addf
// CHECK-NOT: soap.transfer
// CHECK: linalg.matmul ins({{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: linalg.matmul ins({{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// Gathered to rank 0:
// CHECK: soap.transfer %{{.*}} [4, 0] [4, 4] from 1 to 0
// CHECK-NOT: soap.
// CHECK: return
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @row_parallel(%x: tensor<8x8xf32>, %w: tensor<8x4xf32> {soap.parameter}, %b: tensor<4xf32> {soap.parameter}, %w2: tensor<4x4xf32> {soap.parameter}) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2]>} ins(%x, %w : tensor<8x8xf32>, tensor<8x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %1 = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]} ins(%0, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%in: f32, %c: f32, %out: f32):
      %s = arith.addf %in, %c : f32
      linalg.yield %s : f32
    } -> tensor<8x4xf32>
    %2 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1]>} ins(%1, %w2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}

// -----

// The second matmul reads all of the sums, on device 0 alone: no
// reduce-scatter fits, and device 1 sends device 0 its partial sums, which
// device 0 adds to its own (half an all-reduce's traffic: sumAtReaders).
// CHECK-LABEL: func.func @row_parallel_whole(
// CHECK-NOT: soap.reduce_scatter
// CHECK-NOT: soap.all_reduce
// CHECK: %[[MOVED:.*]] = soap.transfer %[[PARTIAL:[0-9]+]] [0, 0] [8, 4] from 1 to 0
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%[[PARTIAL]], %[[MOVED]] : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: arith.addf
// CHECK-NOT: soap.reduce_scatter
// CHECK-NOT: soap.all_reduce
// CHECK: linalg.matmul
// CHECK: return
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @row_parallel_whole(%x: tensor<8x8xf32>, %w: tensor<8x4xf32> {soap.parameter}, %w2: tensor<4x4xf32> {soap.parameter}) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2]>} ins(%x, %w : tensor<8x8xf32>, tensor<8x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 1]>} ins(%0, %w2 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}

// -----

// Vocabulary parallelism: an embedding lookup (a one-hot selection over the
// table's 10 rows, its output a zero fill) split over the rows on devices
// 0 and 1. Each device reads its half of the table and compares the ids
// with its rows (5 + r on device 1); the halves' outputs (the selected row
// on one device, zeros on the other) are summed.
// CHECK-LABEL: func.func @vocabulary_parallel(
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [5, 3] [1, 1] : tensor<10x3xf32> to tensor<5x3xf32>
// CHECK: linalg.generic
// CHECK: tensor.extract_slice %{{.*}}[5, 0] [5, 3] [1, 1] : tensor<10x3xf32> to tensor<5x3xf32>
// CHECK: linalg.generic
// CHECK: affine.apply
// CHECK: arith.cmpi eq
// CHECK: soap.all_reduce %{{.*}} [0, 0] [4, 3] sum devices [0, 1] : tensor<4x3xf32>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @vocabulary_parallel(%ids: tensor<4xi64>, %table: tensor<10x3xf32> {soap.parameter}) -> tensor<4x3xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(p, h, v) -> (p)>, affine_map<(p, h, v) -> (v, h)>, affine_map<(p, h, v) -> (p, h)>], iterator_types = ["parallel", "parallel", "reduction"], soap.config = #soap.config<degrees = [1, 1, 2]>}
        ins(%ids, %table : tensor<4xi64>, tensor<10x3xf32>) outs(%f : tensor<4x3xf32>) {
    ^bb0(%id: i64, %row: f32, %acc: f32):
      %v = linalg.index 2 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %s = arith.select %hit, %row, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    return %0 : tensor<4x3xf32>
  }
}
