// RUN: soap-opt %s --soap-cpu-library-calls --cse --split-input-file | FileCheck %s

// A matmul becomes an OpenBLAS call on its buffers (C += A x B: flags 0),
// with its name for error messages.
// CHECK-DAG:   llvm.mlir.global internal constant @__soap_blas_op_name_0("linalg.matmul 'fc1' at {{.*}}cpu-library-calls.mlir:{{[0-9]+}}:3")
// CHECK-DAG:   func.func private @soaprt_cpu_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>)
// CHECK-DAG:     %[[CA:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK-DAG:     %[[CB:.*]] = memref.cast %[[B]] : memref<8x16xf32> to memref<*xf32>
// CHECK-DAG:     %[[CC:.*]] = memref.cast %[[C]] : memref<4x16xf32> to memref<*xf32>
// CHECK-DAG:     %[[FLAGS:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ADDR:.*]] = llvm.mlir.addressof @__soap_blas_op_name_0
// CHECK-DAG:     %[[NAME:.*]] = llvm.getelementptr %[[ADDR]][0, 0]
// CHECK:         call @soaprt_cpu_matmul_f32(%[[CA]], %[[CB]], %[[CC]], %[[FLAGS]], %[[NAME]])
// CHECK-NEXT:    return
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul {soap.name = "fc1"} ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// The zero fill right before it is the call's overwrite flag (beta = 0);
// f64 is dgemm.
// CHECK-LABEL: func.func @zero_filled_f64(
// CHECK-NOT:     linalg.fill
// CHECK:         %[[FLAGS:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_cpu_matmul_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[FLAGS]], %{{.*}})
func.func @zero_filled_f64(%a: memref<4x8xf64>, %b: memref<8x16xf64>, %c: memref<4x16xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<4x16xf64>)
  linalg.matmul ins(%a, %b : memref<4x8xf64>, memref<8x16xf64>) outs(%c : memref<4x16xf64>)
  return
}

// -----

// A fill of another value, or one with a write in between, stays.
// CHECK-LABEL: func.func @one_filled(
// CHECK:         linalg.fill
// CHECK:         %[[FLAGS:.*]] = arith.constant 0 : i64
// CHECK:         call @soaprt_cpu_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[FLAGS]], %{{.*}})
func.func @one_filled(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Batched, on strided tiles: the views go as they are.
// CHECK-LABEL: func.func @batch_matmul(
// CHECK:         memref.cast %{{.*}} : memref<2x4x8xf32, strided<[64, 8, 1], offset: 64>> to memref<*xf32>
// CHECK:         call @soaprt_cpu_matmul_f32(
func.func @batch_matmul(%a: memref<2x4x8xf32, strided<[64, 8, 1], offset: 64>>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32, strided<[64, 8, 1], offset: 64>>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// x W^T (a linear layer as torch-mlir writes it): B is read transposed, so
// it is passed as a transposed view (K x N with strides [1, K]); the
// runtime gives it to sgemm transposed.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %{{.*}}: memref<4x8xf32>, %[[W:.*]]: memref<16x8xf32>
// CHECK:         %[[T:.*]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<16x8xf32> to memref<8x16xf32, strided<[1, 8]>>
// CHECK:         memref.cast %[[T]] : memref<8x16xf32, strided<[1, 8]>> to memref<*xf32>
// CHECK:         call @soaprt_cpu_matmul_f32(
#mapA = affine_map<(m, n, k) -> (m, k)>
#mapB = affine_map<(m, n, k) -> (n, k)>
#mapC = affine_map<(m, n, k) -> (m, n)>
func.func @linear(%x: memref<4x8xf32>, %w: memref<16x8xf32>, %y: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// What stays loops: mixed types (f32 x bf16), bf16, integers, two M loops
// (a 4-D contraction), and ops on tensors (before bufferization).
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     call @soaprt_cpu_matmul
// CHECK-COUNT-3: linalg.matmul
// CHECK:         linalg.generic
// CHECK:         linalg.matmul
// CHECK-NOT:     call @soaprt_cpu_matmul
#a2 = affine_map<(m0, m1, n, k) -> (m0, m1, k)>
#b2 = affine_map<(m0, m1, n, k) -> (k, n)>
#c2 = affine_map<(m0, m1, n, k) -> (m0, m1, n)>
func.func @stays(%a: memref<4x8xf32>, %bb: memref<8x16xbf16>, %c: memref<4x16xf32>,
                 %ab: memref<4x8xbf16>, %cb: memref<4x16xbf16>,
                 %ai: memref<4x8xi32>, %bi: memref<8x16xi32>, %ci: memref<4x16xi32>,
                 %a3: memref<2x4x8xf32>, %b3: memref<8x16xf32>, %c3: memref<2x4x16xf32>,
                 %ta: tensor<4x8xf32>, %tb: tensor<8x16xf32>, %tc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  linalg.matmul ins(%a, %bb : memref<4x8xf32>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%ab, %bb : memref<4x8xbf16>, memref<8x16xbf16>) outs(%cb : memref<4x16xbf16>)
  linalg.matmul ins(%ai, %bi : memref<4x8xi32>, memref<8x16xi32>) outs(%ci : memref<4x16xi32>)
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a3, %b3 : memref<2x4x8xf32>, memref<8x16xf32>) outs(%c3 : memref<2x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<4x8xf32>, tensor<8x16xf32>) outs(%tc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
