// RUN: soap-opt %s --soap-lower-to-cpu | FileCheck %s
// RUN: soap-opt %s --soap-lower-to-cpu | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// The whole pipeline ends in the LLVM dialect: loops, libm for erf,
// C-interface wrappers for the libsoaprt calls.

// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-NOT: soap.
// CHECK-DAG: llvm.func @soaprt_rank() -> i64
// CHECK-DAG: llvm.func @_mlir_ciface_soaprt_all_reduce_f32(!llvm.ptr, i64, i64, !llvm.ptr)
// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @soap_main()
// CHECK-DAG: llvm.func @soap_setup()
// CHECK-DAG: llvm.func @soap_num_devices() -> i64
// CHECK-DAG: llvm.func @_mlir_ciface_soaprt_bind_input_f32(i64, !llvm.ptr, i64)
// CHECK-DAG: llvm.func @_mlir_ciface_soaprt_bind_output_f32(i64, !llvm.ptr, i64)

// LLVMIR-DAG: define i64 @soap_num_devices()
// LLVMIR-DAG: ret i64 2
// LLVMIR-DAG: define void @soap_main()
// LLVMIR-DAG: declare void @_mlir_ciface_soaprt_all_reduce_f32(ptr, i64, i64, ptr)

#map = affine_map<(d0, d1) -> (d0, d1)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @model(%a: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
    %r = soap.rank : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %first = arith.cmpi eq, %r, %c0 : index
    // Row-parallel matmul: each rank sums half of the reduction loop.
    %p = scf.if %first -> tensor<4x8xf32> {
      %a0 = tensor.extract_slice %a[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
      %w0 = tensor.extract_slice %w[0, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
      %m = linalg.matmul ins(%a0, %w0 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
      scf.yield %m : tensor<4x8xf32>
    } else {
      %a1 = tensor.extract_slice %a[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
      %w1 = tensor.extract_slice %w[4, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
      %m = linalg.matmul ins(%a1, %w1 : tensor<4x4xf32>, tensor<4x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
      scf.yield %m : tensor<4x8xf32>
    }
    %s = soap.all_reduce %p [0, 0] [4, 8] sum devices [0, 1] : tensor<4x8xf32>
    %e2 = tensor.empty() : tensor<4x8xf32>
    %act = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      %u = math.erf %t : f32
      %v = math.exp %u : f32
      %q = math.rsqrt %v : f32
      linalg.yield %q : f32
    } -> tensor<4x8xf32>
    return %act : tensor<4x8xf32>
  }
}
