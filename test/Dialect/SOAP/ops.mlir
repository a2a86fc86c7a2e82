// RUN: soap-opt %s | FileCheck %s
// RUN: soap-opt %s | soap-opt | FileCheck %s
// RUN: soap-opt %s --canonicalize | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @comm
func.func @comm(%t: tensor<64x64xf32>) -> (tensor<64x64xf32>, index) {
  // CHECK: %[[R:.*]] = soap.rank : index
  %r = soap.rank : index
  // CHECK: soap.transfer %{{.*}} [0, 32] [16, 32] from 2 to 5 : tensor<64x64xf32>
  %0 = soap.transfer %t [0, 32] [16, 32] from 2 to 5 : tensor<64x64xf32>
  // CHECK: soap.all_reduce %{{.*}} [0, 0] [64, 64] sum devices [0, 4] : tensor<64x64xf32>
  %1 = soap.all_reduce %0 [0, 0] [64, 64] sum devices [0, 4] : tensor<64x64xf32>
  // CHECK: soap.all_reduce %{{.*}} [8, 0] [8, 64] max devices [1, 2, 3] : tensor<64x64xf32>
  %2 = soap.all_reduce %1 [8, 0] [8, 64] max devices [1, 2, 3] : tensor<64x64xf32>
  // CHECK: soap.reduce_scatter %{{.*}} [0, 0] [64, 64] sum dim 0 devices [0, 1] : tensor<64x64xf32>
  %3 = soap.reduce_scatter %2 [0, 0] [64, 64] sum dim 0 devices [0, 1] : tensor<64x64xf32>
  // CHECK: soap.all_gather %{{.*}} [0, 16] [64, 48] dim 1 devices [3, 1, 2] : tensor<64x64xf32>
  %4 = soap.all_gather %3 [0, 16] [64, 48] dim 1 devices [3, 1, 2] : tensor<64x64xf32>
  return %4, %r : tensor<64x64xf32>, index
}

// Transfers that move nothing and reductions over one device fold away.
// CANON-LABEL: func.func @nothing
// CANON-NOT: soap.
// CANON: return %arg0
func.func @nothing(%t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = soap.transfer %t [0, 0] [0, 8] from 0 to 1 : tensor<8x8xf32>
  %1 = soap.all_reduce %0 [0, 0] [8, 8] sum devices [3] : tensor<8x8xf32>
  %2 = soap.all_reduce %1 [0, 0] [8, 0] min devices [0, 1] : tensor<8x8xf32>
  %3 = soap.reduce_scatter %2 [0, 0] [8, 8] sum dim 0 devices [2] : tensor<8x8xf32>
  %4 = soap.all_gather %3 [0, 0] [8, 8] dim 1 devices [1] : tensor<8x8xf32>
  %5 = soap.all_gather %4 [0, 0] [0, 8] dim 1 devices [0, 1] : tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
}

// Communication is never dropped, even when its result is unused.
// CANON-LABEL: func.func @kept
// CANON: soap.transfer
// CANON: soap.reduce_scatter
// CANON: soap.all_gather
func.func @kept(%t: tensor<8x8xf32>) {
  %0 = soap.transfer %t [0, 0] [4, 8] from 0 to 1 : tensor<8x8xf32>
  %1 = soap.reduce_scatter %0 [0, 0] [8, 8] max dim 1 devices [0, 1] : tensor<8x8xf32>
  %2 = soap.all_gather %1 [0, 0] [8, 8] dim 0 devices [1, 0] : tensor<8x8xf32>
  return
}
