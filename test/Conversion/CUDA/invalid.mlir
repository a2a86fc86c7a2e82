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

// BLOCK: error: soap-cuda-map-loops: block size 0 is not in 1..1024
