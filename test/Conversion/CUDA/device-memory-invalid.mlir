// RUN: soap-opt %s --split-input-file --soap-cuda-device-memory --verify-diagnostics

// The arguments of a function soap_main calls are in device memory: a value
// the host loads from one (that soap-cuda-map-loops could not move into a
// kernel, since the host reads it) is an error, not a host access to a
// device pointer.
func.func private @use_f32(f32)
func.func private @model(%x: memref<1xf32>) attributes {soap_model_function} {
  %c0 = arith.constant 0 : index
  // expected-error @below {{cannot lower for CUDA: the host reads or writes a buffer that lives in device memory}}
  %v = memref.load %x[%c0] : memref<1xf32>
  call @use_f32(%v) : (f32) -> ()
  return
}

// -----

// A private helper's arguments are the host's (the deallocation helper's
// lists).
func.func private @helper(%list: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %list[%c0] : memref<?xindex>
  return
}
