// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-scalar-accumulators))" | FileCheck %s

// A window reduction: both loops carry the accumulator; one load before,
// one store after, the arithmetic in the same order.
// CHECK-LABEL: func.func @window(
// CHECK:         %[[INIT:.*]] = memref.load %arg1[%arg2] : memref<4xf32>
// CHECK:         %[[OUTER:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
// CHECK:           %[[INNER:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32) {
// CHECK:             %[[X:.*]] = memref.load %arg0
// CHECK:             %[[M:.*]] = arith.maximumf %[[B]], %[[X]] : f32
// CHECK:             scf.yield %[[M]] : f32
// CHECK:           scf.yield %[[INNER]] : f32
// CHECK:         memref.store %[[OUTER]], %arg1[%arg2] : memref<4xf32>
func.func @window(%x: memref<4x3x3xf32>, %y: memref<4xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %kh = %c0 to %c3 step %c1 {
    scf.for %kw = %c0 to %c3 step %c1 {
      %acc = memref.load %y[%i] : memref<4xf32>
      %v = memref.load %x[%i, %kh, %kw] : memref<4x3x3xf32>
      %m = arith.maximumf %acc, %v : f32
      memref.store %m, %y[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// Two accumulators (a reduction with two outputs: soap-cuda-fuse-sibling-
// reductions' batch-norm gradients): one iter_arg each, loaded before,
// stored after, each in its own order.
// CHECK-LABEL: func.func @two_outputs(
// CHECK:         %[[I0:.*]] = memref.load %arg1[%arg3] : memref<4xf32>
// CHECK:         %[[I1:.*]] = memref.load %arg2[%arg3] : memref<4xf32>
// CHECK:         %[[R:.*]]:2 = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[I0]], %[[B:.*]] = %[[I1]]) -> (f32, f32) {
// CHECK:           %[[X:.*]] = memref.load %arg0[%arg3, %[[K]]]
// CHECK:           %[[S:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK:           %[[M:.*]] = arith.maximumf %[[B]], %[[X]] : f32
// CHECK:           scf.yield %[[S]], %[[M]] : f32, f32
// CHECK:         memref.store %[[R]]#0, %arg1[%arg3] : memref<4xf32>
// CHECK:         memref.store %[[R]]#1, %arg2[%arg3] : memref<4xf32>
func.func @two_outputs(%x: memref<4x8xf32>, %s: memref<4xf32>, %m: memref<4xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i, %k] : memref<4x8xf32>
    %a = memref.load %s[%i] : memref<4xf32>
    %b = memref.load %m[%i] : memref<4xf32>
    %sum = arith.addf %a, %v : f32
    %max = arith.maximumf %b, %v : f32
    memref.store %sum, %s[%i] : memref<4xf32>
    memref.store %max, %m[%i] : memref<4xf32>
  }
  return
}

// -----

// Left alone: the stored element moves with the loop; a store with no
// load of its element (two stores); two elements of one buffer; two
// accumulators, one buffer also read elsewhere; the buffer read elsewhere
// in the loop.
// CHECK-LABEL: func.func @not_accumulators(
// CHECK-NOT:     iter_args
func.func @not_accumulators(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %y[%k] : memref<8xf32>
    %b = arith.addf %a, %a : f32
    memref.store %b, %y[%k] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %y[%i] : memref<8xf32>
    memref.store %a, %y[%i] : memref<8xf32>
    memref.store %a, %z[%i] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %y[%i] : memref<8xf32>
    %b = memref.load %y[%c0] : memref<8xf32>
    %w = memref.load %z[%k] : memref<8xf32>
    %s = arith.addf %a, %w : f32
    %t = arith.addf %b, %w : f32
    memref.store %s, %y[%i] : memref<8xf32>
    memref.store %t, %y[%c0] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %y[%i] : memref<8xf32>
    %b = memref.load %z[%i] : memref<8xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %y[%i] : memref<8xf32>
    %t = arith.addf %b, %a : f32
    %u = memref.load %y[%c0] : memref<8xf32>
    %v = arith.addf %t, %u : f32
    memref.store %v, %z[%i] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %y[%i] : memref<8xf32>
    %o = memref.load %y[%k] : memref<8xf32>
    %s = arith.addf %a, %o : f32
    memref.store %s, %y[%i] : memref<8xf32>
  }
  return
}

// -----

// A loop that stores an accumulator's value as it loaded it (a reduction
// whose body yields its accumulator: it crashed, the yield read the erased
// load), or two that swap their values: each iteration yields the
// iteration's values.
// CHECK-LABEL: func @stores_loaded_values
// CHECK: %[[A0:.*]] = memref.load %[[X:.*]][%[[C0:.*]]]
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[A0]]) -> (f32) {
// CHECK-NEXT:   scf.yield %[[A]] : f32
// CHECK: memref.store %[[R]], %[[X]][%[[C0]]]
// CHECK: %[[P0:.*]] = memref.load %[[X]][%[[C0]]]
// CHECK: %[[Q0:.*]] = memref.load %[[Y:.*]][%[[C0]]]
// CHECK: %[[S:.*]]:2 = scf.for {{.*}} iter_args(%[[P:.*]] = %[[P0]], %[[Q:.*]] = %[[Q0]]) -> (f32, f32) {
// CHECK-NEXT:   scf.yield %[[Q]], %[[P]] : f32, f32
// CHECK: memref.store %[[S]]#0, %[[X]][%[[C0]]]
// CHECK: memref.store %[[S]]#1, %[[Y]][%[[C0]]]
func.func @stores_loaded_values(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %x[%c0] : memref<4xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %p = memref.load %x[%c0] : memref<4xf32>
    %q = memref.load %y[%c0] : memref<4xf32>
    memref.store %q, %x[%c0] : memref<4xf32>
    memref.store %p, %y[%c0] : memref<4xf32>
  }
  return
}
