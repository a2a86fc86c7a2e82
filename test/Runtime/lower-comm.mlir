// RUN: soap-opt %s --soap-cpu-prepare --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --soap-cpu-entry | FileCheck %s

// The communication ops bufferize in place into libsoaprt calls on a
// subview of their region; soap.rank becomes soaprt_rank(); the entry gets
// input globals and the functions libsoaprt's main() drives.

// CHECK-DAG: func.func private @soaprt_rank() -> i64
// CHECK-DAG: func.func private @soaprt_prepare_group(memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @soaprt_transfer_f32(memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @soaprt_all_reduce_f32(memref<*xf32>, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @soaprt_all_reduce_i32(memref<*xi32>, i64, i64, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: memref.global "private" constant @__soap_devices_0_2 : memref<2xi64> = dense<[0, 2]>
// CHECK-DAG: memref.global "private" constant @__soap_devices_1_2_3 : memref<3xi64> = dense<[1, 2, 3]>

// CHECK-LABEL: func.func @model(
// CHECK-SAME:    %[[A:.*]]: memref<8x16xf32> {llvm.noalias}, %[[B:.*]]: memref<4xi32> {llvm.noalias}) -> (memref<8x16xf32>, memref<4xi32>)
// CHECK-NOT:   soap.
// CHECK:       %[[R:.*]] = call @soaprt_rank() : () -> i64
// CHECK:       arith.index_cast %[[R]] : i64 to index
// The argument is read-only: the in-place ops work on a copy.
// CHECK:       %[[BUF:.*]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK:       memref.copy %[[A]], %[[BUF]]
// CHECK:       %[[SV:.*]] = memref.subview %[[BUF]][0, 8] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
// CHECK:       %[[U:.*]] = memref.cast %[[SV]] : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<*xf32>
// CHECK-DAG:   %[[F32:.*]] = arith.constant 0 : i64
// CHECK-DAG:   %[[FROM:.*]] = arith.constant 2 : i64
// CHECK-DAG:   %[[TO:.*]] = arith.constant 0 : i64
// CHECK:       call @soaprt_transfer_f32(%[[U]], %[[F32]], %[[FROM]], %[[TO]])
// CHECK:       %[[SV2:.*]] = memref.subview %[[BUF]][4, 0] [4, 16] [1, 1]
// CHECK:       %[[U2:.*]] = memref.cast %[[SV2]]
// The element type (f32: 0), the reduction (sum: 0), the devices:
// CHECK:       arith.constant 0 : i64
// CHECK:       %[[SUM:.*]] = arith.constant 0 : i64
// CHECK:       %[[DEV:.*]] = memref.get_global @__soap_devices_0_2 : memref<2xi64>
// CHECK:       %[[UDEV:.*]] = memref.cast %[[DEV]] : memref<2xi64> to memref<*xi64>
// CHECK:       call @soaprt_all_reduce_f32(%[[U2]], %{{.*}}, %[[SUM]], %[[UDEV]])
// CHECK:       %[[I32:.*]] = arith.constant 2 : i64
// CHECK:       %[[MIN:.*]] = arith.constant 2 : i64
// CHECK:       get_global @__soap_devices_1_2_3
// CHECK:       call @soaprt_all_reduce_i32(%{{.*}}, %[[I32]], %[[MIN]], %{{.*}})
// CHECK:       return %[[BUF]], %{{.*}} : memref<8x16xf32>, memref<4xi32>

// CHECK: memref.global "private" @__soap_input_0 : memref<8x16xf32> = uninitialized {alignment = 64 : i64}
// CHECK: memref.global "private" @__soap_input_1 : memref<4xi32> = uninitialized {alignment = 64 : i64}
// CHECK-LABEL: func.func @soap_num_devices() -> i64
// CHECK:         arith.constant 4 : i64
// CHECK-LABEL: func.func @soap_num_inputs() -> i64
// CHECK:         arith.constant 2 : i64
// CHECK-LABEL: func.func @soap_num_outputs() -> i64
// CHECK:         arith.constant 2 : i64
// soap_setup first makes the communicator of each device group (module
// order: the same on every rank), then binds the inputs.
// CHECK-LABEL: func.func @soap_setup()
// CHECK:         %[[L0:.*]] = memref.get_global @__soap_devices_1_2_3 : memref<3xi64>
// CHECK:         %[[U0:.*]] = memref.cast %[[L0]] : memref<3xi64> to memref<*xi64>
// CHECK:         call @soaprt_prepare_group(%[[U0]]) : (memref<*xi64>) -> ()
// CHECK:         memref.get_global @__soap_devices_0_2 : memref<2xi64>
// CHECK:         call @soaprt_prepare_group(
// CHECK-NOT:     soaprt_prepare_group
// CHECK:         %[[G0:.*]] = memref.get_global @__soap_input_0 : memref<8x16xf32>
// CHECK:         %[[C0:.*]] = memref.cast %[[G0]] : memref<8x16xf32> to memref<*xf32>
// CHECK:         call @soaprt_bind_input_f32(%{{.*}}, %[[C0]], %{{.*}}) : (i64, memref<*xf32>, i64) -> ()
// CHECK:         call @soaprt_bind_input_i32(
// CHECK-LABEL: func.func @soap_main()
// CHECK:         %[[OUT:.*]]:2 = call @model(
// CHECK:         memref.cast %[[OUT]]#0 : memref<8x16xf32> to memref<*xf32>
// CHECK:         call @soaprt_bind_output_f32(
// CHECK:         memref.cast %[[OUT]]#1 : memref<4xi32> to memref<*xi32>
// CHECK:         call @soaprt_bind_output_i32(
// CHECK-NOT: soap.machine

module attributes {soap.machine = #soap.machine<nodes = 2, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @model(%a: tensor<8x16xf32> {soap.parameter}, %b: tensor<4xi32>) -> (tensor<8x16xf32>, tensor<4xi32>) {
    %r = soap.rank : index
    %0 = soap.transfer %a [0, 8] [4, 8] from 2 to 0 : tensor<8x16xf32>
    %1 = soap.all_reduce %0 [4, 0] [4, 16] sum devices [0, 2] : tensor<8x16xf32>
    %2 = soap.all_reduce %b [0] [4] min devices [1, 2, 3] : tensor<4xi32>
    return %1, %2 : tensor<8x16xf32>, tensor<4xi32>
  }
}
