// RUN: soap-opt %s --split-input-file --soap-cuda-fuse-elementwise | FileCheck %s --check-prefix=FUSE
// RUN: soap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(soap-cuda-copies))" | FileCheck %s --check-prefix=COPY

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// Bias add and ReLU after a matmul: one elementwise kernel; the matmul keeps
// its form (cuBLAS) and nothing is fused into it.
// FUSE-LABEL: func.func @linear_relu(
// FUSE:         %[[MM:.*]] = linalg.matmul
// FUSE:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
// FUSE:           arith.addf
// FUSE:           arith.maximumf
// FUSE-NOT:     linalg.generic
// FUSE:         return %[[R]]
func.func @linear_relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %relu : tensor<4x16xf32>
}

// -----

// An elementwise producer with two elementwise readers: fused into the
// first, which yields its value too, and that into the second (its one
// reader now): one kernel, exp computed once.
// FUSE-LABEL: func.func @shared_producer(
// FUSE:         %[[F:.*]]:2 = linalg.generic {{.*}} ins(%arg0 : tensor<16xf32>) outs(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>)
// FUSE:           %[[EXP:.*]] = math.exp
// FUSE-NOT:       math.exp
// FUSE:           %[[NEG:.*]] = arith.negf %[[EXP]]
// FUSE:           %[[SQ:.*]] = arith.mulf %[[EXP]], %[[EXP]]
// FUSE:           linalg.yield %[[NEG]], %[[SQ]]
// FUSE-NOT:     linalg.generic
// FUSE:         return %[[F]]#0, %[[F]]#1
func.func @shared_producer(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%exp : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%exp : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %neg, %sq : tensor<16xf32>, tensor<16xf32>
}

// -----

// A producer read by an elementwise op and then by a reduction: fused into
// the elementwise op, which yields the value the reduction reads.
// FUSE-LABEL: func.func @value_for_later_reader(
// FUSE:         %[[F:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x16xf32>)
// FUSE:           math.exp
// FUSE:           arith.negf
// FUSE:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[F]]#0 : tensor<4x16xf32>)
// FUSE:         return %[[F]]#1, %[[SUM]]
#id = affine_map<(i, j) -> (i, j)>
func.func @value_for_later_reader(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %neg, %sum : tensor<4x16xf32>, tensor<4xf32>
}

// -----

// A producer read by a reduction before its elementwise reader: a fused op
// in the reader's place would come after the reduction, so the producer
// stays, its own kernel (and is not computed twice).
// FUSE-LABEL: func.func @reader_before_consumer(
// FUSE:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x16xf32>)
// FUSE:           math.exp
// FUSE:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<4x16xf32>)
// FUSE:         %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<4x16xf32>)
// FUSE-NOT:       math.exp
// FUSE:         return %[[NEG]], %[[SUM]]
#id = affine_map<(i, j) -> (i, j)>
func.func @reader_before_consumer(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %neg, %sum : tensor<4x16xf32>, tensor<4xf32>
}

// -----

// Copies between device buffers run as kernels: memref.copy -> linalg.copy.
// COPY-LABEL: func.func @copy(
// COPY-SAME:    %[[A:.*]]: memref<4x8xf32, strided<[16, 1]>>, %[[B:.*]]: memref<4x8xf32>)
// COPY:         linalg.copy ins(%[[A]] : memref<4x8xf32, strided<[16, 1]>>) outs(%[[B]] : memref<4x8xf32>)
// COPY-NOT:     memref.copy
func.func @copy(%a: memref<4x8xf32, strided<[16, 1]>>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
  return
}
