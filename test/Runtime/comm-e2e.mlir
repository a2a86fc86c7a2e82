// A hand-written SPMD program on two devices: each rank fills a tensor with
// rank + 1, rank 1 sends rows [0, 2) x columns [4, 8) to rank 0, then both
// sum row 3 with an all_reduce. Rank 0's result shows exactly which regions
// moved.
// REQUIRES: mpi
// RUN: soap-opt %s --soap-lower-to-cpu | mlir-translate --mlir-to-llvmir > %t.ll
// RUN: llc -O2 -relocation-model=pic -filetype=obj %t.ll -o %t.o
// RUN: %mpicc %t.o %soap_lib_dir/libsoaprt_main.a %soap_lib_dir/libsoaprt.a -lm -o %t.exe
// RUN: rm -rf %t.out && %mpirun -np 2 %t.exe --output-dir=%t.out | FileCheck %s --check-prefix=OUT
// RUN: soap-npy-compare --print %t.out/result0.npy | FileCheck %s
// RUN: soap-npy-compare --print %t.out/result1.npy | FileCheck %s --check-prefix=INT
// RUN: not %mpirun -np 3 %t.exe 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not %t.exe 2>&1 | FileCheck %s --check-prefix=RANKS1

// OUT: soaprt: wrote {{.*}}result0.npy (<f4 (4, 8))
// OUT-NEXT: soaprt: wrote {{.*}}result1.npy (<i8 (2, 3))

// CHECK:      <f4 4x8
// CHECK-NEXT: 1 1 1 1 2 2 2 2
// CHECK-NEXT: 1 1 1 1 2 2 2 2
// CHECK-NEXT: 1 1 1 1 1 1 1 1
// CHECK-NEXT: 3 3 3 3 3 3 3 3

// INT:      <i8 2x3
// INT-NEXT: 1 1 1
// INT-NEXT: 1 0 0

// RANKS-DAG: soaprt: error: [rank 0] this program was partitioned for 2 devices but runs on 3 ranks
// RANKS-DAG: soaprt: error: [rank 2] this program was partitioned for 2 devices but runs on 3 ranks
// RANKS1: soaprt: error: this program was partitioned for 2 devices but runs on 1 ranks: run it as 'mpirun -np 2

module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 1.0, memory_gbps = 1.0, memory_gib = 1.0, intra_gbps = 1.0, intra_latency_us = 1.0, inter_gbps = 1.0, inter_latency_us = 1.0>} {
  func.func @comm() -> (tensor<4x8xf32>, tensor<2x3xi64>) {
    %r = soap.rank : index
    %ri = arith.index_cast %r : index to i64
    %one = arith.constant 1 : i64
    %v = arith.addi %ri, %one : i64
    %f = arith.sitofp %v : i64 to f32
    %e = tensor.empty() : tensor<4x8xf32>
    %t = linalg.fill ins(%f : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %t1 = soap.transfer %t [0, 4] [2, 4] from 1 to 0 : tensor<4x8xf32>
    %t2 = soap.all_reduce %t1 [3, 0] [1, 8] sum devices [0, 1] : tensor<4x8xf32>
    // i64: max over both ranks of (rank) in row 0 -> 1; row 1 keeps rank 0's 0,
    // except column 0 which a transfer brings from rank 1.
    %ei = tensor.empty() : tensor<2x3xi64>
    %ti = linalg.fill ins(%ri : i64) outs(%ei : tensor<2x3xi64>) -> tensor<2x3xi64>
    %ti1 = soap.all_reduce %ti [0, 0] [1, 3] max devices [0, 1] : tensor<2x3xi64>
    %ti2 = soap.transfer %ti1 [1, 0] [1, 1] from 1 to 0 : tensor<2x3xi64>
    return %t2, %ti2 : tensor<4x8xf32>, tensor<2x3xi64>
  }
}
