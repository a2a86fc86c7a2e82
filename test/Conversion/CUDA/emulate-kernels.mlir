// RUN: soap-opt %s --split-input-file --soap-cuda-emulate-kernels | FileCheck %s

// A 2-D grid of 2-D blocks: six loops (block z, y, x, thread z, y, x)
// around the body, ids and sizes replaced by the loop indices and the
// launch's sizes; the kernel module and the container attribute go.
// CHECK-LABEL: module {
// CHECK-NOT:     gpu.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME:      %[[X:.*]]: memref<6x10xf32>, %[[GX:.*]]: index, %[[GY:.*]]: index)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[FIVE:.*]] = arith.constant 5 : index
// CHECK:         scf.for %[[BZ:.*]] = %[[ZERO]] to %[[ONE]] step %{{.*}} {
// CHECK-NEXT:      scf.for %[[BY:.*]] = %[[ZERO]] to %[[GY]] step %{{.*}} {
// CHECK-NEXT:        scf.for %[[BX:.*]] = %[[ZERO]] to %[[GX]] step %{{.*}} {
// CHECK-NEXT:          scf.for %[[TZ:.*]] = %[[ZERO]] to %[[ONE]] step %{{.*}} {
// CHECK-NEXT:            scf.for %[[TY:.*]] = %[[ZERO]] to %[[TWO]] step %{{.*}} {
// CHECK-NEXT:              scf.for %[[TX:.*]] = %[[ZERO]] to %[[FIVE]] step %{{.*}} {
// CHECK-NEXT:                %[[R0:.*]] = arith.muli %[[BY]], %[[TWO]] : index
// CHECK-NEXT:                %[[R:.*]] = arith.addi %[[R0]], %[[TY]] : index
// CHECK-NEXT:                %[[C0:.*]] = arith.muli %[[BX]], %[[FIVE]] : index
// CHECK-NEXT:                %[[C:.*]] = arith.addi %[[C0]], %[[TX]] : index
// CHECK-NEXT:                %[[LIMIT:.*]] = arith.muli %[[GX]], %[[FIVE]] : index
// CHECK-NEXT:                %[[IN:.*]] = arith.cmpi ult, %[[C]], %[[LIMIT]] : index
// CHECK-NEXT:                scf.if %[[IN]] {
// CHECK-NEXT:                  %[[V:.*]] = memref.load %[[X]][%[[R]], %[[C]]]
// CHECK:                       memref.store %{{.*}}, %[[X]][%[[R]], %[[C]]]
// CHECK-NOT:     gpu.launch_func
module attributes {gpu.container_module} {
  func.func @scale(%x: memref<6x10xf32>, %gx: index, %gy: index) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    gpu.launch_func @scale_kernel::@scale_kernel
        blocks in (%gx, %gy, %c1) threads in (%c5, %c2, %c1)
        args(%x : memref<6x10xf32>)
    return
  }
  gpu.module @scale_kernel {
    gpu.func @scale_kernel(%x: memref<6x10xf32>) kernel {
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %dx = gpu.block_dim x
      %dy = gpu.block_dim y
      %gx = gpu.grid_dim x
      %r0 = arith.muli %by, %dy : index
      %r = arith.addi %r0, %ty : index
      %c0 = arith.muli %bx, %dx : index
      %c = arith.addi %c0, %tx : index
      %limit = arith.muli %gx, %dx : index
      %in = arith.cmpi ult, %c, %limit : index
      scf.if %in {
        %v = memref.load %x[%r, %c] : memref<6x10xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %x[%r, %c] : memref<6x10xf32>
      }
      gpu.return
    }
  }
}
