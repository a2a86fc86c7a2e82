// RUN: soap-opt %s -split-input-file -verify-diagnostics --soap-dump-graph -o /dev/null

func.func @dynamic(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>, %init: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @below {{'linalg.matmul' has a result of dynamic shape 'tensor<?x8xf32>'; SOAP partitions static shapes only (a symbolic batch size: set it with soapc --batch=N)}}
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

// -----

// A tensor of index elements (indices of a gather) counts 8 bytes per
// element (it crashed asking index for its bit width).
func.func @index_tensor(%a: tensor<8x16xf32>, %i: tensor<4x1xindex>) -> tensor<4x16xf32> {
  // expected-remark @below {{'tensor.gather' has no iteration space SOAP understands; it is kept unpartitioned (replicated)}}
  %g = tensor.gather %a[%i] gather_dims([0]) : (tensor<8x16xf32>, tensor<4x1xindex>) -> tensor<4x16xf32>
  return %g : tensor<4x16xf32>
}

// -----

func.func @complex_elements(%a: tensor<8xcomplex<f32>>, %b: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %e = tensor.empty() : tensor<8xcomplex<f32>>
  // expected-error @below {{'linalg.generic' uses a tensor of 'complex<f32>' elements; SOAP handles integer, index and floating-point elements}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>) outs(%e : tensor<8xcomplex<f32>>) {
  ^bb0(%x: complex<f32>, %y: complex<f32>, %out: complex<f32>):
    %s = complex.add %x, %y : complex<f32>
    linalg.yield %s : complex<f32>
  } -> tensor<8xcomplex<f32>>
  return %r : tensor<8xcomplex<f32>>
}

// -----

func.func @scalar_read(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'tensor.extract' produces a scalar ('f32') from a tensor; SOAP partitions programs on whole tensors only}}
  %x = tensor.extract %a[%c0] : tensor<2xf32>
  %t = tensor.from_elements %x, %x : tensor<2xf32>
  return %t : tensor<2xf32>
}

// -----

func.func @dim_of_dynamic(%a: tensor<?x16xf32>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'tensor.dim' uses a tensor of dynamic shape 'tensor<?x16xf32>'; SOAP partitions static shapes only (a symbolic batch size: set it with soapc --batch=N)}}
  %d = tensor.dim %a, %c0 : tensor<?x16xf32>
  return %d : index
}

// -----

// Linalg on buffers has no results to partition (it crashed reading one).
func.func @on_buffers(%a: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'linalg.fill' works on buffers (memref); SOAP partitions programs on tensors, before bufferization}}
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  return
}

// -----

func.func @no_result(%t: tensor<8xf32>, %m: memref<8xf32>) {
  // expected-error @below {{'bufferization.materialize_in_destination' reads tensors and produces nothing; SOAP cannot partition it}}
  bufferization.materialize_in_destination %t in restrict writable %m : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// A strided insertion into a tensor that is not a splat (into one,
// soap-spread-strided-inserts rewrites it into reshapes and pads).
func.func @strided_insert(%x: tensor<8x16xf32>, %y: tensor<8x8xf32>) -> tensor<8x16xf32> {
  // expected-error @below {{'tensor.insert_slice' with strides > 1 into a tensor other than a splat (a fill or a splat constant) cannot be partitioned}}
  %r = tensor.insert_slice %y into %x[0, 1] [8, 8] [1, 2] : tensor<8x8xf32> into tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

func.func @rank_reducing_insert(%x: tensor<8x16xf32>, %y: tensor<16xf32>) -> tensor<8x16xf32> {
  // expected-error @below {{'tensor.insert_slice' of a rank-reducing source cannot be partitioned}}
  %r = tensor.insert_slice %y into %x[3, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

func.func @dynamic_insert(%x: tensor<8x16xf32>, %y: tensor<1x16xf32>, %i: index) -> tensor<8x16xf32> {
  // expected-error @below {{'tensor.insert_slice' with dynamic offsets or shape cannot be partitioned}}
  %r = tensor.insert_slice %y into %x[%i, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Sizes past what the simulator counts (bytes as doubles, iterations in 64
// bits; they overflowed: "0 parameters", "peak memory 0.0 B").
func.func @huge_tensor(%x: tensor<2251799813685248x4xf32>) -> tensor<2251799813685248x4xf32> {
  %e = tensor.empty() : tensor<2251799813685248x4xf32>
  // expected-error @below {{'linalg.map' uses a tensor of 'tensor<2251799813685248x4xf32>', more than 2^52 bytes; SOAP cannot model it}}
  %r = linalg.map { math.exp } ins(%x : tensor<2251799813685248x4xf32>) outs(%e : tensor<2251799813685248x4xf32>)
  return %r : tensor<2251799813685248x4xf32>
}

// -----

func.func @huge_loops(%a: tensor<4194304x4194304xf32>, %b: tensor<4194304x4194304xf32>) -> tensor<4194304x4194304xf32> {
  %e = tensor.empty() : tensor<4194304x4194304xf32>
  // expected-error @below {{'linalg.matmul' has more than 2^62 iterations; SOAP cannot model it}}
  %r = linalg.matmul ins(%a, %b : tensor<4194304x4194304xf32>, tensor<4194304x4194304xf32>) outs(%e : tensor<4194304x4194304xf32>) -> tensor<4194304x4194304xf32>
  return %r : tensor<4194304x4194304xf32>
}
