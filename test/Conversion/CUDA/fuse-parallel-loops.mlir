// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-fuse-parallel-loops))" | FileCheck %s

// A batch norm's gradient combination (two channel sums) and the SGD
// updates of its weight and bias, each gradient freed after its update
// (soap-dealloc-after-last-use): the frees move after the next loop of the
// same bounds, and upstream's fusion makes one loop (one kernel). The
// parameters are distinct (llvm.noalias: soap-cpu-entry's rank functions),
// so the second update may follow the first's writes.
// CHECK-LABEL: func.func @combination_and_updates(
// CHECK:         scf.parallel
// CHECK:           scf.for
// CHECK:           memref.store %{{.*}}, %[[DW:.*]][%{{.*}}]
// CHECK:           memref.store %{{.*}}, %[[DB:.*]][%{{.*}}]
// CHECK:           memref.store %{{.*}}, %arg1[%{{.*}}]
// CHECK:           memref.store %{{.*}}, %arg2[%{{.*}}]
// CHECK:         }
// CHECK-NOT:     scf.parallel
// CHECK:         memref.dealloc %[[DW]]
// CHECK:         memref.dealloc %[[DB]]
// CHECK:         return
func.func @combination_and_updates(%partials: memref<8x16xf32> {llvm.noalias}, %w: memref<8xf32> {llvm.noalias}, %b: memref<8xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %lr = arith.constant 0.1 : f32
  %dw = memref.alloc() : memref<8xf32>
  %db = memref.alloc() : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %p = memref.load %partials[%c, %k] : memref<8x16xf32>
      %a = memref.load %dw[%c] : memref<8xf32>
      %s = arith.addf %a, %p : f32
      memref.store %s, %dw[%c] : memref<8xf32>
      %a2 = memref.load %db[%c] : memref<8xf32>
      %s2 = arith.addf %a2, %p : f32
      memref.store %s2, %db[%c] : memref<8xf32>
    }
    scf.reduce
  }
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    %g = memref.load %dw[%c] : memref<8xf32>
    %v = memref.load %w[%c] : memref<8xf32>
    %d = arith.mulf %g, %lr : f32
    %n = arith.subf %v, %d : f32
    memref.store %n, %w[%c] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %dw : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    %g = memref.load %db[%c] : memref<8xf32>
    %v = memref.load %b[%c] : memref<8xf32>
    %d = arith.mulf %g, %lr : f32
    %n = arith.subf %v, %d : f32
    memref.store %n, %b[%c] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %db : memref<8xf32>
  return
}

// -----

// Without llvm.noalias two arguments may be one buffer: the second loop
// would read %b where the first wrote %w at another element. Not fused (the
// free still moves: the loops have the same bounds).
// CHECK-LABEL: func.func @may_alias(
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK:         memref.dealloc
func.func @may_alias(%w: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %t[%c] : memref<8xf32>
    memref.store %v, %w[%c] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    %r = arith.subi %c7, %c : index
    %v = memref.load %b[%r] : memref<8xf32>
    memref.store %v, %b[%c] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// The free stays where it is: the next loop has other bounds; a call (with
// effects) comes before the next loop.
// CHECK-LABEL: func.func @frees_stay(
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.store
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T:.*]] :
// CHECK-NEXT:    scf.parallel
// CHECK:         scf.parallel
// CHECK:         }
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    call @effects()
// CHECK-NEXT:    scf.parallel
func.func private @effects()
func.func @frees_stay(%w: memref<8xf32> {llvm.noalias}, %b: memref<8xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    memref.store %f, %t[%c] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c4) step (%c1) {
    memref.store %f, %w[%c] : memref<8xf32>
    scf.reduce
  }
  %u = memref.alloc() : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c4) step (%c1) {
    memref.store %f, %u[%c] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %u : memref<8xf32>
  call @effects() : () -> ()
  scf.parallel (%c) = (%c0) to (%c4) step (%c1) {
    memref.store %f, %b[%c] : memref<8xf32>
    scf.reduce
  }
  return
}
