// RUN: soap-opt %s --soap-bufferize 2>&1 | FileCheck %s
// RUN: soap-opt %s --soap-bufferize="max-analyzed-writes=1" --verify-diagnostics | FileCheck %s --check-prefix=COPY

// Identity layouts at the boundary; with the analysis, the insert writes in
// place into a fresh buffer.
// CHECK-LABEL: func.func @two_inserts(
// CHECK-SAME:    %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) -> memref<8xf32>
// CHECK:         %[[BUF:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         return %[[BUF]]

// Over the threshold: a remark, and a copy before every write (a copy
// of the whole buffer before each insert).
// COPY-LABEL: func.func @two_inserts(
// COPY-COUNT-3: memref.alloc()
// expected-remark @+1 {{'two_inserts' has 2 in-place tensor writes (more than 1): bufferized with a copy before every write, without alias analysis}}
func.func @two_inserts(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = tensor.insert_slice %a into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %1 = tensor.insert_slice %b into %0[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %1 : tensor<8xf32>
}
