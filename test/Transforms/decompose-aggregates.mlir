// RUN: soap-opt %s -split-input-file --soap-decompose-aggregates | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-import | FileCheck %s --check-prefix=IMPORT

// linalg.softmax has no indexing maps: it becomes the reductions and
// elementwise ops it stands for, which SOAP partitions like any other.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:     linalg.softmax
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maxnumf
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}}ins(%{{.*}}, %[[MAX]] :
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}ins(%[[EXP]] :
// CHECK:           arith.addf
// CHECK:         %[[DIV:.*]] = linalg.generic {{.*}}ins(%[[EXP]], %[[SUM]] :
// CHECK:           arith.divf
// CHECK:         return %[[DIV]]
// IMPORT-LABEL: func.func @softmax
// IMPORT-NOT:     linalg.softmax
// IMPORT:         math.exp
func.func @softmax(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

// soap-import also turns arith / math ops on whole tensors into
// linalg.generic ops (upstream convert-elementwise-to-linalg): SOAP could
// neither partition nor bufferize them.
// IMPORT-LABEL: func.func @elementwise
// IMPORT-NOT:     arith.addf {{.*}} : tensor
// IMPORT:         linalg.generic
// IMPORT:           arith.addf {{.*}} : f32
// IMPORT:         linalg.generic
// IMPORT:           math.exp {{.*}} : f32
func.func @elementwise(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c = arith.addf %a, %b : tensor<8x16xf32>
  %d = math.exp %c : tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}
