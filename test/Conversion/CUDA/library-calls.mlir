// RUN: soap-opt %s --soap-cuda-library-calls --cse --split-input-file | FileCheck %s
// RUN: soap-opt %s --soap-cuda-library-calls="allow-tf32" --split-input-file | FileCheck %s --check-prefix=TF32

// A matmul becomes a cuBLAS call on its buffers (C += A x B), with strict
// fp32 (flags 0) and its name for error messages.
// CHECK-DAG:   llvm.mlir.global internal constant @__soap_op_name_0("linalg.matmul at {{.*}}library-calls.mlir:{{[0-9]+}}:3")
// CHECK-DAG:   func.func private @soaprt_cuda_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>)
// CHECK-DAG:     %[[CA:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK-DAG:     %[[CB:.*]] = memref.cast %[[B]] : memref<8x16xf32> to memref<*xf32>
// CHECK-DAG:     %[[CC:.*]] = memref.cast %[[C]] : memref<4x16xf32> to memref<*xf32>
// CHECK-DAG:     %[[FLAGS:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[NAME:.*]] = llvm.mlir.addressof @__soap_op_name_0
// CHECK:         call @soaprt_cuda_matmul_f32(%[[CA]], %[[CB]], %[[CC]], %[[FLAGS]], %{{.*}})
// CHECK-NOT:     linalg.matmul
// TF32-LABEL:  func.func @matmul(
// TF32:          %[[FLAGS:.*]] = arith.constant 1 : i64
// TF32:          call @soaprt_cuda_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[FLAGS]], %{{.*}})
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Batched, on strided tiles: the views go as they are.
// CHECK-LABEL: func.func @batch_matmul(
// CHECK:         memref.cast %{{.*}} : memref<2x4x8xf32, strided<[64, 8, 1], offset: 64>> to memref<*xf32>
// CHECK:         call @soaprt_cuda_matmul_f32(
func.func @batch_matmul(%a: memref<2x4x8xf32, strided<[64, 8, 1], offset: 64>>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32, strided<[64, 8, 1], offset: 64>>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// x W^T (a linear layer as torch-mlir writes it): B is read transposed, so
// it is passed as a transposed view (K x N with strides [1, K]).
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %{{.*}}: memref<4x8xf32>, %[[W:.*]]: memref<16x8xf32>
// CHECK:         %[[T:.*]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<16x8xf32> to memref<8x16xf32, strided<[1, 8]>>
// CHECK:         memref.cast %[[T]] : memref<8x16xf32, strided<[1, 8]>> to memref<*xf32>
// CHECK:         call @soaprt_cuda_matmul_f32(
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

// 16-bit matmuls go to cuBLAS's tensor cores (fp32 accumulation): bf16 and
// f16 into themselves (C rounded once, at the end), and mixed precision,
// bf16 or f16 products summed into f32 (the body extends the operands).
// TF32 is no concern of theirs (the runtime ignores the flag).
// CHECK-DAG:   func.func private @soaprt_cuda_matmul_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-DAG:   func.func private @soaprt_cuda_matmul_f16(memref<*xf16>, memref<*xf16>, memref<*xf16>, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-DAG:   func.func private @soaprt_cuda_matmul_bf16_f32(memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-DAG:   func.func private @soaprt_cuda_matmul_f16_f32(memref<*xf16>, memref<*xf16>, memref<*xf32>, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @half_matmuls(
// CHECK:         %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_matmul_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %{{.*}})
// CHECK:         call @soaprt_cuda_matmul_f16(
// CHECK:         call @soaprt_cuda_matmul_bf16_f32(
// CHECK:         memref.transpose
// CHECK:         call @soaprt_cuda_matmul_f16_f32(
// CHECK-NOT:     linalg.
// CHECK:         return
#mixA = affine_map<(m, n, k) -> (m, k)>
#mixB = affine_map<(m, n, k) -> (n, k)>
#mixC = affine_map<(m, n, k) -> (m, n)>
func.func @half_matmuls(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>,
                        %ha: memref<4x8xf16>, %hb: memref<8x16xf16>, %hc: memref<4x16xf16>,
                        %wc: memref<4x16xf32>, %hw: memref<16x8xf16>, %wd: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%ha, %hb : memref<4x8xf16>, memref<8x16xf16>) outs(%hc : memref<4x16xf16>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%wc : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#mixA, #mixB, #mixC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ha, %hw : memref<4x8xf16>, memref<16x8xf16>) outs(%wd : memref<4x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An f32 operand times a bf16 one into f32 (a mixed-precision layer's
// gradient: the f32 cotangent times the bf16 weights): the bf16 operand is
// widened into an f32 copy (a kernel; exact), the product is the f32 GEMM,
// and the copy is freed after it. The zero fill before the product stays
// the call's job.
// CHECK-LABEL: func.func @widened(
// CHECK-SAME:    %[[DY:.*]]: memref<4x16xf32>, %[[W:.*]]: memref<8x16xbf16>, %[[DX:.*]]: memref<4x8xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[WIDE:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[W]] : memref<8x16xbf16>) outs(%[[WIDE]] : memref<8x16xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         memref.transpose %[[WIDE]]
// CHECK:         %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %{{.*}})
// CHECK-NEXT:    memref.dealloc %[[WIDE]] : memref<8x16xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return
#wdY = affine_map<(m, n, k) -> (m, k)>
#wW = affine_map<(m, n, k) -> (n, k)>
#wdX = affine_map<(m, n, k) -> (m, n)>
func.func @widened(%dy: memref<4x16xf32>, %w: memref<8x16xbf16>, %dx: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#wdY, #wW, #wdX], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<4x16xf32>, memref<8x16xbf16>) outs(%dx : memref<4x8xf32>) {
  ^bb0(%g: f32, %x: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %p = arith.mulf %g, %xe : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Mixed operand types cuBLAS has no matmul for stay generated kernels: bf16
// times f16, f32 operands summed into bf16, f64, an f32 operand times a bf16
// one whose product is rounded to bf16 (the f32 operand truncated: a
// widened copy would not compute that), and the product of an f32 and a
// bf16 operand summed in bf16 (the training step sums such gradients in
// f32 and rounds them once: soap-training-step).
#mixA2 = affine_map<(m, n, k) -> (m, k)>
#mixB2 = affine_map<(m, n, k) -> (k, n)>
#mixC2 = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @half_not_library(
// CHECK-NOT:     call @soaprt_cuda
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : memref<4x8xbf16>, memref<8x16xf16>) outs(%{{.*}} : memref<4x16xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x16xf32>) outs(%{{.*}} : memref<4x16xbf16>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf64>, memref<8x16xf64>)
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x16xbf16>) outs(%{{.*}} : memref<4x16xf32>)
// CHECK:           arith.truncf
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x16xbf16>) outs(%{{.*}} : memref<4x16xbf16>)
func.func @half_not_library(%a: memref<4x8xbf16>, %hb: memref<8x16xf16>, %c: memref<4x16xbf16>,
                            %fa: memref<4x8xf32>, %fb: memref<8x16xf32>, %fc: memref<4x16xf32>,
                            %da: memref<4x8xf64>, %db: memref<8x16xf64>, %dc: memref<4x16xf64>,
                            %hbb: memref<8x16xbf16>) {
  linalg.generic {indexing_maps = [#mixA2, #mixB2, #mixC2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %hb : memref<4x8xbf16>, memref<8x16xf16>) outs(%fc : memref<4x16xf32>) {
  ^bb0(%x: bf16, %y: f16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%fa, %fb : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%da, %db : memref<4x8xf64>, memref<8x16xf64>) outs(%dc : memref<4x16xf64>)
  linalg.generic {indexing_maps = [#mixA2, #mixB2, #mixC2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%fa, %hbb : memref<4x8xf32>, memref<8x16xbf16>) outs(%fc : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: bf16, %acc: f32):
    %xt = arith.truncf %x : f32 to bf16
    %p = arith.mulf %xt, %y : bf16
    %pe = arith.extf %p : bf16 to f32
    %s = arith.addf %acc, %pe : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#mixA2, #mixB2, #mixC2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%fa, %hbb : memref<4x8xf32>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>) {
  ^bb0(%x: f32, %y: bf16, %o: bf16):
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %x, %ye : f32
    %pt = arith.truncf %p : f32 to bf16
    %r = arith.addf %o, %pt : bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// A convolution becomes a cuDNN call with its strides and dilations.
// CHECK-DAG:   func.func private @soaprt_cuda_conv2d_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @conv(
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[C2]], %[[C2]], %[[C1]], %[[C3]], %{{.*}}, %{{.*}}, %[[C1]], %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.conv
func.func @conv(%x: memref<2x3x17x17xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x6xf32>) {
  linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<[1, 3]> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x17x17xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x6xf32>)
  return
}

// -----

// Several loops of one kind are one GEMM dim where each operand's layout
// lets them be collapsed: two reduction loops (K = 2 x 3), then attention's
// batch x heads (two batch loops, as soap-split-merged-batch-loops leaves
// a batch matmul).
// CHECK-LABEL: func.func @grouped(
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<4x2x3xf32> into memref<4x6xf32>
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
// CHECK:         call @soaprt_cuda_matmul_f32(
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<2x3x4x8xf32> into memref<6x4x8xf32>
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<2x3x8x5xf32> into memref<6x8x5xf32>
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : memref<2x3x4x5xf32> into memref<6x4x5xf32>
// CHECK:         call @soaprt_cuda_matmul_f32(
// CHECK-NOT:     linalg.generic
#mA = affine_map<(m, n, k1, k2) -> (m, k1, k2)>
#mB = affine_map<(m, n, k1, k2) -> (k1, k2, n)>
#mC = affine_map<(m, n, k1, k2) -> (m, n)>
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, d, j)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
func.func @grouped(%x: memref<4x2x3xf32>, %w: memref<2x3x5xf32>, %y: memref<4x5xf32>,
                   %q: memref<2x3x4x8xf32>, %k: memref<2x3x8x5xf32>, %sc: memref<2x3x4x5xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<4x2x3xf32>, memref<2x3x5xf32>) outs(%y : memref<4x5xf32>) {
  ^bb0(%p: f32, %o: f32, %r: f32):
    %m = arith.mulf %p, %o : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x4x8xf32>, memref<2x3x8x5xf32>) outs(%sc : memref<2x3x4x5xf32>) {
  ^bb0(%p: f32, %o: f32, %r: f32):
    %m = arith.mulf %p, %o : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left for generated kernels: integer matmuls, contractions over two
// reduction dimensions that do not collapse (K x N read with the two K
// loops swapped), ops on tensors.
// CHECK-LABEL: func.func @not_library(
// CHECK-NOT:     call @soaprt_cuda
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xi32>
// CHECK:         linalg.generic
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>
#mA = affine_map<(m, n, k1, k2) -> (m, k1, k2)>
#mB = affine_map<(m, n, k1, k2) -> (k2, k1, n)>
#mC = affine_map<(m, n, k1, k2) -> (m, n)>
func.func @not_library(%a: memref<4x8xi32>, %b: memref<8x16xi32>, %c: memref<4x16xi32>,
                       %x: memref<4x2x3xf32>, %w: memref<3x2x5xf32>, %y: memref<4x5xf32>,
                       %ta: tensor<4x8xf32>, %tb: tensor<8x16xf32>, %tc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x16xi32>) outs(%c : memref<4x16xi32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<4x2x3xf32>, memref<3x2x5xf32>) outs(%y : memref<4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<4x8xf32>, tensor<8x16xf32>) outs(%tc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// The zero fill right before the op is the call's job (beta = 0: flag 2);
// a fill of another buffer or a non-zero fill stays.
// CHECK-LABEL: func.func @overwrite(
// CHECK-NOT:     linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK:         %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %{{.*}})
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%arg3
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         call @soaprt_cuda_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}})
// TF32-LABEL:  func.func @overwrite(
// TF32:          arith.constant 3 : i64
func.func @overwrite(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>, %d: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.fill ins(%one : f32) outs(%d : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%d : memref<4x16xf32>)
  return
}

// -----

// 16-bit convolutions go to cuDNN's tensor cores (fp32 compute): X, W and Y
// of bf16, or of f16. Operands of mixed types stay generated kernels.
// CHECK-DAG:   func.func private @soaprt_cuda_conv2d_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-DAG:   func.func private @soaprt_cuda_conv2d_f16(memref<*xf16>, memref<*xf16>, memref<*xf16>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @half_convs(
// CHECK:         call @soaprt_cuda_conv2d_bf16(
// CHECK:         call @soaprt_cuda_conv2d_f16(
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK-SAME:      memref<2x3x9x9xbf16>, memref<8x3x3x3xf32>
func.func @half_convs(%x: memref<2x3x9x9xbf16>, %w: memref<8x3x3x3xbf16>, %y: memref<2x8x7x7xbf16>,
                      %hx: memref<2x3x9x9xf16>, %hw: memref<8x3x3x3xf16>, %hy: memref<2x8x7x7xf16>,
                      %fw: memref<8x3x3x3xf32>, %fy: memref<2x8x7x7xf32>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<2x3x9x9xbf16>, memref<8x3x3x3xbf16>) outs(%y : memref<2x8x7x7xbf16>)
  linalg.conv_2d_nchw_fchw ins(%hx, %hw : memref<2x3x9x9xf16>, memref<8x3x3x3xf16>) outs(%hy : memref<2x8x7x7xf16>)
  linalg.conv_2d_nchw_fchw ins(%x, %fw : memref<2x3x9x9xbf16>, memref<8x3x3x3xf32>) outs(%fy : memref<2x8x7x7xf32>)
  return
}

// -----

// A zero-padded input (tensor.pad bufferized: alloc, zero map, copy into the
// interior) that only the convolution reads: cuDNN pads by itself (padding
// 2x1), so the padded buffer and both kernels go.
// CHECK-LABEL: func.func @padded_conv(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x8x8xf32>,
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.map
// CHECK-NOT:     memref.copy
// CHECK:         %[[CX:.*]] = memref.cast %[[X]] : memref<2x3x8x8xf32> to memref<*xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%[[CX]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[TWO]], %[[ONE]], %[[ONE]], %[[TWO]], %{{.*}})
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @padded_conv(%x: memref<2x3x8x8xf32>, %w: memref<4x3x5x3xf32>, %y: memref<2x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x3x12x10xf32>
  linalg.map outs(%pad : memref<2x3x12x10xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %pad[0, 0, 2, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x12x10xf32> to memref<2x3x8x8xf32, strided<[360, 120, 10, 1], offset: 21>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[360, 120, 10, 1], offset: 21>>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x8x8xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x3x12x10xf32>, memref<4x3x5x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  memref.dealloc %pad : memref<2x3x12x10xf32>
  return
}

// -----

// Padded differently on the two sides (or read by another op): the padded
// buffer stays and cuDNN gets no padding.
// CHECK-LABEL: func.func @asymmetric_pad(
// CHECK:         memref.alloc() : memref<2x3x11x10xf32>
// CHECK:         memref.copy
// CHECK:         call @soaprt_cuda_conv2d_f32(
func.func @asymmetric_pad(%x: memref<2x3x8x8xf32>, %w: memref<4x3x4x3xf32>, %y: memref<2x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x3x11x10xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<2x3x11x10xf32>)
  %interior = memref.subview %pad[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x11x10xf32> to memref<2x3x8x8xf32, strided<[330, 110, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[330, 110, 10, 1], offset: 11>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x3x11x10xf32>, memref<4x3x4x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  memref.dealloc %pad : memref<2x3x11x10xf32>
  return
}

// -----

// A strided conv that does not reach the padded buffer's last row and
// column reads a leading view of it (ResNet's first conv): cuDNN's own
// padding of 3 gives the same output, so the buffer goes.
// CHECK-LABEL: func.func @padded_prefix(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x8x8xf32>,
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.subview
// CHECK:         %[[CX:.*]] = memref.cast %[[X]] : memref<2x3x8x8xf32> to memref<*xf32>
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[THREE:.*]] = arith.constant 3 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%[[CX]], %{{.*}}, %{{.*}}, %[[TWO]], %[[TWO]], %{{.*}}, %{{.*}}, %[[THREE]], %[[THREE]],
// CHECK-NOT:     memref.dealloc
func.func @padded_prefix(%x: memref<2x3x8x8xf32>, %w: memref<4x3x7x7xf32>, %y: memref<2x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x3x14x14xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<2x3x14x14xf32>)
  %interior = memref.subview %pad[0, 0, 3, 3] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x14x14xf32> to memref<2x3x8x8xf32, strided<[588, 196, 14, 1], offset: 45>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[588, 196, 14, 1], offset: 45>>
  %read = memref.subview %pad[0, 0, 0, 0] [2, 3, 13, 13] [1, 1, 1, 1] : memref<2x3x14x14xf32> to memref<2x3x13x13xf32, strided<[588, 196, 14, 1]>>
  linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%read, %w : memref<2x3x13x13xf32, strided<[588, 196, 14, 1]>>, memref<4x3x7x7xf32>) outs(%y : memref<2x4x4x4xf32>)
  memref.dealloc %pad : memref<2x3x14x14xf32>
  return
}

// -----

// Less padding after the rows than before them (a partitioned strided conv:
// its tile's pad stops where its reads stop): symmetric padding gives cuDNN
// the same output size, so it pads by itself.
// CHECK-LABEL: func.func @short_high_pad(
// CHECK-NOT:     memref.alloc
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[TWO]], %[[ONE]],
func.func @short_high_pad(%x: memref<2x3x8x8xf32>, %w: memref<4x3x5x3xf32>, %y: memref<2x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloc() : memref<2x3x11x10xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<2x3x11x10xf32>)
  %interior = memref.subview %pad[0, 0, 2, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x11x10xf32> to memref<2x3x8x8xf32, strided<[330, 110, 10, 1], offset: 21>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[330, 110, 10, 1], offset: 21>>
  linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x3x11x10xf32>, memref<4x3x5x3xf32>) outs(%y : memref<2x4x4x4xf32>)
  memref.dealloc %pad : memref<2x3x11x10xf32>
  return
}

