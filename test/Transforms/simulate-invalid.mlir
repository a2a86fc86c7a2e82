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
