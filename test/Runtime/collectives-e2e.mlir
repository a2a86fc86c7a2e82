// A hand-written SPMD program on two devices for libsoaprt's reduce-scatter
// and all-gather (CPU target, MPI). Each rank fills a 4x8 tensor with
// (rank + 1) * (10 * row + column). It reduce-scatters rows [0, 4) x
// columns [2, 6) along the columns over devices [1, 0] (chunk 0, columns
// 2-3, for device 1; chunk 1, columns 4-5, for device 0), then all-gathers
// the same region the same way: together an all-reduce, so rank 0's region
// holds 3 * (10 * row + column) and the rest its own values. A second tensor
// all-gathers rows [0, 4) x columns [0, 2) along the rows over [0, 1]:
// rank 0 keeps rows 0-1 and gets rank 1's rows 2-3 (twice its values).
// REQUIRES: mpi
// RUN: soap-opt %s --soap-lower-to-cpu | mlir-translate --mlir-to-llvmir > %t.ll
// RUN: llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %mpicc %t.o %soap_lib_dir/libsoaprt_main.a %soap_lib_dir/libsoaprt.a -lm -o %t.exe
// RUN: rm -rf %t.out && %mpirun -np 2 %t.exe --output-dir=%t.out
// RUN: soap-npy-compare --print %t.out/result0.npy | FileCheck %s
// RUN: soap-npy-compare --print %t.out/result1.npy | FileCheck %s --check-prefix=GATHER

// CHECK:      <f4 4x8
// CHECK-NEXT: 0 1 6 9 12 15 6 7
// CHECK-NEXT: 10 11 36 39 42 45 16 17
// CHECK-NEXT: 20 21 66 69 72 75 26 27
// CHECK-NEXT: 30 31 96 99 102 105 36 37

// GATHER:      <f4 4x8
// GATHER-NEXT: 0 1 2 3 4 5 6 7
// GATHER-NEXT: 10 11 12 13 14 15 16 17
// GATHER-NEXT: 40 42 22 23 24 25 26 27
// GATHER-NEXT: 60 62 32 33 34 35 36 37

#id = affine_map<(i, j) -> (i, j)>
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @collectives() -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %r = soap.rank : index
    %ri = arith.index_cast %r : index to i64
    %one = arith.constant 1 : i64
    %v = arith.addi %ri, %one : i64
    %scale = arith.sitofp %v : i64 to f32
    %e = tensor.empty() : tensor<4x8xf32>
    %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %c10 = arith.constant 10 : index
      %i10 = arith.muli %i, %c10 : index
      %k = arith.addi %i10, %j : index
      %ki = arith.index_cast %k : index to i64
      %kf = arith.sitofp %ki : i64 to f32
      %x = arith.mulf %kf, %scale : f32
      linalg.yield %x : f32
    } -> tensor<4x8xf32>
    %s = soap.reduce_scatter %t [0, 2] [4, 4] sum dim 1 devices [1, 0] : tensor<4x8xf32>
    %g = soap.all_gather %s [0, 2] [4, 4] dim 1 devices [1, 0] : tensor<4x8xf32>
    %h = soap.all_gather %t [0, 0] [4, 2] dim 0 devices [0, 1] : tensor<4x8xf32>
    return %g, %h : tensor<4x8xf32>, tensor<4x8xf32>
  }
}