// -----

// The output's zero fill before the padded input is built: cuDNN still
// overwrites the output itself (flag 2), as the padding ops go with the
// conv.
// CHECK-LABEL: func.func @fill_before_pad(
// CHECK-NOT:     linalg.fill
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[TWO]],
func.func @fill_before_pad(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x8x8xf32>)
  %pad = memref.alloc() : memref<2x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<2x3x10x10xf32>)
  %interior = memref.subview %pad[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  memref.dealloc %pad : memref<2x3x10x10xf32>
  return
}

// -----

// A convolution's filter gradient as soap-training-step writes it (over the
// forward loops (n, f, oh, ow, c, kh, kw): X at (n, c, 2 oh + kh, 2 ow + kw),
// dY at (n, f, oh, ow), dW at (f, c, kh, kw), acc + x * dy) becomes a cuDNN
// filter-gradient call with strides 2x2 and dilations 1x1; the zero fill
// before it becomes beta = 0 (flags 2).
#x = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#dy = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-DAG:   func.func private @soaprt_cuda_conv2d_filter_grad_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @filter_grad(
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NOT:     linalg.fill
// CHECK:         call @soaprt_cuda_conv2d_filter_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[TWO]], %{{.*}})
// CHECK-NOT:     linalg.generic
func.func @filter_grad(%x: memref<2x3x9x9xf32>, %dy: memref<2x4x4x4xf32>, %dw: memref<4x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<2x3x9x9xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not a filter gradient (the window is read one row lower): a generated
// kernel.
#x2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh + 1, ow * 2 + kw)>
#dy = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-LABEL: func.func @not_filter_grad(
// CHECK-NOT:     call @soaprt_cuda_conv2d_filter_grad_f32
// CHECK:         linalg.generic
func.func @not_filter_grad(%x: memref<2x3x10x9xf32>, %dy: memref<2x4x4x4xf32>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#x2, #dy, #dw], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<2x3x10x9xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A strided convolution's input gradient as soap-training-step writes it,
// bufferized: dY spread by the strides (zero fill, copy into [.., 0, .., 0]
// of N x F x OH x 2 x OW x 2, collapsed), zero-padded by the window less
// one, and a stride-1 convolution with the flipped filter (channels
// swapped). It becomes cuDNN's backward data of the forward convolution
// (stride 2, no padding) from W and dY: the flip, the spread and the padded
// copy go; the zero fill of dX is beta = 0 (flags 2).
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   func.func private @soaprt_cuda_conv2d_input_grad_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @input_grad_strided(
// CHECK-SAME:    %[[W:.*]]: memref<4x3x3x3xf32>, %[[DY:.*]]: memref<2x4x5x5xf32>, %[[DX:.*]]: memref<2x3x11x11xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.
// CHECK-DAG:     %[[CW:.*]] = memref.cast %[[W]]
// CHECK-DAG:     %[[CDY:.*]] = memref.cast %[[DY]]
// CHECK-DAG:     %[[CDX:.*]] = memref.cast %[[DX]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%[[CW]], %[[CDY]], %[[CDX]], %[[TWO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[TWO]], %{{.*}})
// CHECK-NOT:     memref.
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @input_grad_strided(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x5x5xf32>, %dx: memref<2x3x11x11xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %e = memref.expand_shape %dy [[0], [1], [2, 3], [4, 5]] output_shape [2, 4, 5, 1, 5, 1] : memref<2x4x5x5xf32> into memref<2x4x5x1x5x1xf32>
  %d6 = memref.alloc() : memref<2x4x5x2x5x2xf32>
  linalg.map outs(%d6 : memref<2x4x5x2x5x2xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %di = memref.subview %d6[0, 0, 0, 0, 0, 0] [2, 4, 5, 1, 5, 1] [1, 1, 1, 1, 1, 1] : memref<2x4x5x2x5x2xf32> to memref<2x4x5x1x5x1xf32, strided<[400, 100, 20, 10, 2, 1]>>
  memref.copy %e, %di : memref<2x4x5x1x5x1xf32> to memref<2x4x5x1x5x1xf32, strided<[400, 100, 20, 10, 2, 1]>>
  %d = memref.collapse_shape %d6 [[0], [1], [2, 3], [4, 5]] : memref<2x4x5x2x5x2xf32> into memref<2x4x10x10xf32>
  %p = memref.alloc() : memref<2x4x13x13xf32>
  linalg.map outs(%p : memref<2x4x13x13xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 2, 2] [2, 4, 10, 10] [1, 1, 1, 1] : memref<2x4x13x13xf32> to memref<2x4x10x10xf32, strided<[676, 169, 13, 1], offset: 28>>
  memref.copy %d, %pi : memref<2x4x10x10xf32> to memref<2x4x10x10xf32, strided<[676, 169, 13, 1], offset: 28>>
  memref.dealloc %d6 : memref<2x4x5x2x5x2xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x3x11x11xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x13x13xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x11x11xf32>)
  memref.dealloc %p : memref<2x4x13x13xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  return
}

// -----

// A 1 x 1 stride-2 convolution's input gradient: no padding, and the spread
// dY is cut to the input's 5 rows and columns (a leading view).
#flip1 = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_1x1(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %[[TWO]], %{{.*}}, %{{.*}}, %[[ZERO]], %[[ZERO]], %{{.*}}, %[[ZERO]], %{{.*}})
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @input_grad_1x1(%w: memref<6x4x1x1xf32>, %dy: memref<2x6x3x3xf32>, %dx: memref<2x4x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = memref.expand_shape %dy [[0], [1], [2, 3], [4, 5]] output_shape [2, 6, 3, 1, 3, 1] : memref<2x6x3x3xf32> into memref<2x6x3x1x3x1xf32>
  %d6 = memref.alloc() : memref<2x6x3x2x3x2xf32>
  linalg.map outs(%d6 : memref<2x6x3x2x3x2xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %di = memref.subview %d6[0, 0, 0, 0, 0, 0] [2, 6, 3, 1, 3, 1] [1, 1, 1, 1, 1, 1] : memref<2x6x3x2x3x2xf32> to memref<2x6x3x1x3x1xf32, strided<[216, 36, 12, 6, 2, 1]>>
  memref.copy %e, %di : memref<2x6x3x1x3x1xf32> to memref<2x6x3x1x3x1xf32, strided<[216, 36, 12, 6, 2, 1]>>
  %d = memref.collapse_shape %d6 [[0], [1], [2, 3], [4, 5]] : memref<2x6x3x2x3x2xf32> into memref<2x6x6x6xf32>
  %crop = memref.subview %d[0, 0, 0, 0] [2, 6, 5, 5] [1, 1, 1, 1] : memref<2x6x6x6xf32> to memref<2x6x5x5xf32, strided<[216, 36, 6, 1]>>
  %wf = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<6x4x1x1xf32>) outs(%wf : memref<4x6x1x1xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%crop, %wf : memref<2x6x5x5xf32, strided<[216, 36, 6, 1]>>, memref<4x6x1x1xf32>) outs(%dx : memref<2x4x5x5xf32>)
  memref.dealloc %wf : memref<4x6x1x1xf32>
  memref.dealloc %d6 : memref<2x6x3x2x3x2xf32>
  return
}

// -----

// Data parallelism all-reduces a weight gradient between the flip and the
// convolution: libsoaprt's all-reduce writes only its region, so W and dY
// keep their values and the 1 x 1 stride-1 input gradient is backward data.
// An all-reduce of W itself in between keeps the convolution.
#flip1 = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_all_reduce_between(
// CHECK:         call @soaprt_all_reduce_f32
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(
// CHECK:         call @soaprt_all_reduce_f32
// CHECK:         call @soaprt_cuda_conv2d_f32(
// CHECK:         return
func.func private @soaprt_all_reduce_f32(memref<*xf32>, i64, i64, memref<*xi64>)
func.func @input_grad_all_reduce_between(%w: memref<6x4x1x1xf32>, %dy: memref<2x6x5x5xf32>, %dx: memref<2x4x5x5xf32>, %dx2: memref<2x4x5x5xf32>, %g: memref<8xf32>, %devices: memref<*xi64>) {
  %c0 = arith.constant 0 : i64
  %wf = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<6x4x1x1xf32>) outs(%wf : memref<4x6x1x1xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %gc = memref.cast %g : memref<8xf32> to memref<*xf32>
  call @soaprt_all_reduce_f32(%gc, %c0, %c0, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%dy, %wf : memref<2x6x5x5xf32>, memref<4x6x1x1xf32>) outs(%dx : memref<2x4x5x5xf32>)
  memref.dealloc %wf : memref<4x6x1x1xf32>
  %wf2 = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<6x4x1x1xf32>) outs(%wf2 : memref<4x6x1x1xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %wc = memref.cast %w : memref<6x4x1x1xf32> to memref<*xf32>
  call @soaprt_all_reduce_f32(%wc, %c0, %c0, %devices) : (memref<*xf32>, i64, i64, memref<*xi64>) -> ()
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%dy, %wf2 : memref<2x6x5x5xf32>, memref<4x6x1x1xf32>) outs(%dx2 : memref<2x4x5x5xf32>)
  memref.dealloc %wf2 : memref<4x6x1x1xf32>
  return
}

// -----

// Stride 1 (a padded 3 x 3 convolution): only the padding of dY.
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_stride1(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[ZERO]], %{{.*}})
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @input_grad_stride1(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dx: memref<2x3x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x6x6xf32>)
  memref.dealloc %p : memref<2x4x8x8xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  return
}

// -----

// The gradient of a padded convolution's unpadded input (soap-training-step
// folds the pad: dY padded by the span less one less the forward padding,
// 3 - 1 - 1 = 1, over dX's own 4 x 4): backward data with padding 1 x 1.
// Padded by 1 but over a 5 x 5 dX, whose forward would have made 5 x 5
// outputs with that padding on both sides, not dY's 4 x 4: no backward
// data, the stride-1 convolution of the padded dY stays a forward call.
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_padded(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ZERO]], %{{.*}})
// CHECK-NOT:     linalg.
// CHECK:         return
// CHECK-LABEL: func.func @input_grad_padded_mismatch(
// CHECK-NOT:     call @soaprt_cuda_conv2d_input_grad_f32
// CHECK:         call @soaprt_cuda_conv2d_f32(
// CHECK-NOT:     call @soaprt_cuda_conv2d_input_grad_f32
// CHECK:         return
func.func @input_grad_padded(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dx: memref<2x3x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p = memref.alloc() : memref<2x4x6x6xf32>
  linalg.map outs(%p : memref<2x4x6x6xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 1, 1] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x6x6xf32> to memref<2x4x4x4xf32, strided<[144, 36, 6, 1], offset: 7>>
  memref.copy %dy, %pi : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[144, 36, 6, 1], offset: 7>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x6x6xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x4x4xf32>)
  memref.dealloc %p : memref<2x4x6x6xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  return
}
func.func @input_grad_padded_mismatch(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dx: memref<2x3x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p = memref.alloc() : memref<2x4x7x7xf32>
  linalg.map outs(%p : memref<2x4x7x7xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 1, 1] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x7x7xf32> to memref<2x4x4x4xf32, strided<[196, 49, 7, 1], offset: 8>>
  memref.copy %dy, %pi : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[196, 49, 7, 1], offset: 8>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x7x7xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x5x5xf32>)
  memref.dealloc %p : memref<2x4x7x7xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  return
}

