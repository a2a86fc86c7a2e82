// RUN: soap-opt %s -split-input-file --soap-simulate -o /dev/null | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-simulate="strategy=data-parallel machine=h100-8" -o /dev/null | FileCheck %s --check-prefix=DP

// The annotated strategy on the module's machine: a 2-way batch split of the
// matmul on devices 0 and 1 (one node, a 2 GB/s link). Every number follows
// from the machine and the cost model; the splits change them.
// CHECK: soap-simulate: @mm, 1 layers, machine soap.machine (2 devices), strategy annotated
// CHECK: predicted iteration time: [[T1:[0-9.]+]] ms
// CHECK: communication bytes: 65536
// CHECK: busy ms per device: [[B:[0-9.]+]] [[B]]
// DP: soap-simulate: @mm, 1 layers, machine h100-8 (8 devices), strategy data-parallel
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @mm(%a: tensor<64x128xf32>, %b: tensor<128x64xf32> {soap.parameter}, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1]>} ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}

// -----

// The same layer on one device: no communication.
// CHECK: soap-simulate: @mm_single
// CHECK: communication bytes: 0
// DP: soap-simulate: @mm_single
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @mm_single(%a: tensor<64x128xf32>, %b: tensor<128x64xf32> {soap.parameter}, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = linalg.matmul {soap.config = #soap.config<degrees = [1, 1, 1], start = 1>} ins(%a, %b : tensor<64x128xf32>, tensor<128x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}
