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

// Several loops of one kind are one GEMM dim where each operand's layout
// lets them be collapsed: attention's batch x heads (two batch loops, as
// soap-split-merged-batch-loops leaves a batch matmul), then two M loops
// (a 4-D contraction: tokens of a linear layer).
// CHECK-LABEL: func.func @grouped(
// CHECK-SAME:    %[[Q:.*]]: memref<2x3x4x8xf32>, %[[K:.*]]: memref<2x3x8x5xf32>, %[[S:.*]]: memref<2x3x4x5xf32>
// CHECK-DAG:     %[[QC:.*]] = memref.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : memref<2x3x4x8xf32> into memref<6x4x8xf32>
// CHECK-DAG:     %[[KC:.*]] = memref.collapse_shape %[[K]] {{\[}}[0, 1], [2], [3]] : memref<2x3x8x5xf32> into memref<6x8x5xf32>
// CHECK-DAG:     %[[SC:.*]] = memref.collapse_shape %[[S]] {{\[}}[0, 1], [2], [3]] : memref<2x3x4x5xf32> into memref<6x4x5xf32>
// CHECK-DAG:     %[[CQ:.*]] = memref.cast %[[QC]]
// CHECK-DAG:     %[[CK:.*]] = memref.cast %[[KC]]
// CHECK-DAG:     %[[CS:.*]] = memref.cast %[[SC]]
// CHECK:         call @soaprt_cpu_matmul_f32(%[[CQ]], %[[CK]], %[[CS]],
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : memref<2x4x8xf32> into memref<8x8xf32>
// CHECK:         memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : memref<2x4x16xf32> into memref<8x16xf32>
// CHECK:         call @soaprt_cpu_matmul_f32(
// CHECK-NOT:     linalg.generic
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, d, j)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#a2 = affine_map<(m0, m1, n, k) -> (m0, m1, k)>
#b2 = affine_map<(m0, m1, n, k) -> (k, n)>
#c2 = affine_map<(m0, m1, n, k) -> (m0, m1, n)>
func.func @grouped(%q: memref<2x3x4x8xf32>, %k: memref<2x3x8x5xf32>, %s: memref<2x3x4x5xf32>,
                   %a3: memref<2x4x8xf32>, %b3: memref<8x16xf32>, %c3: memref<2x4x16xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x4x8xf32>, memref<2x3x8x5xf32>) outs(%s : memref<2x3x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %z, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a3, %b3 : memref<2x4x8xf32>, memref<8x16xf32>) outs(%c3 : memref<2x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %z, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// What stays loops: mixed types (f32 x bf16), bf16, integers, two M loops
// whose layout does not collapse (a tile of a wider buffer: rows 64 apart,
// not 4 x 8), and ops on tensors (before bufferization).
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     call @soaprt_cpu_matmul
// CHECK-NOT:     memref.collapse_shape
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
                 %a3: memref<2x4x8xf32, strided<[64, 8, 1]>>, %b3: memref<8x16xf32>, %c3: memref<2x4x16xf32>,
                 %ta: tensor<4x8xf32>, %tb: tensor<8x16xf32>, %tc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  linalg.matmul ins(%a, %bb : memref<4x8xf32>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%ab, %bb : memref<4x8xbf16>, memref<8x16xbf16>) outs(%cb : memref<4x16xbf16>)
  linalg.matmul ins(%ai, %bi : memref<4x8xi32>, memref<8x16xi32>) outs(%ci : memref<4x16xi32>)
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a3, %b3 : memref<2x4x8xf32, strided<[64, 8, 1]>>, memref<8x16xf32>) outs(%c3 : memref<2x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<4x8xf32>, tensor<8x16xf32>) outs(%tc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A convolution becomes an im2col + OpenBLAS call with its strides,
// dilations, no padding (a padded input is its own buffer on the CPU) and
// one group; f64 is the f64 variant.
// CHECK-DAG:   func.func private @soaprt_cpu_conv2d_f64(memref<*xf64>, memref<*xf64>, memref<*xf64>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @conv(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : i64
// CHECK:         call @soaprt_cpu_conv2d_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[C2]], %[[C2]], %[[C1]], %[[C3]], %[[C0]], %[[C0]], %[[C1]], %[[C0]], %{{.*}})
// CHECK-NEXT:    return
func.func @conv(%x: memref<2x3x17x17xf64>, %w: memref<8x3x3x3xf64>, %y: memref<2x8x8x6xf64>) {
  linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<[1, 3]> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x17x17xf64>, memref<8x3x3x3xf64>) outs(%y : memref<2x8x8x6xf64>)
  return
}

