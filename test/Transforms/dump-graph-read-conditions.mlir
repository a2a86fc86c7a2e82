// RUN: soap-opt %s --soap-dump-graph -o /dev/null | FileCheck %s
// RUN: soap-opt %s --soap-dump-graph=json -o /dev/null | FileCheck %s --check-prefix=JSON

// An op that reads an input only where a loop has one index: its body uses
// the input only as what `arith.select(index(l) == c, in, ...)` picks (the
// sum of an LSTM's gate gradients soap-training-step writes: part k where
// the gate index is k). The op graph says so ("if d1 = 0"), and a tile
// whose loop 1 misses the index reads nothing of the input: soap-partition
// moves none of it there, and the simulator counts none.

// CHECK-LABEL: graph @stack
// CHECK: node 0 "stack" linalg.generic loops=[S:4, A:2, P:16]
// CHECK-NEXT:   in arg0 [4x16] input (d0, d2) if d1 = 0
// CHECK-NEXT:   in arg1 [4x16] input (d0, d2) if d1 = 1
// Both conditions of a conjunction; a use outside a select reads always; a
// parameter is moved whole whatever its readers' conditions.
// CHECK-NEXT:   in arg2 [4x16] input (d0, d2) if d1 = 1 if d0 = 3
// CHECK-NEXT:   in arg3 [4x16] input (d0, d2){{$}}
// CHECK-NEXT:   in arg4 [4x16] param (d0, d2){{$}}
// CHECK-NEXT:   out stack [4x2x16] result (d0, d1, d2)

// JSON: "name": "stack"
// JSON: "only_at": [
// JSON-NEXT: [
// JSON-NEXT: 1,
// JSON-NEXT: 0
// JSON-NEXT: ]
// JSON-NEXT: ]

#part = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @stack(%a0: tensor<4x16xf32>, %a1: tensor<4x16xf32>,
                 %a2: tensor<4x16xf32>, %a3: tensor<4x16xf32>,
                 %w: tensor<4x16xf32> {soap.parameter}) -> tensor<4x2x16xf32> {
  %e = tensor.empty() : tensor<4x2x16xf32>
  %r = linalg.generic {indexing_maps = [#part, #part, #part, #part, #part, #id],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a0, %a1, %a2, %a3, %w : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
      outs(%e : tensor<4x2x16xf32>) {
  ^bb0(%i0: f32, %i1: f32, %i2: f32, %i3: f32, %iw: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %l1 = linalg.index 1 : index
    %l0 = linalg.index 0 : index
    %is0 = arith.cmpi eq, %l1, %c0 : index
    %is1 = arith.cmpi eq, %c1, %l1 : index
    %last = arith.cmpi eq, %l0, %c3 : index
    %both = arith.andi %is1, %last : i1
    %p0 = arith.select %is0, %i0, %zero : f32
    %p1 = arith.select %is1, %i1, %zero : f32
    %p2 = arith.select %both, %i2, %zero : f32
    %p3 = arith.select %is0, %i3, %zero : f32
    %p4 = arith.select %is0, %iw, %zero : f32
    %s0 = arith.addf %p0, %p1 : f32
    %s1 = arith.addf %s0, %p2 : f32
    %s2 = arith.addf %s1, %p3 : f32
    %s3 = arith.addf %s2, %i3 : f32
    %s4 = arith.addf %s3, %p4 : f32
    linalg.yield %s4 : f32
  } -> tensor<4x2x16xf32> loc("stack")
  return %r : tensor<4x2x16xf32>
}
