// RUN: soap-opt %s --soap-dump-graph -o /dev/null | FileCheck %s
// RUN: soap-opt %s --soap-dump-graph=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: soap-opt %s --soap-dump-graph=dot -o /dev/null | FileCheck %s --check-prefix=DOT
// RUN: soap-opt %s --soap-dump-graph=group=false -o /dev/null | FileCheck %s --check-prefix=UNGROUPED

// A conv block (pad, conv, per-channel scale, relu, residual add) and a
// classifier (matmul + bias). Fills, pads and elementwise ops join the layer
// they belong to; the graph is exact. The scale's and the ReLU's inputs
// (4096 bytes each) stay inside the conv's layer for the backward pass; the
// bias add's does not (its derivative is a constant).

// CHECK-LABEL: graph @block: 4 nodes, 9 tensors, 4392 parameters in 3 tensors, 94.2k forward FLOPs
// CHECK-NEXT: node 0 "conv" linalg.conv_2d_nchw_fchw loops=[S:2, P:8, A:8, A:8, R:4, R:3, R:3] flops=75.8k bytes=7.33k
// CHECK-NEXT:   in arg0 [2x4x8x8] input (d0, d4, d2 + d5 - 1, d3 + d6 - 1)
// CHECK-NEXT:   in arg1 [8x4x3x3] param (d1, d4, d5, d6)
// CHECK-NEXT:   in arg2 [8] param (d1)
// CHECK-NEXT:   out conv [2x8x8x8] result (d0, d1, d2, d3)
// CHECK-NEXT:   group linalg.conv_2d_nchw_fchw tensor.pad linalg.fill linalg.generic linalg.generic
// CHECK-NEXT:   saved inside for the backward pass: 8192 bytes
// CHECK-NEXT: node 1 "add" linalg.generic loops=[S:2, A:8, A:8, A:8] flops=2.05k bytes=12.3k
// CHECK-NEXT:   in conv [2x8x8x8] from 0 result (d0, d1, d2, d3)
// CHECK-NEXT:   in arg4 [2x8x8x8] input (d0, d1, d2, d3)
// CHECK-NEXT:   out add [2x8x8x8] (d0, d1, d2, d3)
// CHECK-NEXT: node 2 "collapsed" tensor.collapse_shape loops=[S:2, A:8, A:8, A:8] flops=0 bytes=8.19k
// CHECK-NEXT:   in add [2x8x8x8] from 1 (d0, d1, d2, d3)
// CHECK-NEXT:   out collapsed [2x512] (d0, d1*64 + d2*8 + d3)
// CHECK-NEXT: node 3 "fc" linalg.matmul loops=[S:2, P:8, R:512] flops=16.4k bytes=20.5k
// CHECK-NEXT:   in collapsed [2x512] from 2 (d0, d2)
// CHECK-NEXT:   in arg3 [512x8] param (d2, d1)
// CHECK-NEXT:   out fc [2x8] result (d0, d1)
// CHECK-NEXT:   group linalg.matmul linalg.fill
// CHECK-NOT: node

// JSON: {
// JSON: "name": "block"
// JSON: "loops": "SPAARRR"
// JSON: "saved_bytes": 8192
// JSON: "kind": "linalg.matmul"

// DOT: digraph "block" {
// DOT-DAG: n0 -> n1
// DOT-DAG: t{{[0-9]+}} -> n0

// UNGROUPED: graph @block: 9 nodes

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @block(%x: tensor<2x4x8x8xf32>, %w: tensor<8x4x3x3xf32> {soap.parameter},
                 %scale: tensor<8xf32> {soap.parameter}, %fcw: tensor<512x8xf32> {soap.parameter},
                 %skip: tensor<2x8x8x8xf32>) -> (tensor<2x8xf32>, tensor<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x8x8xf32> to tensor<2x4x10x10xf32>
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%padded, %w : tensor<2x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32> loc("conv")
  %s = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%c, %scale : tensor<2x8x8x8xf32>, tensor<8xf32>) outs(%c : tensor<2x8x8x8xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %m = arith.mulf %in, %sc : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%s : tensor<2x8x8x8xf32>) outs(%e : tensor<2x8x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8x8xf32>
  // The relu output is used twice (by the add and the return), so the add
  // cannot join the conv.
  %a = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%r, %skip : tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) outs(%e : tensor<2x8x8x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.addf %in, %in2 : f32
    %n = arith.addf %m, %in : f32
    linalg.yield %n : f32
  } -> tensor<2x8x8x8xf32> loc("add")
  %flat = tensor.collapse_shape %a [[0], [1, 2, 3]] : tensor<2x8x8x8xf32> into tensor<2x512xf32> loc("collapsed")
  %e2 = tensor.empty() : tensor<2x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = linalg.matmul ins(%flat, %fcw : tensor<2x512xf32>, tensor<512x8xf32>) outs(%f2 : tensor<2x8xf32>) -> tensor<2x8xf32> loc("fc")
  return %y, %r : tensor<2x8xf32>, tensor<2x8x8x8xf32>
}
