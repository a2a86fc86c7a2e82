// RUN: soap-opt %s --soap-cpu-library-calls --cse --split-input-file | FileCheck %s

// soap-cpu-library-calls shares with soap-cuda-library-calls what it does
// to the copies that only feed convolutions (LibraryCallLowering): a
// zero-padded input becomes the call's padding, and a convolution's input
// gradient as soap-training-step writes it becomes one
// soaprt_cpu_conv2d_input_grad call on W and dY (GEMM + col2im), without
// the flipped filter, the spread dY or its padded copy.

// A zero-padded input (alloc, zero fill, copy into the interior) read only
// by the convolution: the call pads by itself (2 x 1), the padded buffer
// goes.
// CHECK-LABEL: func.func @padded_conv(
// CHECK-SAME:    %[[X:.*]]: memref<2x3x8x8xf32>,
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.map
// CHECK-NOT:     memref.copy
// CHECK:         %[[CX:.*]] = memref.cast %[[X]] : memref<2x3x8x8xf32> to memref<*xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cpu_conv2d_f32(%[[CX]], %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ONE]], %{{.*}})
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

// The input gradient of a 3 x 3 stride-2 convolution in f64: dY spread by
// the strides, padded by the window's span less one, convolved at stride 1
// with the flipped filter. It becomes the f64 input-gradient call (stride
// 2, no padding); the zero fill of dX is the overwrite flag (1).
#flip3 = affine_map<(d0, d1, d2, d3) -> (d1, d0, 2 - d2, 2 - d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   func.func private @soaprt_cpu_conv2d_input_grad_f64(memref<*xf64>, memref<*xf64>, memref<*xf64>, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @input_grad_strided(
// CHECK-SAME:    %[[W:.*]]: memref<4x3x3x3xf64>, %[[DY:.*]]: memref<2x4x5x5xf64>, %[[DX:.*]]: memref<2x3x11x11xf64>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.
// CHECK-DAG:     %[[CW:.*]] = memref.cast %[[W]]
// CHECK-DAG:     %[[CDY:.*]] = memref.cast %[[DY]]
// CHECK-DAG:     %[[CDX:.*]] = memref.cast %[[DX]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_cpu_conv2d_input_grad_f64(%[[CW]], %[[CDY]], %[[CDX]], %[[TWO]], %[[TWO]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[ONE]], %{{.*}})
// CHECK-NOT:     memref.
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @input_grad_strided(%w: memref<4x3x3x3xf64>, %dy: memref<2x4x5x5xf64>, %dx: memref<2x3x11x11xf64>) {
  %zero = arith.constant 0.0 : f64
  %wf = memref.alloc() : memref<3x4x3x3xf64>
  linalg.generic {indexing_maps = [#flip3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<4x3x3x3xf64>) outs(%wf : memref<3x4x3x3xf64>) {
  ^bb0(%a: f64, %b: f64):
    linalg.yield %a : f64
  }
  %e = memref.expand_shape %dy [[0], [1], [2, 3], [4, 5]] output_shape [2, 4, 5, 1, 5, 1] : memref<2x4x5x5xf64> into memref<2x4x5x1x5x1xf64>
  %d6 = memref.alloc() : memref<2x4x5x2x5x2xf64>
  linalg.map outs(%d6 : memref<2x4x5x2x5x2xf64>)
    (%init: f64) {
      linalg.yield %zero : f64
    }
  %di = memref.subview %d6[0, 0, 0, 0, 0, 0] [2, 4, 5, 1, 5, 1] [1, 1, 1, 1, 1, 1] : memref<2x4x5x2x5x2xf64> to memref<2x4x5x1x5x1xf64, strided<[400, 100, 20, 10, 2, 1]>>
  memref.copy %e, %di : memref<2x4x5x1x5x1xf64> to memref<2x4x5x1x5x1xf64, strided<[400, 100, 20, 10, 2, 1]>>
  %d = memref.collapse_shape %d6 [[0], [1], [2, 3], [4, 5]] : memref<2x4x5x2x5x2xf64> into memref<2x4x10x10xf64>
  %p = memref.alloc() : memref<2x4x13x13xf64>
  linalg.map outs(%p : memref<2x4x13x13xf64>)
    (%init: f64) {
      linalg.yield %zero : f64
    }
  %pi = memref.subview %p[0, 0, 2, 2] [2, 4, 10, 10] [1, 1, 1, 1] : memref<2x4x13x13xf64> to memref<2x4x10x10xf64, strided<[676, 169, 13, 1], offset: 28>>
  memref.copy %d, %pi : memref<2x4x10x10xf64> to memref<2x4x10x10xf64, strided<[676, 169, 13, 1], offset: 28>>
  memref.dealloc %d6 : memref<2x4x5x2x5x2xf64>
  linalg.fill ins(%zero : f64) outs(%dx : memref<2x3x11x11xf64>)
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<2x4x13x13xf64>, memref<3x4x3x3xf64>) outs(%dx : memref<2x3x11x11xf64>)
  memref.dealloc %p : memref<2x4x13x13xf64>
  memref.dealloc %wf : memref<3x4x3x3xf64>
  return
}

