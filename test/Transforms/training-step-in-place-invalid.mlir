// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-training-step=returns=outputs

// A scalar parameter updated in place by a program for several devices:
// the devices that do not hold it keep a stale copy, and nothing says which
// copy is the new value.
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10.0, memory_gbps = 700, memory_gib = 16, intra_gbps = 20, intra_latency_us = 1.0, inter_gbps = 10, inter_latency_us = 2.0>} {
// expected-error @below {{training step: parameter argument 1 is a scalar (rank 0), which a program for several devices cannot update in place; return the updated parameters (returns=parameters) or make it a tensor of one element}}
func.func @scale(%x: tensor<4xf32>, %s: tensor<f32> {soap.parameter}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %s : tensor<4xf32>, tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
}

// -----

// On one device it is updated where it is.
func.func @one_device(%x: tensor<4xf32>, %s: tensor<f32> {soap.parameter}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %s : tensor<4xf32>, tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