// -----

// Not input gradients the library can compute from W and dY: dY is
// overwritten after its padded copy, W after its flip, the filter is not
// flipped, or dY sits in the second row of the spread. Each stays a
// convolution of the buffers it reads, with the flip as a kernel.
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#swap = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @not_input_grad(
// CHECK-NOT:     call @soaprt_cuda_conv2d_input_grad_f32
// CHECK-COUNT-4: call @soaprt_cuda_conv2d_f32
// CHECK-NOT:     call @soaprt_cuda_conv2d_input_grad_f32
// CHECK:         return
func.func @not_input_grad(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dy2: memref<2x4x5x5xf32>, %dx: memref<2x3x6x6xf32>, %dx2: memref<2x3x11x11xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  // dY overwritten.
  %p = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  linalg.fill ins(%one : f32) outs(%dy : memref<2x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x6x6xf32>)
  memref.dealloc %p : memref<2x4x8x8xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  // W overwritten.
  %wf2 = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf2 : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p2 = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p2 : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi2 = memref.subview %p2[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi2 : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  linalg.fill ins(%one : f32) outs(%w : memref<4x3x3x3xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p2, %wf2 : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x6x6xf32>)
  memref.dealloc %p2 : memref<2x4x8x8xf32>
  memref.dealloc %wf2 : memref<3x4x3x3xf32>
  // Channels swapped, not flipped.
  %wf3 = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#swap, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf3 : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p3 = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p3 : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi3 = memref.subview %p3[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi3 : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p3, %wf3 : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x6x6xf32>)
  memref.dealloc %p3 : memref<2x4x8x8xf32>
  memref.dealloc %wf3 : memref<3x4x3x3xf32>
  // dY in the spread's second row and column.
  %wf4 = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf4 : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %e = memref.expand_shape %dy2 [[0], [1], [2, 3], [4, 5]] output_shape [2, 4, 5, 1, 5, 1] : memref<2x4x5x5xf32> into memref<2x4x5x1x5x1xf32>
  %d6 = memref.alloc() : memref<2x4x5x2x5x2xf32>
  linalg.map outs(%d6 : memref<2x4x5x2x5x2xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %di = memref.subview %d6[0, 0, 0, 1, 0, 1] [2, 4, 5, 1, 5, 1] [1, 1, 1, 1, 1, 1] : memref<2x4x5x2x5x2xf32> to memref<2x4x5x1x5x1xf32, strided<[400, 100, 20, 10, 2, 1], offset: 11>>
  memref.copy %e, %di : memref<2x4x5x1x5x1xf32> to memref<2x4x5x1x5x1xf32, strided<[400, 100, 20, 10, 2, 1], offset: 11>>
  %d = memref.collapse_shape %d6 [[0], [1], [2, 3], [4, 5]] : memref<2x4x5x2x5x2xf32> into memref<2x4x10x10xf32>
  %p4 = memref.alloc() : memref<2x4x13x13xf32>
  linalg.map outs(%p4 : memref<2x4x13x13xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi4 = memref.subview %p4[0, 0, 2, 2] [2, 4, 10, 10] [1, 1, 1, 1] : memref<2x4x13x13xf32> to memref<2x4x10x10xf32, strided<[676, 169, 13, 1], offset: 28>>
  memref.copy %d, %pi4 : memref<2x4x10x10xf32> to memref<2x4x10x10xf32, strided<[676, 169, 13, 1], offset: 28>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p4, %wf4 : memref<2x4x13x13xf32>, memref<3x4x3x3xf32>) outs(%dx2 : memref<2x3x11x11xf32>)
  memref.dealloc %p4 : memref<2x4x13x13xf32>
  memref.dealloc %d6 : memref<2x4x5x2x5x2xf32>
  memref.dealloc %wf4 : memref<3x4x3x3xf32>
  return
}

// -----

// The gradient of a padded input read only through the pad's gradient (its
// interior [1, 1]): cuDNN computes just that interior with padding 1 into a
// buffer of its own, which the reader takes and which is freed where the
// padded one was. Read whole as well (the second gradient), dX keeps its
// size and cuDNN no padding.
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_interior(
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<2x3x4x4xf32>, %[[WHOLE:[^:]*]]: memref<2x3x6x6xf32>)
// CHECK:         %[[DX:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x4x4xf32>
// CHECK:         %[[CDX:.*]] = memref.cast %[[DX]] : memref<2x3x4x4xf32> to memref<*xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%{{.*}}, %{{.*}}, %[[CDX]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[TWO]], %{{.*}})
// CHECK-NOT:     memref.subview
// CHECK:         linalg.generic {{.*}} ins(%[[DX]] : memref<2x3x4x4xf32>) outs(%[[OUT]] : memref<2x3x4x4xf32>)
// CHECK:         memref.dealloc %[[DX]] : memref<2x3x4x4xf32>
// CHECK:         %[[DX2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x6x6xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[TWO]], %{{.*}})
// CHECK:         memref.copy %[[DX2]], %[[WHOLE]]
func.func @input_grad_interior(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %out: memref<2x3x4x4xf32>, %whole: memref<2x3x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %dx = memref.alloc() {alignment = 64 : i64} : memref<2x3x6x6xf32>
  %p = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x3x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x6x6xf32>)
  memref.dealloc %p : memref<2x4x8x8xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  %in = memref.subview %dx[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1] : memref<2x3x6x6xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%in : memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>) outs(%out : memref<2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %dx : memref<2x3x6x6xf32>
  // Read whole.
  %wf2 = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf2 : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %dx2 = memref.alloc() {alignment = 64 : i64} : memref<2x3x6x6xf32>
  %p2 = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p2 : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi2 = memref.subview %p2[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi2 : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  linalg.fill ins(%zero : f32) outs(%dx2 : memref<2x3x6x6xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p2, %wf2 : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx2 : memref<2x3x6x6xf32>)
  memref.dealloc %p2 : memref<2x4x8x8xf32>
  memref.dealloc %wf2 : memref<3x4x3x3xf32>
  %in2 = memref.subview %dx2[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1] : memref<2x3x6x6xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%in2 : memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>) outs(%out : memref<2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.copy %dx2, %whole : memref<2x3x6x6xf32> to memref<2x3x6x6xf32>
  memref.dealloc %dx2 : memref<2x3x6x6xf32>
  return
}

// -----

// A padded input that a convolution reads and, in the backward pass, its
// filter gradient (a training step): both calls take the unpadded input
// with padding 1, so the padded buffer is never made; the input's
// deallocation moves after the last reader. When the input is overwritten
// before the filter gradient (the second pair), the padded copy stays and
// both read it without padding.
#x = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#dy = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-LABEL: func.func @padded_shared(
// CHECK:         %[[X:.*]] = memref.alloc() : memref<2x3x8x8xf32>
// CHECK-NOT:     memref.alloc() : memref<2x3x10x10xf32>
// CHECK:         %[[CX:.*]] = memref.cast %[[X]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%[[CX]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]],
// CHECK-NOT:     memref.dealloc %[[X]]
// CHECK:         call @soaprt_cuda_conv2d_filter_grad_f32(%[[CX]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]],
// CHECK-NEXT:    memref.dealloc %[[X]]
// CHECK:         %[[P:.*]] = memref.alloc() : memref<2x3x10x10xf32>
// CHECK:         %[[CP:.*]] = memref.cast %[[P]]
// CHECK:         call @soaprt_cuda_conv2d_f32(%[[CP]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]],
// CHECK:         call @soaprt_cuda_conv2d_filter_grad_f32(%[[CP]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]],
func.func @padded_shared(%w: memref<4x3x3x3xf32>, %y: memref<2x4x8x8xf32>, %dy: memref<2x4x8x8xf32>, %dw: memref<4x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<2x3x8x8xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<2x3x8x8xf32>)
  %pad = memref.alloc() : memref<2x3x10x10xf32>
  linalg.map outs(%pad : memref<2x3x10x10xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %pad[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.dealloc %x : memref<2x3x8x8xf32>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%dw : memref<4x3x3x3xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%pad, %dy : memref<2x3x10x10xf32>, memref<2x4x8x8xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %pad : memref<2x3x10x10xf32>
  // The input overwritten in between.
  %x2 = memref.alloc() : memref<2x3x8x8xf32>
  linalg.fill ins(%one : f32) outs(%x2 : memref<2x3x8x8xf32>)
  %pad2 = memref.alloc() : memref<2x3x10x10xf32>
  linalg.map outs(%pad2 : memref<2x3x10x10xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior2 = memref.subview %pad2[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x2, %interior2 : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%pad2, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  linalg.fill ins(%zero : f32) outs(%x2 : memref<2x3x8x8xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%pad2, %dy : memref<2x3x10x10xf32>, memref<2x4x8x8xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %x2 : memref<2x3x8x8xf32>
  memref.dealloc %pad2 : memref<2x3x10x10xf32>
  return
}

// -----

// dY freed right after its padded copy (its last use before the rewrite):
// the deallocation moves after the backward-data call, which reads dY.
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_dy_freed(
// CHECK:         %[[DY:.*]] = memref.alloc() : memref<2x4x4x4xf32>
// CHECK-NOT:     memref.dealloc %[[DY]]
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(
// CHECK-NEXT:    memref.dealloc %[[DY]]
func.func @input_grad_dy_freed(%w: memref<4x3x3x3xf32>, %dx: memref<2x3x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %dy = memref.alloc() : memref<2x4x4x4xf32>
  linalg.fill ins(%one : f32) outs(%dy : memref<2x4x4x4xf32>)
  %wf = memref.alloc() : memref<3x4x3x3xf32>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf32>) outs(%wf : memref<3x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p = memref.alloc() : memref<2x4x8x8xf32>
  linalg.map outs(%p : memref<2x4x8x8xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 0, 2, 2] [2, 4, 4, 4] [1, 1, 1, 1] : memref<2x4x8x8xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.copy %dy, %pi : memref<2x4x4x4xf32> to memref<2x4x4x4xf32, strided<[256, 64, 8, 1], offset: 18>>
  memref.dealloc %dy : memref<2x4x4x4xf32>
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x8x8xf32>, memref<3x4x3x3xf32>) outs(%dx : memref<2x3x6x6xf32>)
  memref.dealloc %p : memref<2x4x8x8xf32>
  memref.dealloc %wf : memref<3x4x3x3xf32>
  return
}

// -----

// A depthwise convolution: one group per channel; cuDNN's filter view
// gets a unit channel dim (C x 1 x KH x KW).
// CHECK-LABEL: func.func @depthwise(
// CHECK:         %[[W:.*]] = memref.expand_shape %arg1 {{\[}}[0, 1], [2], [3]] output_shape [8, 1, 3, 3] : memref<8x3x3xf32> into memref<8x1x3x3xf32>
// CHECK:         %[[CW:.*]] = memref.cast %[[W]]
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%{{.*}}, %[[CW]], %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %{{.*}}, %{{.*}}, %[[EIGHT]],
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: memref<2x8x16x16xf32>, %w: memref<8x3x3xf32>, %y: memref<2x8x14x14xf32>) {
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x8x16x16xf32>, memref<8x3x3xf32>) outs(%y : memref<2x8x14x14xf32>)
  return
}

// -----

// A grouped convolution (torch-mlir: groups > 1): each group's channels
// and filters merged with it into cuDNN's channel and filter dims.
// CHECK-LABEL: func.func @grouped(
// CHECK:         %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] : memref<2x2x4x9x9xf32> into memref<2x8x9x9xf32>
// CHECK:         %[[W:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] : memref<2x6x4x3x3xf32> into memref<12x4x3x3xf32>
// CHECK:         %[[Y:.*]] = memref.collapse_shape %arg2 {{\[}}[0], [1, 2], [3], [4]] : memref<2x2x6x4x4xf32> into memref<2x12x4x4xf32>
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]], %[[TWO]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TWO]],
func.func @grouped(%x: memref<2x2x4x9x9xf32>, %w: memref<2x6x4x3x3xf32>, %y: memref<2x2x6x4x4xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%x, %w : memref<2x2x4x9x9xf32>, memref<2x6x4x3x3xf32>) outs(%y : memref<2x2x6x4x4xf32>)
  return
}

// -----

// A grouped convolution on a tile of the channels within each group (a
// split reduction): a group and its channels are not one run of memory,
// so it stays a generated kernel.
// CHECK-LABEL: func.func @grouped_channel_tile(
// CHECK-NOT:     call @soaprt_cuda_conv2d_f32
// CHECK:         linalg.conv_2d_ngchw_gfchw
func.func @grouped_channel_tile(%x: memref<2x2x2x9x9xf32, strided<[648, 324, 81, 9, 1]>>, %w: memref<2x6x2x3x3xf32, strided<[216, 36, 9, 3, 1]>>, %y: memref<2x2x6x4x4xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%x, %w : memref<2x2x2x9x9xf32, strided<[648, 324, 81, 9, 1]>>, memref<2x6x2x3x3xf32, strided<[216, 36, 9, 3, 1]>>) outs(%y : memref<2x2x6x4x4xf32>)
  return
}

