// RUN: soap-opt %s -split-input-file --soap-bufferize -verify-diagnostics

// An op on tensors that has no bufferization gets a diagnostic that says
// so (upstream's own is 'op was not bufferized').
func.func @gather(%a: tensor<8x16xf32>, %i: tensor<4x1xi64>) -> tensor<4x16xf32> {
  // expected-error @below {{'tensor.gather' has no lowering to buffers, so SOAP's CPU and CUDA targets cannot compile it (express it with linalg ops)}}
  %g = tensor.gather %a[%i] gather_dims([0]) : (tensor<8x16xf32>, tensor<4x1xi64>) -> tensor<4x16xf32>
  return %g : tensor<4x16xf32>
}

// -----

func.func @tensor_arith(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @below {{'arith.addf' has no lowering to buffers}}
  %c = arith.addf %a, %b : tensor<8xf32>
  return %c : tensor<8xf32>
}
