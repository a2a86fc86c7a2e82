// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-map-loops{block-size=128}))" | FileCheck %s
// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-map-loops{block-size=128}, convert-parallel-loops-to-gpu))" | FileCheck %s --check-prefix=LAUNCH

// A one-element tile's SGD update (its loop of one iteration folded away by
// canonicalization) and a reduction to one element with no parallel loop,
// in a function soap_main calls: their buffers are on the GPU, so each run
// of host work becomes a one-iteration loop mapped to one block (of one
// thread).
// The constant the host reads after the run is copied into it.
// CHECK-LABEL: func.func {{.*}}@model(
// CHECK-SAME: %[[W:.*]]: memref<1xf32>, %[[G:.*]]: memref<1xf32>, %[[X:.*]]: memref<8xf32>, %[[S:.*]]: memref<f32>)
// CHECK:         scf.parallel
// CHECK-NOT:       scf.parallel
// CHECK:               memref.load %[[G]]
// CHECK:               memref.load %[[W]]
// CHECK:               memref.store %{{.*}}, %[[W]]
// CHECK:               scf.for
// CHECK:                 memref.load %[[X]]
// CHECK:               memref.store %{{.*}}, %[[S]][]
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    call @use_index(%[[C0]])
// CHECK-NOT:     memref.load
// LAUNCH-LABEL: func.func {{.*}}@model(
// LAUNCH:         gpu.launch blocks
// LAUNCH:           memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// LAUNCH:           gpu.terminator
func.func private @use_index(index)
func.func private @model(%w: memref<1xf32>, %g: memref<1xf32>, %x: memref<8xf32>, %s: memref<f32>) attributes {soap_model_function} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %lr = arith.constant 0.01 : f32
  %zero = arith.constant 0.0 : f32
  %gv = memref.load %g[%c0] : memref<1xf32>
  %wv = memref.load %w[%c0] : memref<1xf32>
  %step = arith.mulf %gv, %lr : f32
  %new = arith.subf %wv, %step : f32
  memref.store %new, %w[%c0] : memref<1xf32>
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<8xf32>
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  memref.store %sum, %s[] : memref<f32>
  call @use_index(%c0) : (index) -> ()
  return
}

// -----

// Left on the host: a value the host reads after loading it (reported by
// soap-cuda-device-memory), the lists a helper function reads, and every
// function soap_main does not call.
// CHECK-LABEL: func.func {{.*}}@host_reads(
// CHECK-NOT:     scf.parallel
// CHECK:         memref.load
// CHECK:         call @use_f32
// CHECK-LABEL: func.func {{.*}}@helper_lists(
// CHECK-NOT:     scf.parallel
// CHECK:         memref.store
// CHECK:         call @helper
// CHECK-LABEL: func.func {{.*}}@not_a_model_function(
// CHECK-NOT:     scf.parallel
// CHECK:         memref.store
func.func private @use_f32(f32)
func.func private @helper(%list: memref<?xindex>) {
  return
}
func.func private @host_reads(%x: memref<1xf32>) attributes {soap_model_function} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<1xf32>
  call @use_f32(%v) : (f32) -> ()
  return
}
func.func private @helper_lists(%p: index) attributes {soap_model_function} {
  %c0 = arith.constant 0 : index
  %list = memref.alloc() : memref<1xindex>
  memref.store %p, %list[%c0] : memref<1xindex>
  %cast = memref.cast %list : memref<1xindex> to memref<?xindex>
  call @helper(%cast) : (memref<?xindex>) -> ()
  memref.dealloc %list : memref<1xindex>
  return
}
func.func @not_a_model_function(%x: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %x[%c0] : memref<1xf32>
  return
}
