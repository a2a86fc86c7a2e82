// RUN: soap-opt %s -split-input-file --soap-form-collectives | FileCheck %s

// Devices 0, 1 and 2 each hold a third of the rows and send it to the other
// two: one all-gather of the rows, in chunk order, where the last transfer
// was. The transfer of another tensor between them stays where it is.
// CHECK-LABEL: func.func @gather_rows(
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<6x4xf32>, %[[U:[a-z0-9]+]]: tensor<6x4xf32>
// CHECK: %[[OTHER:.*]] = soap.transfer %[[U]] [0, 0] [2, 4] from 3 to 0
// CHECK-NEXT: %[[G:.*]] = soap.all_gather %[[T]] [0, 0] [6, 4] dim 0 devices [0, 1, 2] : tensor<6x4xf32>
// CHECK-NOT: soap.transfer
// CHECK: return %[[G]], %[[OTHER]]
func.func @gather_rows(%t: tensor<6x4xf32>, %u: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
  %0 = soap.transfer %t [2, 0] [2, 4] from 1 to 0 : tensor<6x4xf32>
  %1 = soap.transfer %0 [4, 0] [2, 4] from 2 to 0 : tensor<6x4xf32>
  %2 = soap.transfer %1 [0, 0] [2, 4] from 0 to 1 : tensor<6x4xf32>
  %o = soap.transfer %u [0, 0] [2, 4] from 3 to 0 : tensor<6x4xf32>
  %3 = soap.transfer %2 [4, 0] [2, 4] from 2 to 1 : tensor<6x4xf32>
  %4 = soap.transfer %3 [0, 0] [2, 4] from 0 to 2 : tensor<6x4xf32>
  %5 = soap.transfer %4 [2, 0] [2, 4] from 1 to 2 : tensor<6x4xf32>
  return %5, %o : tensor<6x4xf32>, tensor<6x4xf32>
}

// -----

// Columns held by devices 3 and 1 (in that order): the gather lists them
// in chunk order. The other transfers of the chain stay, relinked.
// CHECK-LABEL: func.func @gather_columns(
// CHECK: %[[A:.*]] = soap.transfer %{{.*}} [0, 0] [4, 8] from 0 to 2
// CHECK-NEXT: %[[G:.*]] = soap.all_gather %[[A]] [0, 0] [4, 8] dim 1 devices [3, 1]
// CHECK-NEXT: %[[B:.*]] = soap.transfer %[[G]] [0, 0] [4, 8] from 2 to 0
// CHECK-NEXT: return %[[B]]
func.func @gather_columns(%t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = soap.transfer %t [0, 0] [4, 8] from 0 to 2 : tensor<4x8xf32>
  %1 = soap.transfer %0 [0, 4] [4, 4] from 1 to 3 : tensor<4x8xf32>
  %2 = soap.transfer %1 [0, 0] [4, 4] from 3 to 1 : tensor<4x8xf32>
  %3 = soap.transfer %2 [0, 0] [4, 8] from 2 to 0 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Two devices that swap their halves gather them; the third part goes on
// alone.
// CHECK-LABEL: func.func @pair(
// CHECK: %[[G:.*]] = soap.all_gather %{{.*}} [0, 0] [4, 4] dim 0 devices [0, 1]
// CHECK-NEXT: soap.transfer %[[G]] [4, 0] [2, 4] from 2 to 0
func.func @pair(%t: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0 = soap.transfer %t [2, 0] [2, 4] from 1 to 0 : tensor<6x4xf32>
  %1 = soap.transfer %0 [0, 0] [2, 4] from 0 to 1 : tensor<6x4xf32>
  %2 = soap.transfer %1 [4, 0] [2, 4] from 2 to 0 : tensor<6x4xf32>
  return %2 : tensor<6x4xf32>
}

// -----

// Not gathers: device 0's chunk goes to 1 and 2, but only device 0 gets
// device 1's (@partial); one device sends both parts (@same_sender); the
// chunks differ in size (@uneven); a transfer in
// between writes into the region on a device of the group (@clobbered);
// the first transfer's result has another reader (@read_between).
// CHECK-LABEL: func.func @partial(
// CHECK-NOT: soap.all_gather
// CHECK-COUNT-3: soap.transfer
func.func @partial(%t: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0 = soap.transfer %t [0, 0] [2, 4] from 0 to 1 : tensor<6x4xf32>
  %1 = soap.transfer %0 [0, 0] [2, 4] from 0 to 2 : tensor<6x4xf32>
  %2 = soap.transfer %1 [2, 0] [2, 4] from 1 to 0 : tensor<6x4xf32>
  return %2 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @same_sender(
// CHECK-NOT: soap.all_gather
func.func @same_sender(%t: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0 = soap.transfer %t [0, 0] [2, 4] from 1 to 0 : tensor<6x4xf32>
  %1 = soap.transfer %0 [2, 0] [2, 4] from 1 to 0 : tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @uneven(
// CHECK-NOT: soap.all_gather
func.func @uneven(%t: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0 = soap.transfer %t [0, 0] [2, 4] from 0 to 1 : tensor<6x4xf32>
  %1 = soap.transfer %0 [2, 0] [4, 4] from 1 to 0 : tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @clobbered(
// CHECK-NOT: soap.all_gather
func.func @clobbered(%t: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = soap.transfer %t [0, 0] [2, 4] from 0 to 1 : tensor<4x4xf32>
  %1 = soap.transfer %0 [2, 0] [2, 4] from 5 to 0 : tensor<4x4xf32>
  %2 = soap.transfer %1 [2, 0] [2, 4] from 1 to 0 : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @read_between(
// CHECK-NOT: soap.all_gather
func.func @read_between(%t: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = soap.transfer %t [0, 0] [2, 4] from 0 to 1 : tensor<4x4xf32>
  %1 = soap.transfer %0 [2, 0] [2, 4] from 1 to 0 : tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}