// -----

// Channels-last operands are viewed in NCHW / FCHW order (memref.transpose);
// a grouped convolution (2 groups of 4 channels and 4 filters) has the groups
// in the channel dims, its filter viewed as 8 x 4 x 3 x 3.
// CHECK-LABEL: func.func @layouts(
// CHECK:         memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d3, d1, d2)
// CHECK:         call @soaprt_cpu_conv2d_f32(
// CHECK:         memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] : memref<2x4x4x3x3xf32> into memref<8x4x3x3xf32>
// CHECK:         %[[G:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cpu_conv2d_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %{{.*}}, %{{.*}})
// CHECK-NEXT:    return
func.func @layouts(%x: memref<2x9x9x3xf32>, %w: memref<3x3x3x8xf32>, %y: memref<2x7x7x8xf32>,
                   %gx: memref<2x2x4x16x16xf32>, %gw: memref<2x4x4x3x3xf32>, %gy: memref<2x2x4x14x14xf32>) {
  linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x9x9x3xf32>, memref<3x3x3x8xf32>) outs(%y : memref<2x7x7x8xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%gx, %gw : memref<2x2x4x16x16xf32>, memref<2x4x4x3x3xf32>) outs(%gy : memref<2x2x4x14x14xf32>)
  return
}

// -----

// The filter gradient soap-training-step writes (a linalg.generic over the
// forward loops) is the filter-gradient call (X, dY, dW), strides 2x2; the
// zero fill before it is the overwrite flag.
#x = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#dy = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-DAG:   func.func private @soaprt_cpu_conv2d_filter_grad_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @filter_grad(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x9x9xf32>, %[[DY:.*]]: memref<2x4x4x4xf32>, %[[DW:.*]]: memref<4x3x3x3xf32>)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[CX:.*]] = memref.cast %[[X]]
// CHECK-DAG:     %[[CDY:.*]] = memref.cast %[[DY]]
// CHECK-DAG:     %[[CDW:.*]] = memref.cast %[[DW]]
// CHECK-NOT:     linalg.fill
// CHECK:         call @soaprt_cpu_conv2d_filter_grad_f32(%[[CX]], %[[CDY]], %[[CDW]], %[[TWO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[ONE]], %{{.*}})
// CHECK-NEXT:    return
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

// What stays loops: a pooling, a convolution of mixed types, and a generic
// that reads the window one row lower (no filter gradient). A depthwise
// convolution is a call (the runtime's direct loops, not GEMMs).
// CHECK-DAG:   func.func private @soaprt_cpu_conv2d_f32(
#x2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh + 1, ow * 2 + kw)>
#dy2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw2 = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-LABEL: func.func @conv_stays(
// CHECK-NOT:     call @soaprt_cpu_conv2d
// CHECK:         linalg.pooling_nchw_max
// CHECK-NOT:     linalg.depthwise_conv_2d_nchw_chw
// CHECK:         call @soaprt_cpu_conv2d_f32(
// CHECK-NOT:     call @soaprt_cpu_conv2d
// CHECK:         linalg.conv_2d_nchw_fchw
// CHECK:         linalg.generic
// CHECK-NOT:     call @soaprt_cpu_conv2d
func.func @conv_stays(%x: memref<2x3x9x9xf32>, %k: memref<3x3xf32>, %p: memref<2x3x7x7xf32>,
                      %wh: memref<8x3x3x3xbf16>, %y: memref<2x8x7x7xf32>,
                      %dy: memref<2x4x3x4xf32>, %dw: memref<4x3x3x3xf32>,
                      %dx: memref<2x8x16x16xf32>, %ddw: memref<8x3x3xf32>, %ddy: memref<2x8x14x14xf32>) {
  linalg.pooling_nchw_max {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %k : memref<2x3x9x9xf32>, memref<3x3xf32>) outs(%p : memref<2x3x7x7xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%dx, %ddw : memref<2x8x16x16xf32>, memref<8x3x3xf32>) outs(%ddy : memref<2x8x14x14xf32>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%x, %wh : memref<2x3x9x9xf32>, memref<8x3x3x3xbf16>) outs(%y : memref<2x8x7x7xf32>)
  linalg.generic {indexing_maps = [#x2, #dy2, #dw2], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<2x3x9x9xf32>, memref<2x4x3x4xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