// -----

// Channels-last (JAX, TensorFlow): X and Y viewed as NCHW by transposes
// (cuDNN takes their strides), the HWCF filter as FCHW (packed by the
// runtime).
// CHECK-LABEL: func.func @nhwc(
// CHECK:         %[[X:.*]] = memref.transpose %arg0 (d0, d1, d2, d3) -> (d0, d3, d1, d2) : memref<2x16x16x4xf32> to memref<2x4x16x16xf32, strided<[1024, 1, 64, 4]>>
// CHECK:         %[[W:.*]] = memref.transpose %arg1 (d0, d1, d2, d3) -> (d3, d2, d0, d1) : memref<3x3x4x8xf32> to memref<8x4x3x3xf32, strided<[1, 8, 96, 32]>>
// CHECK:         %[[Y:.*]] = memref.transpose %arg2 (d0, d1, d2, d3) -> (d0, d3, d1, d2) : memref<2x14x14x8xf32> to memref<2x8x14x14xf32, strided<[1568, 1, 112, 8]>>
// CHECK:         call @soaprt_cuda_conv2d_f32(
func.func @nhwc(%x: memref<2x16x16x4xf32>, %w: memref<3x3x4x8xf32>, %y: memref<2x14x14x8xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x16x16x4xf32>, memref<3x3x4x8xf32>) outs(%y : memref<2x14x14x8xf32>)
  return
}

