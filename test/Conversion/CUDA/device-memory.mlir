// RUN: soap-opt %s --split-input-file --soap-cuda-device-memory --verify-diagnostics | FileCheck %s

// Inputs: soap_setup binds the host buffers; soap_main runs on their device
// copies. Constants get device copies, uploaded once by libsoaprt; the
// device lists of collectives stay on the host.
// CHECK-DAG:   func.func private @soaprt_cuda_input(i64) -> i64
// CHECK-DAG:   func.func private @soaprt_cuda_constant(i64, i64) -> i64
// CHECK-LABEL: func.func @soap_setup()
// CHECK:         %[[IN:.*]] = memref.get_global @__soap_input_0 : memref<4x8xf32>
// CHECK:         memref.cast %[[IN]]
// CHECK-LABEL: func.func @soap_main()
// CHECK-NOT:     memref.get_global @__soap_input_0
// CHECK:         %[[I:.*]] = arith.constant 0 : i64
// CHECK:         %[[ADDR:.*]] = call @soaprt_cuda_input(%[[I]]) : (i64) -> i64
// CHECK:         %[[PTR:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr
// CHECK:         %[[DESC:.*]] = llvm.insertvalue {{.*}}[4, 1] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:         %[[X:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
// CHECK:         %[[CST:.*]] = memref.get_global @__constant_4xf32 : memref<4xf32>
// CHECK:         %[[HOST:.*]] = memref.extract_aligned_pointer_as_index %[[CST]]
// CHECK:         %[[H64:.*]] = arith.index_cast %[[HOST]] : index to i64
// CHECK:         %[[BYTES:.*]] = arith.constant 16 : i64
// CHECK:         call @soaprt_cuda_constant(%[[H64]], %[[BYTES]]) : (i64, i64) -> i64
// CHECK:         %[[C:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK:         %[[DEV:.*]] = memref.get_global @__soap_devices_0_1 : memref<2xi64>
// CHECK:         call @entry(%[[X]], %[[C]], %[[DEV]])
memref.global "private" @__soap_input_0 : memref<4x8xf32> = uninitialized
memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.0>
memref.global "private" constant @__soap_devices_0_1 : memref<2xi64> = dense<[0, 1]>
func.func private @soaprt_bind_input_f32(i64, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
func.func private @entry(memref<4x8xf32>, memref<4xf32>, memref<2xi64>)
func.func @soap_setup() {
  %c0 = arith.constant 0 : i64
  %g = memref.get_global @__soap_input_0 : memref<4x8xf32>
  %u = memref.cast %g : memref<4x8xf32> to memref<*xf32>
  call @soaprt_bind_input_f32(%c0, %u, %c0) : (i64, memref<*xf32>, i64) -> ()
  return
}
func.func @soap_main() {
  %g = memref.get_global @__soap_input_0 : memref<4x8xf32>
  %c = memref.get_global @__constant_4xf32 : memref<4xf32>
  %d = memref.get_global @__soap_devices_0_1 : memref<2xi64>
  call @entry(%g, %c, %d) : (memref<4x8xf32>, memref<4xf32>, memref<2xi64>) -> ()
  return
}

// -----

// Another shape of an input's part (soap-cpu-entry, when ranks read parts
// of different shapes): the device copy of input 1's binding, whichever
// global the rank bound; the region list stays on the host.
// CHECK-LABEL: func.func @soap_setup()
// CHECK:         memref.get_global @__soap_region_1_rank1 : memref<4xi64>
// CHECK:         memref.get_global @__soap_input_1_2 : memref<2x8xf32>
// CHECK-LABEL: func.func @soap_main()
// CHECK-NOT:     memref.get_global @__soap_input_1_2
// CHECK:         %[[I:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_cuda_input(%[[I]]) : (i64) -> i64
memref.global "private" @__soap_input_1_2 : memref<2x8xf32> = uninitialized
memref.global "private" constant @__soap_region_1_rank1 : memref<4xi64> = dense<[4, 8, 2, 0]>
func.func private @soaprt_bind_input_f32(i64, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
func.func private @soaprt_input_region(i64, memref<*xi64>) attributes {llvm.emit_c_interface}
func.func private @entry__rank1(memref<2x8xf32>)
func.func @soap_setup() {
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %r = memref.get_global @__soap_region_1_rank1 : memref<4xi64>
  %ru = memref.cast %r : memref<4xi64> to memref<*xi64>
  call @soaprt_input_region(%c1, %ru) : (i64, memref<*xi64>) -> ()
  %g = memref.get_global @__soap_input_1_2 : memref<2x8xf32>
  %u = memref.cast %g : memref<2x8xf32> to memref<*xf32>
  call @soaprt_bind_input_f32(%c1, %u, %c0) : (i64, memref<*xf32>, i64) -> ()
  return
}
func.func @soap_main() {
  %g = memref.get_global @__soap_input_1_2 : memref<2x8xf32>
  call @entry__rank1(%g) : (memref<2x8xf32>) -> ()
  return
}

// -----

// Bookkeeping that only the host reads and frees in its block (the
// deallocation helper's lists) moves to the stack; the GPU's buffers stay
// memref.alloc (libsoaprt's device allocator).
// CHECK-LABEL: func.func @bookkeeping(
// CHECK:         %[[LIST:.*]] = memref.alloca() : memref<2xindex>
// CHECK:         memref.store %{{.*}}, %[[LIST]]
// CHECK:         call @helper(
// CHECK-NOT:     memref.dealloc %[[LIST]]
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<64xf32>
// CHECK:         call @soaprt_thing(
// CHECK:         memref.dealloc %[[BUF]]
func.func private @soaprt_thing(memref<64xf32>)
func.func private @helper(%list: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %list[%c0] : memref<?xindex>
  return
}
func.func @bookkeeping(%p: index) {
  %c0 = arith.constant 0 : index
  %list = memref.alloc() : memref<2xindex>
  memref.store %p, %list[%c0] : memref<2xindex>
  %cast = memref.cast %list : memref<2xindex> to memref<?xindex>
  call @helper(%cast) : (memref<?xindex>) -> ()
  memref.dealloc %list : memref<2xindex>
  %buf = memref.alloc() : memref<64xf32>
  call @soaprt_thing(%buf) : (memref<64xf32>) -> ()
  memref.dealloc %buf : memref<64xf32>
  return
}

// -----

// The host cannot read what lives on the GPU.
func.func @entry(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{cannot lower for CUDA: the host reads or writes a buffer that lives in device memory}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func private @soaprt_thing(memref<64xf32>)
func.func @mixed() -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{cannot lower for CUDA: this buffer is used by the GPU and read or written by host code}}
  %buf = memref.alloc() : memref<64xf32>
  call @soaprt_thing(%buf) : (memref<64xf32>) -> ()
  %v = memref.load %buf[%c0] : memref<64xf32>
  memref.dealloc %buf : memref<64xf32>
  return %v : f32
}