// -----

// A rank's part of the gradient: dY holds both images, the spread dY is
// cut to the second image's first 5 rows and columns (a data-parallel
// rank's input). The call reads that image of dY (a view at [1, 0, 0, 0])
// at stride 2 and accumulates (flags 0).
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
// CHECK:         call @soaprt_cpu_conv2d_input_grad_f32(%{{.*}}, %[[CDY]], %{{.*}}, %[[TWO]], %[[TWO]], %{{.*}}, %{{.*}}, %[[ZERO]], %[[ZERO]], %{{.*}}, %[[ZERO]], %{{.*}})
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

// -----

// A crop that starts inside the spread rows (offset 1) is no rank's part:
// the gradient stays a stride-1 convolution (an OpenBLAS call over the
// spread dY).
#flip1 = affine_map<(d0, d1, d2, d3) -> (d1, d0, -d2, -d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @not_rank_part(
// CHECK-NOT:     call @soaprt_cpu_conv2d_input_grad_f32
// CHECK:         linalg.generic
// CHECK:         call @soaprt_cpu_conv2d_f32(
// CHECK-NOT:     call @soaprt_cpu_conv2d_input_grad_f32
// CHECK:         return
func.func @not_rank_part(%w: memref<6x4x1x1xf32>, %dy: memref<2x6x3x3xf32>, %dx: memref<1x4x5x5xf32>) {
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
  %crop = memref.subview %d[1, 0, 1, 0] [1, 6, 5, 5] [1, 1, 1, 1] : memref<2x6x6x6xf32> to memref<1x6x5x5xf32, strided<[216, 36, 6, 1], offset: 222>>
  %wf = memref.alloc() : memref<4x6x1x1xf32>
  linalg.generic {indexing_maps = [#flip1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<6x4x1x1xf32>) outs(%wf : memref<4x6x1x1xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%crop, %wf : memref<1x6x5x5xf32, strided<[216, 36, 6, 1], offset: 222>>, memref<4x6x1x1xf32>) outs(%dx : memref<1x4x5x5xf32>)
  memref.dealloc %wf : memref<4x6x1x1xf32>
  memref.dealloc %d6 : memref<2x6x3x2x3x2xf32>
  return
}

// -----

// A depthwise convolution's input gradient (NHWC, one channel and one
// filter per group; the group dim is the channels' own, so the forward
// filter's view has one channel per filter) is an input-gradient call with
// groups = 4 (the runtime's direct loops).
#flipd = affine_map<(d0, d1, d2) -> (2 - d0, 2 - d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @depthwise_input_grad(
// CHECK-NOT:     linalg.
// CHECK-NOT:     memref.alloc
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK:         call @soaprt_cpu_conv2d_input_grad_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[ONE]], %[[ONE]], %[[ONE]], %{{.*}}, %{{.*}}, %[[FOUR]], %{{.*}}, %{{.*}})
// CHECK-NOT:     linalg.
// CHECK:         return
func.func @depthwise_input_grad(%w: memref<3x3x4xf32>, %dy: memref<1x3x3x4xf32>, %dx: memref<1x5x5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %wf = memref.alloc() : memref<3x3x4xf32>
  linalg.generic {indexing_maps = [#flipd, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : memref<3x3x4xf32>) outs(%wf : memref<3x3x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %p = memref.alloc() : memref<1x7x7x4xf32>
  linalg.map outs(%p : memref<1x7x7x4xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %pi = memref.subview %p[0, 2, 2, 0] [1, 3, 3, 4] [1, 1, 1, 1] : memref<1x7x7x4xf32> to memref<1x3x3x4xf32, strided<[196, 28, 4, 1], offset: 64>>
  memref.copy %dy, %pi : memref<1x3x3x4xf32> to memref<1x3x3x4xf32, strided<[196, 28, 4, 1], offset: 64>>
  linalg.depthwise_conv_2d_nhwc_hwc {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
    ins(%p, %wf : memref<1x7x7x4xf32>, memref<3x3x4xf32>) outs(%dx : memref<1x5x5x4xf32>)
  memref.dealloc %p : memref<1x7x7x4xf32>
  memref.dealloc %wf : memref<3x3x4xf32>
  return
}
