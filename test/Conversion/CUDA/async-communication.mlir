// RUN: soap-opt %s --split-input-file --soap-cuda-async-communication --allow-unregistered-dialect | FileCheck %s
// RUN: soap-opt %s --split-input-file --soap-cuda-async-communication="bucket-bytes=128" --allow-unregistered-dialect | FileCheck %s --check-prefix=SMALL
// RUN: soap-opt %s --split-input-file --soap-cuda-async-communication="bucket-bytes=0" --allow-unregistered-dialect | FileCheck %s --check-prefix=NONE
// RUN: not soap-opt %s --split-input-file --soap-cuda-async-communication="bucket-bytes=-1" --allow-unregistered-dialect 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: soap-cuda-async-communication: bucket-bytes must not be negative (0 turns buckets off)

// A data-parallel backward step: the gradient's all-reduce starts, the
// next layer's kernel (other buffers) runs beside it, and the update that
// reads the gradient waits for it; the free of the gradient comes after.
// CHECK-DAG:   func.func private @soaprt_all_reduce_start_f32(memref<*xf32>, i64, i64, memref<*xi64>) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG:   func.func private @soaprt_comm_wait(i64)
// CHECK-NOT:   func.func private @soaprt_all_reduce_f32
// CHECK-LABEL: func.func @backward
// CHECK:         %[[T:.*]] = call @soaprt_all_reduce_start_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf32>, i64, i64, memref<*xi64>) -> i64
// CHECK-NEXT:    gpu.launch_func @kernels::@scale {{.*}} args(%[[A:.*]] : memref<16xf32>)
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T]]) : (i64) -> ()
// CHECK-NEXT:    gpu.launch_func @kernels::@scale {{.*}} args(%[[G:.*]] : memref<16xf32>)
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    memref.dealloc %[[G]]
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<16xf32>) kernel {
      gpu.return
    }
  }
  memref.global "private" constant @__soap_devices_0_1 : memref<2xi64> = dense<[0, 1]>
  func.func private @soaprt_all_reduce_f32(memref<*xf32>, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func @backward() {
    %c1 = arith.constant 1 : index
    %dtype = arith.constant 0 : i64
    %g = memref.alloc() : memref<16xf32>
    %a = memref.alloc() : memref<16xf32>
    %view = memref.subview %g[0] [16] [1] : memref<16xf32> to memref<16xf32, strided<[1]>>
    %region = memref.cast %view : memref<16xf32, strided<[1]>> to memref<*xf32>
    %d = memref.get_global @__soap_devices_0_1 : memref<2xi64>
    %devices = memref.cast %d : memref<2xi64> to memref<*xi64>
    call @soaprt_all_reduce_f32(%region, %dtype, %dtype, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g : memref<16xf32>)
    memref.dealloc %a : memref<16xf32>
    memref.dealloc %g : memref<16xf32>
    return
  }
}

// -----

