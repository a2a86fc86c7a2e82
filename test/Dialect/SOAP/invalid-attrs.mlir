// RUN: soap-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{partition degree of loop #1 must be positive, got 0}}
func.func @zero_degree() attributes {x = #soap.config<degrees = [2, 0]>} { return }

// -----

// expected-error @below {{partition degree of loop #0 must be positive, got -2}}
func.func @negative_degree() attributes {x = #soap.config<degrees = [-2]>} { return }

// -----

// expected-error @below {{config needs at least one partition degree}}
func.func @no_degrees() attributes {x = #soap.config<degrees = []>} { return }

// -----

// expected-error @below {{expected 4 devices (one per tile: the product of the degrees), got 3}}
func.func @wrong_device_count() attributes {x = #soap.config<degrees = [2, 2], devices = [0, 1, 2]>} { return }

// -----

// expected-error @below {{device 1 appears more than once in the device list}}
func.func @duplicate_device() attributes {x = #soap.config<degrees = [2], devices = [1, 1]>} { return }

// -----

// expected-error @below {{device ids must not be negative, got -1}}
func.func @negative_device() attributes {x = #soap.config<degrees = [2], devices = [0, -1]>} { return }

// -----

// expected-error @below {{first device of the view must not be negative, got -3}}
func.func @negative_start() attributes {x = #soap.config<degrees = [2], start = -3>} { return }

// -----

// expected-error @below {{device stride of the view must be positive, got 0}}
func.func @zero_stride() attributes {x = #soap.config<degrees = [2], stride = 0>} { return }

// -----

// expected-error @below {{a config gives either a view (start, stride) or an explicit device list, not both}}
func.func @view_and_list() attributes {x = #soap.config<degrees = [2], start = 1, devices = [0, 1]>} { return }

// -----

// expected-error @below {{unknown config key 'place' (expected 'start', 'stride' or 'devices')}}
func.func @unknown_config_key() attributes {x = #soap.config<degrees = [2], place = 1>} { return }

// -----

// expected-error @below {{'stride' given twice}}
func.func @twice() attributes {x = #soap.config<degrees = [2], stride = 1, stride = 2>} { return }

// -----

// expected-error @below {{machine must have at least one node, got 0}}
func.func @no_nodes() attributes {x = #soap.machine<nodes = 0, devices_per_node = 4, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} { return }

// -----

// expected-error @below {{machine must have at least one device per node, got -1}}
func.func @no_devices() attributes {x = #soap.machine<nodes = 1, devices_per_node = -1, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} { return }

// -----

// expected-error @below {{machine must have at most 32768 nodes and 32768 devices per node, got 4294967296 x 8}}
func.func @too_many_nodes() attributes {x = #soap.machine<nodes = 4294967296, devices_per_node = 8, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} { return }

// -----

// expected-error @below {{machine 'inter_gbps' must be positive and finite, got -5}}
func.func @negative_bandwidth() attributes {x = #soap.machine<nodes = 1, devices_per_node = 1, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = -5, inter_latency_us = 0>} { return }

// -----

// expected-error @below {{machine 'intra_latency_us' must be finite and not negative, got -1.5}}
func.func @negative_latency() attributes {x = #soap.machine<nodes = 1, devices_per_node = 1, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = -1.5, inter_gbps = 1, inter_latency_us = 0>} { return }

// -----

// expected-error @below {{machine 'peak_tflops' must be positive and finite, got 0}}
func.func @zero_peak() attributes {x = #soap.machine<nodes = 1, devices_per_node = 1, peak_tflops = 0.0, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1, inter_latency_us = 0>} { return }

// -----

// expected-error @below {{machine is missing key 'inter_latency_us'}}
func.func @missing_key() attributes {x = #soap.machine<nodes = 1, devices_per_node = 1, peak_tflops = 1, memory_gbps = 1, memory_gib = 1, intra_gbps = 1, intra_latency_us = 0, inter_gbps = 1>} { return }

// -----

// expected-error @below {{unknown machine key 'gpus'}}
func.func @unknown_machine_key() attributes {x = #soap.machine<gpus = 8>} { return }

// -----

// expected-error @below {{machine key 'nodes' given twice}}
func.func @machine_key_twice() attributes {x = #soap.machine<nodes = 1, nodes = 2>} { return }

// -----

// expected-error @below {{machine key 'nodes' expects an integer}}
func.func @fractional_nodes() attributes {x = #soap.machine<nodes = 1.5>} { return }

// -----

// expected-error @+1 {{'soap.rank_function' must be an integer attribute on a function}}
func.func private @f() attributes {soap.rank_function = "one"}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'soap.region_offsets' must be an array of one non-negative offset per dimension of a shaped argument}}
func.func private @g(%x: tensor<4x4xf32> {soap.region_offsets = array<i64: 1>}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'soap.region_offsets' must be an array}}
func.func private @h(%x: tensor<4xf32> {soap.region_offsets = array<i64: -1>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'soap.updates_input' must be an integer attribute on a function result}}
func.func @updates_not_integer(%w: tensor<4xf32>) -> (tensor<4xf32> {soap.updates_input = "w"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'soap.updates_input' names argument #2 but the function has 1 arguments}}
func.func @updates_missing_argument(%w: tensor<4xf32>) -> (tensor<4xf32> {soap.updates_input = 2 : i64}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 ('tensor<4xf32>') updates argument #1 ('tensor<8xf32>') but their shapes or element types differ}}
func.func @updates_other_shape(%x: tensor<4xf32>, %w: tensor<8xf32>) -> (tensor<4xf32> {soap.updates_input = 1 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'soap.held_parts' must list parts of the result (per part a device, then an offset and a size per dimension, within the result) beside 'soap.updates_input'}}
func.func @held_parts_without_update(%w: tensor<4x8xf32>) -> (tensor<4x8xf32> {soap.held_parts = array<i64: 0, 0, 0, 4, 8>}) {
  return %w : tensor<4x8xf32>
}

// -----

// A part of 5 values where the result has rank 2 (a device, 2 offsets, 2
// sizes), and one more value.
// expected-error @+1 {{'func.func' op result #0: 'soap.held_parts' must list parts}}
func.func @held_parts_ragged(%w: tensor<4x8xf32>) -> (tensor<4x8xf32> {soap.updates_input = 0 : i64, soap.held_parts = array<i64: 0, 0, 0, 4, 8, 1>}) {
  return %w : tensor<4x8xf32>
}

// -----

// Columns 6-9 of an 8-column result.
// expected-error @+1 {{'func.func' op result #0: 'soap.held_parts' must list parts}}
func.func @held_parts_outside(%w: tensor<4x8xf32>) -> (tensor<4x8xf32> {soap.updates_input = 0 : i64, soap.held_parts = array<i64: 1, 0, 6, 4, 4>}) {
  return %w : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 has unknown SOAP attribute 'soap.update'}}
func.func @unknown_result_attr(%w: tensor<4xf32>) -> (tensor<4xf32> {soap.update = 0 : i64}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'soap.region_offsets' must be an array of one non-negative offset per dimension of a shaped result}}
func.func private @bad_result_offsets(%w: tensor<4x4xf32>) -> (tensor<4x4xf32> {soap.region_offsets = array<i64: 0>}) {
  return %w : tensor<4x4xf32>
}
