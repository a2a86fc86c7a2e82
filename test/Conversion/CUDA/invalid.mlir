// RUN: soap-opt %s --split-input-file --soap-lower-to-cuda --verify-diagnostics
// RUN: not soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-map-loops{block-size=0}))" 2>&1 | FileCheck %s --check-prefix=BLOCK

// The CUDA lowering checks the entry like the CPU one, and says CUDA.
// expected-error @+1 {{cannot lower 'dyn' for CUDA: argument #0 has type 'tensor<?x4xf32>'; entry arguments and results must be statically shaped tensors}}
func.func @dyn(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{cannot lower for CUDA: the module already defines 'soap_main', a name libsoaprt reserves}}
module {
  func.func @model(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func private @soap_main()
}

// -----

// A constant of index elements has no byte size the GPU copy could use (it
// used to crash): a diagnostic at the constant.
func.func @index_constant(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{soap-cuda-device-memory: cannot copy a constant of type 'memref<4xindex>' to the GPU (integers and floats only)}}
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xindex>
  %e = tensor.empty() : tensor<4xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : tensor<4xi64>, tensor<4xindex>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: i64, %b: index, %o: i64):
    %bi = arith.index_cast %b : index to i64
    %s = arith.addi %a, %bi : i64
    linalg.yield %s : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// BLOCK: error: soap-cuda-map-loops: block size 0 is not in 1..1024
