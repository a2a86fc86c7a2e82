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

// Left alone: the stored element moves with the loop; two stores; the
// buffer is read elsewhere in the loop.
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
    %o = memref.load %y[%k] : memref<8xf32>
    %s = arith.addf %a, %o : f32
    memref.store %s, %y[%i] : memref<8xf32>
  }
  return
}
