// RUN: soap-opt %s -split-input-file -verify-diagnostics
// A #soap.config is checked against the op it annotates and the machine.

func.func @no_iteration_space(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'arith.addf' op carries 'soap.config' but has no iteration space (needs a linalg op or TilingInterface)}}
  %0 = arith.addf %a, %a {soap.config = #soap.config<degrees = [2]>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wrong_number_of_degrees(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error @below {{'linalg.matmul' op has 3 loops but its config gives 2 partition degrees}}
  %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 2]>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

func.func @degree_does_not_divide(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error @below {{'linalg.matmul' op partition degree 3 of loop #2 (reduction) does not divide its extent 128}}
  %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 3]>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

func.func @dynamic_loop_split(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @below {{'linalg.generic' op loop #0 has a dynamic extent and cannot be partitioned (degree 2)}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x64xf32>) outs(%x : tensor<?x64xf32>) attrs = {soap.config = #soap.config<degrees = [2, 1]>} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} {
  func.func @beyond_machine(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
    // expected-error @below {{'linalg.matmul' op tile #1 is placed on device 5, beyond the machine's 4 devices}}
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], start = 3, stride = 2>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
    return %0 : tensor<64x256xf32>
  }
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} {
  func.func @explicit_beyond_machine(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
    // expected-error @below {{'linalg.matmul' op tile #0 is placed on device 4, beyond the machine's 4 devices}}
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], devices = [4, 0]>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
    return %0 : tensor<64x256xf32>
  }
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} {
  func.func @too_many_tiles(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
    // expected-error @below {{'linalg.matmul' op config has 4 tiles but the machine has only 2 devices}}
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [4, 1, 1]>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
    return %0 : tensor<64x256xf32>
  }
}

// -----

func.func @config_not_a_config(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error @below {{'linalg.matmul' op 'soap.config' must be a #soap.config attribute}}
  %0 = linalg.matmul {soap.config = [2, 1, 1]} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

// expected-error @below {{'builtin.module' op 'soap.machine' must be a #soap.machine attribute}}
module attributes {soap.machine = 16 : i64} {}

// -----

// expected-error @below {{'func.func' op has unknown SOAP attribute 'soap.strategy'}}
func.func @unknown_attr() attributes {soap.strategy = 1 : i64} { return }

// -----

// expected-error @below {{'func.func' op 'soap.name' must be a string attribute}}
func.func @bad_name() attributes {soap.name = 1 : i64} { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.parameter' must be a unit attribute}}
func.func @bad_parameter(%w: tensor<4xf32> {soap.parameter = 1 : i64}) { return }

// -----

// expected-error @below {{'func.func' op argument #0 is marked 'soap.parameter' but is not a ranked tensor ('f32')}}
func.func @scalar_parameter(%w: f32 {soap.parameter}) { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.initial_value' must be an elements attribute}}
func.func @initial_value_not_elements(%w: tensor<4xf32> {soap.initial_value = 1.0 : f32}) { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.initial_value' of type 'tensor<3xf32>' does not fit the argument ('tensor<4xf32>')}}
func.func @initial_value_shape(%w: tensor<4xf32> {soap.initial_value = dense<1.0> : tensor<3xf32>}) { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.initial_value' of type 'tensor<4xf64>' does not fit the argument ('tensor<4xf32>')}}
func.func @initial_value_type(%w: tensor<4xf32> {soap.initial_value = dense<1.0> : tensor<4xf64>}) { return }

// -----

// A region of the whole argument (soap-compact-tensors) holds part of it,
// never more.
// expected-error @below {{'func.func' op argument #0: 'soap.initial_value' of type 'tensor<4xf32>' does not fit the argument ('memref<6xf32>')}}
func.func @initial_value_region(%w: memref<6xf32> {soap.region_offsets = array<i64: 0>, soap.initial_value = dense<1.0> : tensor<4xf32>}) { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.random_range' must be array<f64: low, high> with finite low < high}}
func.func @random_range_not_f64(%w: tensor<4xf32> {soap.random_range = array<i64: -1, 1>}) { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.random_range' must be array<f64: low, high> with finite low < high}}
func.func @random_range_three(%w: tensor<4xf32> {soap.random_range = array<f64: -1.0, 0.0, 1.0>}) { return }

// -----

// expected-error @below {{'func.func' op argument #0: 'soap.random_range' must be array<f64: low, high> with finite low < high}}
func.func @random_range_empty(%w: tensor<4xf32> {soap.random_range = array<f64: 0.5, 0.5>}) { return }

// -----

// expected-error @below {{'func.func' op argument #1: 'soap.random_range' must be array<f64: low, high> with finite low < high}}
func.func @random_range_infinite(%x: tensor<4xf32>, %w: tensor<4xf32> {soap.random_range = array<f64: 0xFFF0000000000000, 1.0>}) { return }

// -----

// expected-error @below {{'func.func' op argument #0 has a 'soap.random_range' but is not a tensor or memref of numbers ('f32')}}
func.func @random_range_scalar(%w: f32 {soap.random_range = array<f64: -1.0, 1.0>}) { return }

// -----

// expected-error @below {{'func.func' op argument #0 has unknown SOAP attribute 'soap.weight'}}
func.func @unknown_arg_attr(%w: tensor<4xf32> {soap.weight}) { return }

// -----

func.func @recompute_not_unit(%a: f32) -> f32 {
  // expected-error @below {{'arith.addf' op 'soap.recompute' must be a unit attribute}}
  %0 = arith.addf %a, %a {soap.recompute = 1 : i64} : f32
  return %0 : f32
}

// -----

// Recomputation copies the op: it must have no memory effects.
func.func @recompute_alloc() -> memref<4xf32> {
  // expected-error @below {{'memref.alloc' op 'soap.recompute' needs an op without memory effects (it is computed again)}}
  %0 = memref.alloc() {soap.recompute} : memref<4xf32>
  return %0 : memref<4xf32>
}

// -----

func.func @recomputed_alloc() -> memref<4xf32> {
  // expected-error @below {{'memref.alloc' op 'soap.recomputed' needs an op without memory effects (it is computed again)}}
  %0 = memref.alloc() {soap.recomputed} : memref<4xf32>
  return %0 : memref<4xf32>
}
