// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-dump-graph -o /dev/null

func.func @dynamic(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>, %init: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @below {{'linalg.matmul' has a result of dynamic shape 'tensor<?x8xf32>'; SOAP partitions static shapes only}}
  %y = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @empty(%x: tensor<0x16xf32>, %w: tensor<16x8xf32>, %init: tensor<0x8xf32>) -> tensor<0x8xf32> {
  // expected-error @below {{'linalg.matmul' works on an empty tensor ('tensor<0x16xf32>'); SOAP cannot partition it}}
  %y = linalg.matmul ins(%x, %w : tensor<0x16xf32>, tensor<16x8xf32>) outs(%init : tensor<0x8xf32>) -> tensor<0x8xf32>
  return %y : tensor<0x8xf32>
}

// -----

func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{call to 'helper' must be inlined before SOAP can partition the function (run soap-import)}}
  %y = call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @below {{several candidate entry functions ('a', 'b'); choose one with --entry=NAME}}
module {
  func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
  func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
}

// -----

// expected-error @below {{no entry function: expected a public function with a body that no other function calls}}
module {
  func.func private @a(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
}

// -----

func.func @replicated(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark @below {{'arith.addf' has no iteration space SOAP understands; it is kept unpartitioned (replicated)}}
  %c = arith.addf %a, %b : tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

func.func @control_flow(%a: tensor<4xf32>, %p: i1) -> tensor<4xf32> {
  // expected-error @above {{function 'control_flow' has control flow (several blocks); SOAP partitions straight-line tensor programs}}
  cf.cond_br %p, ^bb1, ^bb2
^bb1:
  return %a : tensor<4xf32>
^bb2:
  return %a : tensor<4xf32>
}

// -----

func.func @dynamic_pad(%x: tensor<4x4xf32>, %n: index) -> tensor<?x4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'tensor.pad' with dynamic padding or shape cannot be partitioned}}
  %p = tensor.pad %x low[%n, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<?x4xf32>
  return %p : tensor<?x4xf32>
}
