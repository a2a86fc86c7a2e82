// RUN: soap-opt %s -split-input-file -verify-diagnostics

func.func @self(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.transfer' op sends from device 3 to itself}}
  %0 = soap.transfer %t [0, 0] [4, 8] from 3 to 3 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @outside(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.transfer' op region [6, 10) of dimension 0 is outside the tensor's extent 8}}
  %0 = soap.transfer %t [6, 0] [4, 8] from 0 to 1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @rank_mismatch(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.transfer' op region has 1 offsets and 1 sizes for a tensor of rank 2}}
  %0 = soap.transfer %t [0] [4] from 0 to 1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @negative_device(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.transfer' op device ids must not be negative}}
  %0 = soap.transfer %t [0, 0] [4, 8] from -1 to 1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @dynamic(%t: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @below {{'soap.transfer' op needs a statically shaped tensor, got 'tensor<?x8xf32>'}}
  %0 = soap.transfer %t [0, 0] [4, 8] from 0 to 1 : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @duplicate(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.all_reduce' op device 1 appears more than once in the group}}
  %0 = soap.all_reduce %t [0, 0] [8, 8] sum devices [1, 0, 1] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @empty_group(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.all_reduce' op needs at least one device}}
  %0 = soap.all_reduce %t [0, 0] [8, 8] sum devices [] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @bad_kind(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{custom op 'soap.all_reduce' expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min]}}
  %0 = soap.all_reduce %t [0, 0] [8, 8] prod devices [0, 1] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @uneven_chunks(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.reduce_scatter' op region size 8 along dimension 0 does not split into 3 equal chunks}}
  %0 = soap.reduce_scatter %t [0, 0] [8, 8] sum dim 0 devices [0, 1, 2] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @no_such_dim(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.all_gather' op dimension 2 is not one of the tensor's 2}}
  %0 = soap.all_gather %t [0, 0] [8, 8] dim 2 devices [0, 1] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @gather_twice(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.all_gather' op device 0 appears more than once in the group}}
  %0 = soap.all_gather %t [0, 0] [8, 8] dim 0 devices [0, 0] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @scatter_outside(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @below {{'soap.reduce_scatter' op region [4, 12) of dimension 1 is outside the tensor's extent 8}}
  %0 = soap.reduce_scatter %t [0, 4] [8, 8] min dim 0 devices [0, 1] : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
