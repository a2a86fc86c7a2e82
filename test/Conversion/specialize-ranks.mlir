// RUN: soap-opt %s -split-input-file --soap-specialize-ranks -verify-diagnostics | FileCheck %s

// Two devices: a tile on each, a transfer from 1 to 0, an all-reduce over
// both. Each rank's clone keeps its own tile and the communication it takes
// part in; the entry calls its rank's clone.
// CHECK-LABEL: func.func @spmd(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>
// CHECK:         %[[RANK:.*]] = soap.rank : index
// CHECK:         %[[R:.*]] = scf.index_switch %[[RANK]] -> tensor<4xf32>
// CHECK:         case 1 {
// CHECK:           %[[R1:.*]] = func.call @spmd__rank1(%[[X]])
// CHECK:           scf.yield %[[R1]]
// CHECK:         default {
// CHECK:           %[[R0:.*]] = func.call @spmd__rank0(%[[X]])
// CHECK:           scf.yield %[[R0]]
// CHECK:         return %[[R]]

// CHECK-LABEL: func.func private @spmd__rank0(
// CHECK-SAME:    attributes {soap.rank_function = 0 : i64}
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NOT:     soap.rank
// CHECK-NOT:     scf.if
// CHECK-NOT:     arith.cmpi
// CHECK:         arith.addf
// CHECK-NOT:     arith.mulf
// CHECK:         soap.transfer %{{.*}} [2] [2] from 1 to 0
// CHECK:         soap.all_reduce %{{.*}} [0] [4] sum devices [0, 1]
// CHECK:         soap.transfer %{{.*}} [0] [1] from 0 to 1
// CHECK-NOT:     soap.transfer
// CHECK:         tensor.insert %{{.*}} into %{{.*}}[%[[C0]]]
// CHECK:         return

// CHECK-LABEL: func.func private @spmd__rank1(
// CHECK-SAME:    attributes {soap.rank_function = 1 : i64}
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NOT:     arith.addf
// CHECK:         arith.mulf
// CHECK:         soap.transfer %{{.*}} [2] [2] from 1 to 0
// CHECK:         soap.all_reduce %{{.*}} [0] [4] sum devices [0, 1]
// CHECK:         soap.transfer %{{.*}} [0] [1] from 0 to 1
// CHECK-NOT:     soap.transfer
// CHECK:         tensor.insert %{{.*}} into %{{.*}}[%[[C1]]]
// CHECK:         return

// Ranks 2 and 3 run no tile; they take part in the last transfer only.
// CHECK-LABEL: func.func private @spmd__rank2(
// CHECK-NOT:     arith.addf
// CHECK-NOT:     arith.mulf
// CHECK-NOT:     soap.all_reduce
// CHECK:         soap.transfer %{{.*}} [0] [1] from 2 to 3
// CHECK-LABEL: func.func private @spmd__rank3(
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 4, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @spmd(%x: tensor<4xf32>) -> tensor<4xf32> {
    %rank = soap.rank : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %e = tensor.empty() : tensor<4xf32>
    %is0 = arith.cmpi eq, %rank, %c0 : index
    %a = scf.if %is0 -> (tensor<4xf32>) {
      %s = arith.addf %x, %x : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    } else {
      scf.yield %e : tensor<4xf32>
    }
    %is1 = arith.cmpi eq, %c1, %rank : index
    %b = scf.if %is1 -> (tensor<4xf32>) {
      %m = arith.mulf %x, %x : tensor<4xf32>
      scf.yield %m : tensor<4xf32>
    } else {
      scf.yield %a : tensor<4xf32>
    }
    %t = soap.transfer %b [2] [2] from 1 to 0 : tensor<4xf32>
    %r = soap.all_reduce %t [0] [4] sum devices [0, 1] : tensor<4xf32>
    %u = soap.transfer %r [0] [1] from 0 to 1 : tensor<4xf32>
    %v = soap.transfer %u [0] [1] from 2 to 3 : tensor<4xf32>
    // Other uses of the rank see the constant.
    %f = arith.constant 1.0 : f32
    %w = tensor.insert %f into %v[%rank] : tensor<4xf32>
    return %w : tensor<4xf32>
  }
}

// -----

// A clone's name that is taken gets another one.
// CHECK-LABEL: func.func @taken(
// CHECK:         func.call @taken__rank1(
// CHECK:         func.call @taken__rank0_0(
// CHECK:       func.func private @taken__rank0_0(
// CHECK:       func.func private @taken__rank1(
// CHECK:       func.func private @taken__rank0()
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @taken(%x: tensor<4xf32>) -> tensor<4xf32> {
    %rank = soap.rank : index
    %t = soap.transfer %x [0] [2] from 0 to 1 : tensor<4xf32>
    return %t : tensor<4xf32>
  }
  func.func private @taken__rank0()
}

// -----

// One device: no clones, the rank is 0.
// CHECK-LABEL: func.func @one_device(
// CHECK-NOT:     soap.rank
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         arith.cmpi eq, %[[C0]], %{{.*}} : index
// CHECK-NOT:     func.call
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 1, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @one_device(%x: tensor<4xf32>) -> tensor<4xf32> {
    %rank = soap.rank : index
    %c0 = arith.constant 0 : index
    %e = tensor.empty() : tensor<4xf32>
    %is0 = arith.cmpi eq, %rank, %c0 : index
    %a = scf.if %is0 -> (tensor<4xf32>) {
      %s = arith.addf %x, %x : tensor<4xf32>
      scf.yield %s : tensor<4xf32>
    } else {
      scf.yield %e : tensor<4xf32>
    }
    return %a : tensor<4xf32>
  }
}

// -----

// Not an SPMD program (no soap.rank): unchanged.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    return
// CHECK-NOT:   func.func
module attributes {soap.machine = #soap.machine<nodes = 1, devices_per_node = 2, peak_tflops = 10, memory_gbps = 1000, memory_gib = 16, intra_gbps = 2, intra_latency_us = 1, inter_gbps = 2, inter_latency_us = 1>} {
  func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = arith.addf %x, %x : tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

// expected-error @below {{several candidate entry functions ('a', 'b'); choose one with --entry=NAME}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}
