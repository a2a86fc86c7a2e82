// RUN: soap-opt %s | FileCheck %s
// Round trip: printing and parsing again gives the same IR.
// RUN: soap-opt %s | soap-opt | FileCheck %s

// CHECK: module attributes {soap.machine = #soap.machine<nodes = 4, devices_per_node = 4, peak_tflops = 9.3, memory_gbps = 732, memory_gib = 16, intra_gbps = 20, intra_latency_us = 1, inter_gbps = 12.5, inter_latency_us = 5>}
module attributes {soap.machine = #soap.machine<devices_per_node = 4, nodes = 4, peak_tflops = 9.3, memory_gbps = 732, memory_gib = 16.0, intra_gbps = 20.0, intra_latency_us = 1.0, inter_gbps = 12.5, inter_latency_us = 5.0>} {

// CHECK-LABEL: func.func @configs
// CHECK-SAME: %{{.*}}: tensor<128x256xf32> {soap.parameter}
func.func @configs(%a: tensor<64x128xf32>, %b: tensor<128x256xf32> {soap.parameter}, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // Defaults (start 0, stride 1) are not printed.
  // CHECK: linalg.matmul {soap.config = #soap.config<degrees = [4, 1, 1]>}
  %0 = linalg.matmul {soap.config = #soap.config<degrees = [4, 1, 1], start = 0, stride = 1>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  // CHECK: linalg.matmul {soap.config = #soap.config<degrees = [2, 2, 1], start = 8, stride = 2>, soap.name = "fc2"}
  %1 = linalg.matmul {soap.config = #soap.config<degrees = [2, 2, 1], start = 8, stride = 2>, soap.name = "fc2"} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%0 : tensor<64x256xf32>) -> tensor<64x256xf32>
  // CHECK: linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2], devices = [3, 1]>}
  %2 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2], devices = [3, 1]>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%1 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %2 : tensor<64x256xf32>
}

// A config with a dynamic loop is fine as long as that loop is not split.
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.generic {{.*}}soap.config = #soap.config<degrees = [1, 4]>
func.func @dynamic(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x64xf32>) outs(%x : tensor<?x64xf32>) attrs = {soap.config = #soap.config<degrees = [1, 4]>} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
}

// Machines in other forms: large and tiny quantities, float exponents.
// CHECK-LABEL: module @other_machine
// CHECK-SAME: #soap.machine<nodes = 1, devices_per_node = 8, peak_tflops = 66.9, memory_gbps = 3350, memory_gib = 80, intra_gbps = 450, intra_latency_us = 0.5, inter_gbps = 50, inter_latency_us = 0.001>
module @other_machine attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 8, peak_tflops = 66.9, memory_gbps = 3.35e3, memory_gib = 80, intra_gbps = 450, intra_latency_us = 0.5, inter_gbps = 50, inter_latency_us = 0.001>} {
}

// Initial values of arguments (weights lifted from constants), whole or the
// part a rank function's region argument holds.
// CHECK-LABEL: func.func @initial_values
// CHECK-SAME: soap.initial_value = dense<{{\[}}1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-SAME: soap.initial_value = dense<5.000000e-01> : tensor<8x4xf32>, soap.region_offsets = array<i64: 4, 0>
func.func @initial_values(%w: tensor<2xf32> {soap.initial_value = dense<[1.0, 2.0]> : tensor<2xf32>},
                          %part: memref<4x4xf32> {soap.initial_value = dense<0.5> : tensor<8x4xf32>, soap.region_offsets = array<i64: 4, 0>}) {
  return
}

// The range --random-inputs draws an input from, on tensors and on buffers.
// CHECK-LABEL: func.func @random_ranges
// CHECK-SAME: tensor<3x4xf32> {soap.random_range = array<f64: -5.000000e-01, 5.000000e-01>}
// CHECK-SAME: memref<4xi32> {soap.random_range = array<f64: 0.000000e+00, 1.000000e+01>}
func.func @random_ranges(%w: tensor<3x4xf32> {soap.random_range = array<f64: -0.5, 0.5>},
                         %ids: memref<4xi32> {soap.random_range = array<f64: 0.0, 10.0>}) {
  return
}

// Where the parts of an in-place update are: device 0 holds columns 0-1
// and 4-5, device 1 columns 2-3 and 6-7.
// CHECK-LABEL: func.func @held_parts
// CHECK-SAME: soap.held_parts = array<i64: 0, 0, 0, 4, 2, 0, 0, 4, 4, 2, 1, 0, 2, 4, 2, 1, 0, 6, 4, 2>, soap.updates_input = 0 : i64
func.func @held_parts(%w: tensor<4x8xf32>) -> (tensor<4x8xf32> {soap.updates_input = 0 : i64, soap.held_parts = array<i64: 0, 0, 0, 4, 2, 0, 0, 4, 4, 2, 1, 0, 2, 4, 2, 1, 0, 6, 4, 2>}) {
  return %w : tensor<4x8xf32>
}

// A rank function's update may be the rank's part of the argument
// (soap-compact-tensors: columns 4-7 here); its held parts stay in the
// whole argument's coordinates.
// CHECK-LABEL: func.func @held_parts_of_a_part
// CHECK-SAME: soap.held_parts = array<i64: 1, 0, 4, 4, 2, 1, 0, 6, 4, 2>
func.func @held_parts_of_a_part(%w: tensor<4x4xf32>) -> (tensor<4x4xf32> {soap.updates_input = 0 : i64, soap.held_parts = array<i64: 1, 0, 4, 4, 2, 1, 0, 6, 4, 2>}) attributes {soap.rank_function = 1 : i64} {
  return %w : tensor<4x4xf32>
}