// -----

// A depthwise filter gradient as soap-training-step writes it (over the
// forward loops (n, oh, ow, c, kh, kw); dW at (c, kh, kw)): cuDNN's
// backward filter in 4 groups, dW viewed as 4 x 1 x 3 x 3.
#xd = affine_map<(n, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#dyd = affine_map<(n, oh, ow, c, kh, kw) -> (n, c, oh, ow)>
#dwd = affine_map<(n, oh, ow, c, kh, kw) -> (c, kh, kw)>
// CHECK-LABEL: func.func @depthwise_filter_grad(
// CHECK:         memref.expand_shape %arg2 {{\[}}[0, 1], [2], [3]] output_shape [4, 1, 3, 3]
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK:         call @soaprt_cuda_conv2d_filter_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FOUR]],
// CHECK-NOT:     linalg.generic
func.func @depthwise_filter_grad(%x: memref<2x4x9x9xf32>, %dy: memref<2x4x4x4xf32>, %dw: memref<4x3x3xf32>) {
  linalg.generic {indexing_maps = [#xd, #dyd, #dwd], iterator_types = ["reduction", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<2x4x9x9xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A rank's part of the gradient: dY holds both images, the spread dY is
// cut to the second image's first 5 rows and columns (a data-parallel
// rank's input). The call reads that image of dY (a view at [1, 0, 0, 0])
// at stride 2 and accumulates (flags 0). (The same lowering as the CPU's:
// LibraryCallLowering.)
#flip1 = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_grad_rank_part(
// CHECK-SAME:    %[[W:.*]]: memref<6x4x1x1xf32>, %[[DY:.*]]: memref<2x6x3x3xf32>, %[[DX:.*]]: memref<1x4x5x5xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[PART:.*]] = memref.subview %[[DY]][1, 0, 0, 0] [1, 6, 3, 3] [1, 1, 1, 1]
// CHECK-NOT:     linalg.
// CHECK-DAG:     %[[CDY:.*]] = memref.cast %[[PART]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cuda_conv2d_input_grad_f32(%{{.*}}, %[[CDY]], %{{.*}}, %[[TWO]], %[[TWO]], %{{.*}}, %{{.*}}, %[[ZERO]], %[[ZERO]], %{{.*}}, %[[ZERO]], %{{.*}})
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.alloc
// CHECK:         return
func.func @input_grad_rank_part(%w: memref<6x4x1x1xf32>, %dy: memref<2x6x3x3xf32>, %dx: memref<1x4x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = memref.expand_shape %dy [[0], [1], [2, 3], [4, 5]] output_shape [2, 6, 3, 1, 3, 1] : memref<2x6x3x3xf32> into memref<2x6x3x1x3x1xf32>
  %d6 = memref.alloc() : memref<2x6x3x2x3x2xf32>
  linalg.map outs(%d6 : memref<2x6x3x2x3x2xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %di = memref.subview %d6[0, 0, 0, 0, 0, 0] [2, 6, 3, 1, 3, 1] [1, 1, 1, 1, 1, 1] : memref<2x6x3x2x3x2xf32> to memref<2x6x3x1x3x1xf32, strided<[216, 36, 12, 6, 2, 1]>>
  memref.copy %e, %di : memref<2x6x3x1x3x1xf32> to memref<2x6x3x1x3x1xf32, strided<[216, 36, 12, 6, 2, 1]>>
  %d = memref.collapse_shape %d6 [[0], [1], [2, 3], [4, 5]] : memref<2x6x3x2x3x2xf32> into memref<2x6x6x6xf32>
  %crop = memref.subview %d[1, 0, 0, 0] [1, 6, 5, 5] [1, 1, 1, 1] : memref<2x6x6x6xf32> to memref<1x6x5x5xf32, strided<[216, 36, 6, 1], offset: 216>>
  %wf = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<6x4x1x1xf32>) outs(%wf : memref<4x6x1x1xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%crop, %wf : memref<1x6x5x5xf32, strided<[216, 36, 6, 1], offset: 216>>, memref<4x6x1x1xf32>) outs(%dx : memref<1x4x5x5xf32>)
  memref.dealloc %wf : memref<4x6x1x1xf32>
  memref.dealloc %d6 : memref<2x6x3x2x3x2xf32>
  return
}
