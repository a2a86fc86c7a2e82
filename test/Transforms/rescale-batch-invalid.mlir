// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-rescale-batch=batch=8

// expected-error @below {{cannot identify the batch dimension: 'no_data' has no tensor argument that is not a parameter}}
func.func @no_data(%w: tensor<4x4xf32> {soap.parameter}) -> tensor<4x4xf32> {
  return %w : tensor<4x4xf32>
}

// -----

// expected-error @below {{cannot identify the batch dimension: the data arguments' leading dimensions differ (2 and 3); mark the weights with {soap.parameter}}}
func.func @ambiguous(%x: tensor<2x4xf32>, %y: tensor<3x4x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}

// -----

// A dynamic batch is set; another dynamic dimension is not.
// expected-error @below {{cannot set the batch: argument #0 of type 'tensor<?x?xf32>' has dynamic dimension 1 besides its leading (batch) dimension; SOAP partitions static shapes only}}
func.func @dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %x : tensor<?x?xf32>
}

// -----

// A size that does not follow from the batch (here read from the data)
// stays dynamic.
func.func @data_dependent_size(%x: tensor<?x4xi64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0, %c0] : tensor<?x4xi64>
  %n = arith.index_cast %v : i64 to index
  // expected-error @below {{cannot set the batch: 'tensor.empty' still produces 'tensor<?xf32>' once the batch is 8; SOAP partitions static shapes only}}
  %e = tensor.empty(%n) : tensor<?xf32>
  return %e : tensor<?xf32>
}

// -----

func.func @non_splat(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @below {{cannot rescale the batch: this constant depends on the batch size and is not a splat}}
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %c : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

func.func @partial_slice(%x: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{cannot rescale the batch through a slice of part of the batch}}
  %s = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// An empty batch cannot be scaled (it was a division by zero).
// expected-error @below {{cannot rescale the batch: argument #0 has an empty leading dimension ('tensor<0x16xf32>')}}
func.func @empty_batch(%a: tensor<0x16xf32>, %b: tensor<16x8xf32>) -> tensor<0x8xf32> {
  %e = tensor.empty() : tensor<0x8xf32>
  %cst = arith.constant 0.0 : f32
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<0x8xf32>) -> tensor<0x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<0x16xf32>, tensor<16x8xf32>) outs(%f : tensor<0x8xf32>) -> tensor<0x8xf32>
  return %r : tensor<0x8xf32>
}

// -----

// A loop carries the batch past its region: refused before rescaling (the
// rescaled IR did not verify).
func.func @loop(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{cannot rescale the batch through 'scf.for' (its regions); SOAP partitions straight-line tensor programs}}
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%t = %a) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %n = linalg.add ins(%t, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %n : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
