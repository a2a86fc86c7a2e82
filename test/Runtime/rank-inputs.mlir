// RUN: soap-opt %s --soap-specialize-ranks --soap-cpu-prepare --canonicalize --soap-compact-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --soap-cpu-entry | FileCheck %s

// Each rank reads only part of an input (here: its columns of the weight,
// none of %u): soap-compact-tensors makes the rank functions take that
// part, and soap-cpu-entry binds one global per input and rank, says where
// the part lies (soaprt_input_region: whole sizes, then offsets) and calls
// the rank's function directly; the dispatching entry goes.

// CHECK-DAG:   memref.global "private" constant @__soap_region_1_rank0 : memref<4xi64> = dense<[8, 6, 0, 0]>
// CHECK-DAG:   memref.global "private" constant @__soap_region_1_rank1 : memref<4xi64> = dense<[8, 6, 0, 4]>
// CHECK-DAG:   memref.global "private" constant @__soap_region_2_rank1 : memref<2xi64> = dense<[4, 0]>
// CHECK-DAG:   func.func private @soaprt_input_region(i64, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-NOT:   func.func @model(
// Each argument gets a global of its own: no two alias (llvm.noalias).
// CHECK:       func.func private @model__rank0(%{{.*}}: memref<2x8xf32> {llvm.noalias}, %{{.*}}: memref<8x4xf32> {llvm.noalias}, %{{.*}}: memref<0xf32> {llvm.noalias}) -> memref<2x6xf32> attributes {soap_model_function} {
// CHECK:       func.func private @model__rank1(%{{.*}}: memref<2x8xf32> {llvm.noalias}, %{{.*}}: memref<8x2xf32> {llvm.noalias}, %{{.*}}: memref<0xf32> {llvm.noalias}) -> memref<2x6xf32> attributes {soap_model_function} {
// Ranks whose parts have the same shape share a global (each binds only
// its own); another shape gets another.
// CHECK-DAG:   memref.global "private" @__soap_input_0 : memref<2x8xf32> = uninitialized
// CHECK-DAG:   memref.global "private" @__soap_input_1 : memref<8x4xf32> = uninitialized
// CHECK-DAG:   memref.global "private" @__soap_input_1_1 : memref<8x2xf32> = uninitialized
// CHECK-DAG:   memref.global "private" @__soap_input_2 : memref<0xf32> = uninitialized
// CHECK-NOT:   memref.global "private" @__soap_input_0_1

// CHECK-LABEL: func.func @soap_setup()
// CHECK:         %[[RANK:.*]] = call @soaprt_rank() : () -> i64
// CHECK:         %[[IDX:.*]] = arith.index_cast %[[RANK]]
// CHECK:         scf.index_switch %[[IDX]]
// CHECK:         case 1 {
// The whole input 0: no region.
// CHECK-NOT:       soaprt_input_region
// CHECK:           call @soaprt_bind_input_f32(
// CHECK:           %[[R1:.*]] = memref.get_global @__soap_region_1_rank1
// CHECK:           %[[U1:.*]] = memref.cast %[[R1]]
// CHECK:           call @soaprt_input_region(%{{.*}}, %[[U1]])
// CHECK:           call @soaprt_bind_input_f32(
// CHECK:           memref.get_global @__soap_region_2_rank1
// CHECK:           call @soaprt_input_region(
// CHECK:           call @soaprt_bind_input_f32(
// CHECK:         default {
// CHECK:           memref.get_global @__soap_region_1_rank0

// CHECK-LABEL: func.func @soap_main()
// CHECK:         scf.index_switch
// CHECK:         case 1 {
// CHECK-DAG:       %[[X1:.*]] = memref.get_global @__soap_input_0 : memref<2x8xf32>
// CHECK-DAG:       %[[W1:.*]] = memref.get_global @__soap_input_1_1 : memref<8x2xf32>
// CHECK-DAG:       %[[U1:.*]] = memref.get_global @__soap_input_2 : memref<0xf32>
// CHECK:           %[[OUT1:.*]] = func.call @model__rank1(%[[X1]], %[[W1]], %[[U1]])
// CHECK:           memref.cast %[[OUT1]]
// CHECK:           call @soaprt_bind_output_f32(
// CHECK:         default {
// CHECK:           func.call @model__rank0(
// CHECK:           call @soaprt_bind_output_f32(
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @model(%x: tensor<2x8xf32>, %w: tensor<8x6xf32> {soap.parameter}, %u: tensor<4xf32>) -> tensor<2x6xf32> {
    %rank = soap.rank : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %e = tensor.empty() : tensor<2x6xf32>
    %is0 = arith.cmpi eq, %rank, %c0 : index
    %a = scf.if %is0 -> (tensor<2x6xf32>) {
      %wp = tensor.extract_slice %w[0, 0] [8, 4] [1, 1] : tensor<8x6xf32> to tensor<8x4xf32>
      %o = tensor.extract_slice %e[0, 0] [2, 4] [1, 1] : tensor<2x6xf32> to tensor<2x4xf32>
      %m = linalg.matmul ins(%x, %wp : tensor<2x8xf32>, tensor<8x4xf32>) outs(%o : tensor<2x4xf32>) -> tensor<2x4xf32>
      %i = tensor.insert_slice %m into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x6xf32>
      scf.yield %i : tensor<2x6xf32>
    } else {
      scf.yield %e : tensor<2x6xf32>
    }
    %is1 = arith.cmpi eq, %rank, %c1 : index
    %b = scf.if %is1 -> (tensor<2x6xf32>) {
      %wp = tensor.extract_slice %w[0, 4] [8, 2] [1, 1] : tensor<8x6xf32> to tensor<8x2xf32>
      %o = tensor.extract_slice %a[0, 4] [2, 2] [1, 1] : tensor<2x6xf32> to tensor<2x2xf32>
      %m = linalg.matmul ins(%x, %wp : tensor<2x8xf32>, tensor<8x2xf32>) outs(%o : tensor<2x2xf32>) -> tensor<2x2xf32>
      %i = tensor.insert_slice %m into %a[0, 4] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32>
      scf.yield %i : tensor<2x6xf32>
    } else {
      scf.yield %a : tensor<2x6xf32>
    }
    %t = soap.transfer %b [0, 4] [2, 2] from 1 to 0 : tensor<2x6xf32>
    return %t : tensor<2x6xf32>
  }
}
