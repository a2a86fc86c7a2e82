// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-partition

// expected-error @below {{soap-partition needs the number of devices: give devices=N or a 'soap.machine' attribute on the module}}
module {
  func.func @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1]>} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @unannotated(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @below {{layer 'matmul_0' has no 'soap.config'}}
    %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// A reduction whose combiner is a product cannot be split.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @product(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @below {{config of layer 'reduce_0' on 2 devices splits reduction loop 1 whose partial results cannot be combined}}
    %0 = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1] {soap.config = #soap.config<degrees = [1, 2]>}
      (%in: f32, %acc: f32) {
        %p = arith.mulf %in, %acc : f32
        linalg.yield %p : f32
      }
    return %0 : tensor<4xf32>
  }
}

// -----

// A sum whose added term reads the accumulator (acc + acc * x) cannot be
// split either: its partials do not add up.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @compound(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @below {{config of layer 'reduce_0' on 2 devices splits reduction loop 1 whose partial results cannot be combined}}
    %0 = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1] {soap.config = #soap.config<degrees = [1, 2]>}
      (%in: f32, %acc: f32) {
        %p = arith.mulf %in, %acc : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }
    return %0 : tensor<4xf32>
  }
}

// -----

// An embedding lookup (a one-hot selection over the table's rows) splits
// over the rows only when its output starts at zero: then the partials add
// up to the selected row. From any other start they do not.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @lookup_from_nonzero(%ids: tensor<4xi64>, %table: tensor<10x3xf32> {soap.parameter}, %start: tensor<4x3xf32>) -> tensor<4x3xf32> {
    // expected-error @below {{config of layer 'generic_0' on 2 devices splits reduction loop 2 whose partial results cannot be combined}}
    %0 = linalg.generic {indexing_maps = [affine_map<(p, h, v) -> (p)>, affine_map<(p, h, v) -> (v, h)>, affine_map<(p, h, v) -> (p, h)>], iterator_types = ["parallel", "parallel", "reduction"], soap.config = #soap.config<degrees = [1, 1, 2]>}
        ins(%ids, %table : tensor<4xi64>, tensor<10x3xf32>) outs(%start : tensor<4x3xf32>) {
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

// -----

// More tiles than devices: the dialect's verifier already refuses it.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @too_many(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @below {{'linalg.matmul' op config has 4 tiles but the machine has only 2 devices}}
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [4, 1, 1], devices = [0, 1, 2, 3]>} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// An in-place update must be computed where the parts of the argument it
// replaces are held: a pad cannot be.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @pad_update(%x: tensor<2x4xf32>, %w: tensor<4x4xf32> {soap.parameter}, %c: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32> {soap.updates_input = 1 : i64}) {
    %zero = arith.constant 0.0 : f32
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1]>} ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
    // expected-error @below {{cannot compute the in-place update of argument #1 where its parts are held: the update must be an elementwise linalg op whose loops index its result one to one}}
    %p = tensor.pad %x low[1, 0] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } {soap.config = #soap.config<degrees = [1, 1]>} : tensor<2x4xf32> to tensor<4x4xf32>
    return %0, %p : tensor<2x4xf32>, tensor<4x4xf32>
  }
}

// -----

// A layer reading an operand at decreasing indices: upstream tiling sizes
// the operand's slice from the map at a tile's first and last iterations,
// so the tile read one element of the four (a verifier error after
// partitioning, even on one device). The op graph and the simulator take
// it; the partitioner refuses it at the op.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @flipped_read(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
    %e = tensor.empty() : tensor<2x4xf32>
    // expected-error @below {{'linalg.generic' reads operand #1 at decreasing indices (-d1 + 3); SOAP tiles ops whose indices grow with their loops}}
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (-d1 + 3)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %w : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) attrs = {soap.config = #soap.config<degrees = [2, 1]>} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      linalg.yield %m : f32
    } -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}