// Consecutive transfers run as one group (views and constants between them
// touch nothing). The free of the first one's buffer waits for it (and so
// for nothing of the second); a later start on the same buffer needs no wait
// for the earlier one; a free between two transfers ends a run; the block's
// end waits for the last start, and so for all.
// CHECK-LABEL: func.func @redistribute
// CHECK:         call @soaprt_comm_group_begin() : () -> ()
// CHECK-NEXT:    %[[T1:.*]] = call @soaprt_transfer_start_f32
// CHECK:         %[[T2:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_group_end() : () -> ()
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T1]]) : (i64) -> ()
// CHECK-NEXT:    memref.dealloc %{{.*}} : memref<8xf32>
// CHECK-NOT:     soaprt_comm
// CHECK:         call @soaprt_transfer_start_f32
// CHECK-NOT:     soaprt_comm
// CHECK:         %[[T4:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T4]]) : (i64) -> ()
// CHECK-NEXT:    return
func.func private @soaprt_transfer_f32(memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @redistribute() {
  %dtype = arith.constant 0 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %x = memref.alloc() : memref<8xf32>
  %y = memref.alloc() : memref<8xf32>
  %x0 = memref.subview %x[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %ux0 = memref.cast %x0 : memref<4xf32, strided<[1]>> to memref<*xf32>
  call @soaprt_transfer_f32(%ux0, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  %y0 = memref.subview %y[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %uy0 = memref.cast %y0 : memref<4xf32, strided<[1], offset: 4>> to memref<*xf32>
  call @soaprt_transfer_f32(%uy0, %dtype, %c1, %c0) : (memref<*xf32>, i64, i64, i64) -> ()
  memref.dealloc %x : memref<8xf32>
  %uy = memref.cast %y : memref<8xf32> to memref<*xf32>
  call @soaprt_transfer_f32(%uy, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  %z = memref.alloc() : memref<8xf32>
  memref.dealloc %z : memref<8xf32>
  call @soaprt_transfer_f32(%uy, %dtype, %c1, %c0) : (memref<*xf32>, i64, i64, i64) -> ()
  return
}

// -----

// Function arguments may share memory: a library call on another argument
// waits. A call of a function of the module may touch anything. Loops: an
// op holding a use waits before it; a start inside a loop is waited for
// before the loop body's end.
// CHECK-LABEL: func.func @arguments
// CHECK:         %[[T1:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T1]])
// CHECK-NEXT:    call @library(%{{.*}}) : (memref<8xf32>) -> ()
// CHECK:         %[[T2:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T2]])
// CHECK-NEXT:    call @helper() : () -> ()
// CHECK:         %[[T3:.*]] = call @soaprt_transfer_start_f32
// CHECK-COUNT-3: arith.constant
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T3]])
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      func.call @library
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %[[T4:.*]] = func.call @soaprt_transfer_start_f32
// CHECK-NEXT:      func.call @soaprt_comm_wait(%[[T4]])
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    return
func.func private @soaprt_transfer_f32(memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func private @library(memref<8xf32>)
func.func private @helper() {
  return
}
func.func @arguments(%a: memref<8xf32>, %b: memref<8xf32>) {
  %dtype = arith.constant 0 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %ua = memref.cast %a : memref<8xf32> to memref<*xf32>
  call @soaprt_transfer_f32(%ua, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  call @library(%b) : (memref<8xf32>) -> ()
  %x = memref.alloc() : memref<8xf32>
  %ux = memref.cast %x : memref<8xf32> to memref<*xf32>
  call @soaprt_transfer_f32(%ux, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  call @helper() : () -> ()
  call @soaprt_transfer_f32(%ux, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i4 = arith.constant 4 : index
  scf.for %i = %i0 to %i4 step %i1 {
    func.call @library(%x) : (memref<8xf32>) -> ()
  }
  scf.for %i = %i0 to %i4 step %i1 {
    func.call @soaprt_transfer_f32(%ux, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  }
  memref.dealloc %x : memref<8xf32>
  return
}


// -----

// Rank 1 receives two disjoint halves of a buffer (one group), then sends
// them on: a send of a received region must follow its receive, so the
// sends form a second group (two sends of one buffer may run together).
// CHECK-LABEL: func.func @forward
// CHECK:         call @soaprt_comm_group_begin()
// CHECK-NEXT:    call @soaprt_transfer_start_f32
// CHECK:         call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_group_end()
// CHECK-NEXT:    call @soaprt_comm_group_begin()
// CHECK-NEXT:    call @soaprt_transfer_start_f32
// CHECK:         %[[T4:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_group_end()
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T4]])
// CHECK-NEXT:    return
func.func private @soaprt_transfer_f32(memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @forward(%x: memref<8xf32>) attributes {soap.rank_function = 1 : i64} {
  %dtype = arith.constant 0 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %lo = memref.subview %x[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %ulo = memref.cast %lo : memref<4xf32, strided<[1]>> to memref<*xf32>
  %hi = memref.subview %x[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %uhi = memref.cast %hi : memref<4xf32, strided<[1], offset: 4>> to memref<*xf32>
  call @soaprt_transfer_f32(%ulo, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  call @soaprt_transfer_f32(%uhi, %dtype, %c2, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  call @soaprt_transfer_f32(%ulo, %dtype, %c1, %c3) : (memref<*xf32>, i64, i64, i64) -> ()
  call @soaprt_transfer_f32(%uhi, %dtype, %c1, %c0) : (memref<*xf32>, i64, i64, i64) -> ()
  return
}

// -----

// A transposed view of a received region is the region's buffer (a library
// call on it waits); so is what an unknown op makes from it. A buffer the
// function allocates is none of its arguments: no wait.
// CHECK-LABEL: func.func @views
// CHECK:         %[[T1:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    memref.transpose
// CHECK-NEXT:    call @library(%{{.*}}) : (memref<4x4xf32>) -> ()
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T1]])
// CHECK-NEXT:    call @transposed(%{{.*}}) : (memref<4x4xf32, strided<[1, 4]>>) -> ()
// CHECK:         %[[U:.*]] = "test.unknown_view"
// CHECK-NEXT:    %[[T2:.*]] = call @soaprt_transfer_start_f32
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T2]])
// CHECK-NEXT:    call @library(%[[U]])
func.func private @soaprt_transfer_f32(memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func private @library(memref<4x4xf32>)
func.func private @transposed(memref<4x4xf32, strided<[1, 4]>>)
func.func @views(%a: memref<4x4xf32>) {
  %dtype = arith.constant 0 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %x = memref.alloc() : memref<4x4xf32>
  %row = memref.subview %x[1, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 4>>
  %urow = memref.cast %row : memref<1x4xf32, strided<[4, 1], offset: 4>> to memref<*xf32>
  call @soaprt_transfer_f32(%urow, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  %t = memref.transpose %x (d0, d1) -> (d1, d0) : memref<4x4xf32> to memref<4x4xf32, strided<[1, 4]>>
  call @library(%a) : (memref<4x4xf32>) -> ()
  call @transposed(%t) : (memref<4x4xf32, strided<[1, 4]>>) -> ()
  %u = "test.unknown_view"(%x) : (memref<4x4xf32>) -> memref<4x4xf32>
  call @soaprt_transfer_f32(%urow, %dtype, %c0, %c1) : (memref<*xf32>, i64, i64, i64) -> ()
  call @library(%u) : (memref<4x4xf32>) -> ()
  memref.dealloc %x : memref<4x4xf32>
  return
}

// -----

// Reduce-scatters and all-gathers start and are waited for like the other
// communication, but stay out of gradient buckets: one between two
// all-reduces of the same group closes the bucket.
// CHECK-LABEL: func.func @chunked
// CHECK-NOT:     soaprt_comm_group
// CHECK:         call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    %[[S:.*]] = call @soaprt_reduce_scatter_start_f32({{.*}}) : (memref<*xf32>, i64, i64, i64, memref<*xi64>) -> i64
// CHECK-NEXT:    call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    %[[G:.*]] = call @soaprt_all_gather_start_f32({{.*}}) : (memref<*xf32>, i64, i64, memref<*xi64>) -> i64
// The kernel reads what the reduce-scatter wrote:
// CHECK-NEXT:    call @soaprt_comm_wait(%[[S]]) : (i64) -> ()
// CHECK-NEXT:    gpu.launch_func
// CHECK-NEXT:    call @soaprt_comm_wait(%[[G]]) : (i64) -> ()
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<16xf32>) kernel {
      gpu.return
    }
  }
  memref.global "private" constant @__soap_devices_0_1 : memref<2xi64> = dense<[0, 1]>
  func.func private @soaprt_all_reduce_f32(memref<*xf32>, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func private @soaprt_reduce_scatter_f32(memref<*xf32>, i64, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func private @soaprt_all_gather_f32(memref<*xf32>, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func @chunked(%g1: memref<16xf32> {llvm.noalias}, %g2: memref<16xf32> {llvm.noalias}, %g3: memref<16xf32> {llvm.noalias}, %g4: memref<16xf32> {llvm.noalias}) {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0 : i64
    %d = memref.get_global @__soap_devices_0_1 : memref<2xi64>
    %devices = memref.cast %d : memref<2xi64> to memref<*xi64>
    %r1 = memref.cast %g1 : memref<16xf32> to memref<*xf32>
    %r2 = memref.cast %g2 : memref<16xf32> to memref<*xf32>
    %r3 = memref.cast %g3 : memref<16xf32> to memref<*xf32>
    %r4 = memref.cast %g4 : memref<16xf32> to memref<*xf32>
    call @soaprt_all_reduce_f32(%r1, %zero, %zero, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    call @soaprt_reduce_scatter_f32(%r2, %zero, %zero, %zero, %devices) : (memref<*xf32>, i64, i64, i64, memref<*xi64>) -> ()
    call @soaprt_all_reduce_f32(%r3, %zero, %zero, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    call @soaprt_all_gather_f32(%r4, %zero, %zero, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g2 : memref<16xf32>)
    return
  }
}

// -----

// Gradient buckets. Four all-reduces on one device group with kernels on
// other buffers between them start together at the fourth, one NCCL group
// (the arguments are llvm.noalias: distinct buffers). The kernel that reads
// the fourth gradient waits for the bucket and closes it: the fifth is not
// moved above it. An all-reduce on another device group is a bucket of its
// own. With bucket-bytes=128 a bucket holds two 64-byte gradients; with 0,
// there are no buckets.
// CHECK-LABEL: func.func @buckets
// CHECK:         gpu.launch_func @kernels::@scale {{.*}} args(%[[A:.*]] : memref<16xf32>)
// CHECK-NEXT:    gpu.launch_func @kernels::@scale {{.*}} args(%[[A]] : memref<16xf32>)
// CHECK-NEXT:    call @soaprt_comm_group_begin() : () -> ()
// CHECK-NEXT:    call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    %[[T4:.*]] = call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    call @soaprt_comm_group_end() : () -> ()
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T4]]) : (i64) -> ()
// CHECK-NEXT:    gpu.launch_func @kernels::@scale {{.*}} args(%{{.*}} : memref<16xf32>)
// CHECK-NEXT:    call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    %[[T6:.*]] = call @soaprt_all_reduce_start_f32
// CHECK-NEXT:    call @soaprt_comm_wait(%[[T6]]) : (i64) -> ()
// CHECK-NEXT:    return
// SMALL-LABEL: func.func @buckets
// SMALL:         call @soaprt_comm_group_begin() : () -> ()
// SMALL-NEXT:    call @soaprt_all_reduce_start_f32
// SMALL-NEXT:    call @soaprt_all_reduce_start_f32
// SMALL-NEXT:    call @soaprt_comm_group_end() : () -> ()
// SMALL-NEXT:    gpu.launch_func
// SMALL-NEXT:    gpu.launch_func
// SMALL-NEXT:    call @soaprt_comm_group_begin() : () -> ()
// SMALL-NEXT:    call @soaprt_all_reduce_start_f32
// SMALL-NEXT:    call @soaprt_all_reduce_start_f32
// SMALL-NEXT:    call @soaprt_comm_group_end() : () -> ()
// SMALL-NOT:     soaprt_comm_group
// NONE-LABEL: func.func @buckets
// NONE-NOT:      soaprt_comm_group
// NONE:          return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<16xf32>) kernel {
      gpu.return
    }
  }
  memref.global "private" constant @__soap_devices_0_1 : memref<2xi64> = dense<[0, 1]>
  memref.global "private" constant @__soap_devices_0_2 : memref<2xi64> = dense<[0, 2]>
  func.func private @soaprt_all_reduce_f32(memref<*xf32>, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
  func.func @buckets(%g1: memref<16xf32> {llvm.noalias}, %g2: memref<16xf32> {llvm.noalias}, %g3: memref<16xf32> {llvm.noalias}, %g4: memref<16xf32> {llvm.noalias}, %g5: memref<16xf32> {llvm.noalias}, %a: memref<16xf32> {llvm.noalias}) {
    %c1 = arith.constant 1 : index
    %dtype = arith.constant 0 : i64
    %d = memref.get_global @__soap_devices_0_1 : memref<2xi64>
    %devices = memref.cast %d : memref<2xi64> to memref<*xi64>
    %d2 = memref.get_global @__soap_devices_0_2 : memref<2xi64>
    %devices2 = memref.cast %d2 : memref<2xi64> to memref<*xi64>
    %r1 = memref.cast %g1 : memref<16xf32> to memref<*xf32>
    %r2 = memref.cast %g2 : memref<16xf32> to memref<*xf32>
    %r3 = memref.cast %g3 : memref<16xf32> to memref<*xf32>
    %r4 = memref.cast %g4 : memref<16xf32> to memref<*xf32>
    %r5 = memref.cast %g5 : memref<16xf32> to memref<*xf32>
    call @soaprt_all_reduce_f32(%r1, %dtype, %dtype, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    call @soaprt_all_reduce_f32(%r2, %dtype, %dtype, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    call @soaprt_all_reduce_f32(%r3, %dtype, %dtype, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    call @soaprt_all_reduce_f32(%r4, %dtype, %dtype, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g4 : memref<16xf32>)
    call @soaprt_all_reduce_f32(%r5, %dtype, %dtype, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    call @soaprt_all_reduce_f32(%r5, %dtype, %dtype, %devices2) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
    return
  }
}

// -----

// Without communication the pass changes nothing (no declarations).
// CHECK-LABEL: func.func @compute_only
// CHECK-NOT:   soaprt_comm
func.func @compute_only(%a: memref<8xf32>) {
  return
}

