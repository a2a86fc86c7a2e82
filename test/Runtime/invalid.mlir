// RUN: soap-opt %s --split-input-file --verify-diagnostics --soap-lower-to-cpu

// expected-error @+1 {{cannot lower 'dyn' for the CPU: argument #0 has type 'tensor<?x4xf32>'; entry arguments and results must be statically shaped tensors of f32, f64, f16, bf16, i1, i8, i16, i32 or i64}}
func.func @dyn(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{cannot lower 'cplx' for the CPU: result #1 has type 'tensor<4xcomplex<f32>>'}}
func.func @cplx(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xcomplex<f32>>) {
  %e = tensor.empty() : tensor<4xcomplex<f32>>
  return %a, %e : tensor<4xf32>, tensor<4xcomplex<f32>>
}

// -----

// Without soap.machine the program runs on one device.
func.func @beyond(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'soap.transfer' op uses device 1 but the program runs on 1 device (the module's soap.machine)}}
  %0 = soap.transfer %a [0] [2] from 1 to 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @group(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'soap.all_reduce' op uses device 2 but the program runs on 2 devices}}
    %0 = soap.all_reduce %a [0] [4] sum devices [0, 2] : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @scatter_group(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'soap.reduce_scatter' op uses device 3 but the program runs on 2 devices}}
    %0 = soap.reduce_scatter %a [0] [4] sum dim 0 devices [3, 0] : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @gather_group(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'soap.all_gather' op uses device 2 but the program runs on 2 devices}}
    %0 = soap.all_gather %a [0] [4] dim 0 devices [1, 2] : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @internal(%a: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xcomplex<f32>>
    // expected-error @+2 {{'soap.transfer' op cannot be lowered to libsoaprt: element type 'complex<f32>' is not supported}}
    // expected-error @+1 {{failed to bufferize op}}
    %0 = soap.transfer %e [0] [2] from 1 to 0 : tensor<4xcomplex<f32>>
    return %a : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{cannot lower for the CPU: the module already defines 'soap_main', a name libsoaprt reserves}}
module {
  func.func @soap_main(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
