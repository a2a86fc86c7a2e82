// RUN: soap-opt %s -split-input-file --soap-dealloc-after-last-use | FileCheck %s

// Each buffer is freed right after the last op that uses it or a view of
// it (here a subview read by a later copy and a use inside a loop), not
// at the end of the block.
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         linalg.fill {{.*}} outs(%[[A]]
// CHECK:         %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[V:.*]] = memref.subview %[[A]][0] [4] [1]
// CHECK:         memref.copy %[[V]], %{{.*}}
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK:         scf.for
// CHECK:           memref.load %[[B]]
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK:         call @soaprt_thing(%[[OUT:.*]])
// CHECK-NEXT:    return
func.func private @soaprt_thing(memref<4xf32>)
func.func @chain(%out: memref<4xf32>) {
  %cst = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<8xf32>)
  %b = memref.alloc() : memref<8xf32>
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %w = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %v, %w : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1]>>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    memref.store %x, %out[%c0] : memref<4xf32>
  }
  call @soaprt_thing(%out) : (memref<4xf32>) -> ()
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// -----

// Kept at the end: a buffer handed to a function of the module (it may
// return it), one stored, and one whose dealloc is conditional.
// CHECK-LABEL: func.func @kept(
// CHECK:         call @defined(
// CHECK:         memref.store
// CHECK:         arith.addi
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    scf.if
func.func private @defined(%m: memref<8xf32>) -> memref<8xf32> {
  return %m : memref<8xf32>
}
func.func @kept(%slot: memref<1xmemref<8xf32>>, %c: i1) -> index {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  %r = call @defined(%a) : (memref<8xf32>) -> memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  memref.store %b, %slot[%c0] : memref<1xmemref<8xf32>>
  %d = memref.alloc() : memref<8xf32>
  %s = arith.addi %c0, %c0 : index
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  scf.if %c {
    memref.dealloc %d : memref<8xf32>
  }
  return %s : index
}
