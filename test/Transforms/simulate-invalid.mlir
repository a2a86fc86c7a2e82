// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-simulate -o /dev/null

// expected-error @below {{soap-simulate needs a machine: give machine=PRESET|FILE.json or a 'soap.machine' attribute on the module}}
module {
  func.func @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
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

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @recompute_split_reduction(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // expected-error @below {{layer 'matmul_0' is marked 'soap.recompute' but its config splits a reduction loop (its partial sums would need combining again); recompute it unsplit or keep it}}
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 2]>, soap.recompute} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// The simulator keeps a table per device pair: 8192 devices are refused
// with a diagnostic, not an out-of-memory abort.
// expected-error @below {{the 'soap.machine' attribute has 8192 devices; at most 4096 are supported}}
module attributes {soap.machine = #soap.machine<nodes = 1024, devices_per_node = 8, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 1]>} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// A latency of two seconds (microseconds written as nanoseconds) is a unit
// error, not a machine.
// expected-error @below {{the 'soap.machine' attribute: 'intra.latency' must be between 0 and 1 (seconds)}}
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 2000000, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 1]>} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}
