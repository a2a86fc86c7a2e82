// RUN: soap-opt %s --split-input-file --soap-merge-rank-functions | FileCheck %s

// Ranks 1 and 2 differ only in an offset into their input (a GEP), their
// rank in a communication (a constant) and a region global (an address):
// one merged body takes those as arguments, and each rank function calls
// it with its own. Rank 0 has another op and stays as it is; a function
// that is no rank function is left alone.
// CHECK-LABEL: llvm.func @rank0(
// CHECK:         llvm.call @work
// CHECK:         llvm.call @work
// CHECK:       llvm.func internal @rank1_merged(
// CHECK-SAME:      %[[MP:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[A1:.*]]: i64, %[[A2:.*]]: !llvm.ptr) -> i64
// CHECK-NOT:     soap_model_function
// CHECK:         %[[G:.*]] = llvm.getelementptr %[[MP]][%[[A0]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.call @send(%[[G]], %[[A1]], %[[A2]])
// CHECK:         llvm.mlir.constant(7 : i64)
// CHECK-LABEL: llvm.func @rank1(
// CHECK-SAME:      %[[P:.*]]: !llvm.ptr) -> i64 attributes {soap_model_function}
// CHECK-DAG:     %[[OFF:.*]] = llvm.mlir.constant(4000 : i64) : i64
// CHECK-DAG:     %[[PEER:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG:     %[[REGION:.*]] = llvm.mlir.addressof @region_rank1 : !llvm.ptr
// CHECK:         %[[R:.*]] = llvm.call @rank1_merged(%[[P]], %[[OFF]], %[[PEER]], %[[REGION]]) : (!llvm.ptr, i64, i64, !llvm.ptr) -> i64
// CHECK-NEXT:    llvm.return %[[R]] : i64
// CHECK-LABEL: llvm.func @rank2(
// CHECK-DAG:     %[[OFF2:.*]] = llvm.mlir.constant(8000 : i64) : i64
// CHECK-DAG:     %[[PEER2:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG:     %[[REGION2:.*]] = llvm.mlir.addressof @region_rank2 : !llvm.ptr
// CHECK:         llvm.call @rank1_merged(%{{.*}}, %[[OFF2]], %[[PEER2]], %[[REGION2]])
// CHECK-LABEL: llvm.func @helper(
// CHECK:         llvm.getelementptr %{{.*}}[4000]
llvm.mlir.global private constant @region_rank1(0 : i64) : i64
llvm.mlir.global private constant @region_rank2(0 : i64) : i64
llvm.func @work(!llvm.ptr)
llvm.func @send(!llvm.ptr, i64, !llvm.ptr)
llvm.func @rank0(%p: !llvm.ptr) -> i64 attributes {soap_model_function} {
  llvm.call @work(%p) : (!llvm.ptr) -> ()
  llvm.call @work(%p) : (!llvm.ptr) -> ()
  %seven = llvm.mlir.constant(7 : i64) : i64
  llvm.return %seven : i64
}
llvm.func @rank1(%p: !llvm.ptr) -> i64 attributes {soap_model_function} {
  %g = llvm.getelementptr %p[4000] : (!llvm.ptr) -> !llvm.ptr, f32
  %peer = llvm.mlir.constant(1 : i64) : i64
  %region = llvm.mlir.addressof @region_rank1 : !llvm.ptr
  llvm.call @send(%g, %peer, %region) : (!llvm.ptr, i64, !llvm.ptr) -> ()
  %seven = llvm.mlir.constant(7 : i64) : i64
  llvm.return %seven : i64
}
llvm.func @rank2(%p: !llvm.ptr) -> i64 attributes {soap_model_function} {
  %g = llvm.getelementptr %p[8000] : (!llvm.ptr) -> !llvm.ptr, f32
  %peer = llvm.mlir.constant(2 : i64) : i64
  %region = llvm.mlir.addressof @region_rank2 : !llvm.ptr
  llvm.call @send(%g, %peer, %region) : (!llvm.ptr, i64, !llvm.ptr) -> ()
  %seven = llvm.mlir.constant(7 : i64) : i64
  llvm.return %seven : i64
}
llvm.func @helper(%p: !llvm.ptr) {
  %g = llvm.getelementptr %p[4000] : (!llvm.ptr) -> !llvm.ptr, f32
  llvm.call @work(%g) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Functions that differ in anything else (an op, a callee, a type) stay
// apart.
// CHECK-LABEL: llvm.func @a(
// CHECK-NEXT:    llvm.call @f() : () -> ()
// CHECK-LABEL: llvm.func @b(
// CHECK-NEXT:    llvm.call @g() : () -> ()
// CHECK-NOT:     _merged
llvm.func @f()
llvm.func @g()
llvm.func @a() attributes {soap_model_function} {
  llvm.call @f() : () -> ()
  llvm.return
}
llvm.func @b() attributes {soap_model_function} {
  llvm.call @g() : () -> ()
  llvm.return
}

// -----

// Internal functions only called directly (outlined loop nests) that
// differ in a GEP offset (a zero fill of each rank's part) become one, and
// their calls pass the offsets; then the rank functions that call them
// differ only in constants and merge too. Nests that differ in another
// constant (a loop bound, which LLVM optimizes on) stay apart.
// CHECK-LABEL: llvm.func internal @fill_rank1_merged(
// CHECK-SAME:      %[[P:.*]]: !llvm.ptr, %[[OFF:.*]]: i64)
// CHECK:         llvm.getelementptr %[[P]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NOT:   llvm.func internal @fill_rank1(
// CHECK-NOT:   llvm.func internal @fill_rank2(
// CHECK:       llvm.func internal @bound_4(
// CHECK:       llvm.func internal @bound_8(
// CHECK:       llvm.func internal @rank1_merged(
// CHECK-SAME:      %{{.*}}: !llvm.ptr, %[[O:.*]]: i64)
// CHECK:         llvm.call @fill_rank1_merged(%{{.*}}, %[[O]])
// CHECK:         llvm.call @bound_4(
// CHECK-LABEL: llvm.func @rank1(
// CHECK:         llvm.mlir.constant(4000 : i64)
// CHECK:         llvm.call @rank1_merged(
// CHECK-LABEL: llvm.func @rank2(
// CHECK:         llvm.mlir.constant(8000 : i64)
// CHECK:         llvm.call @rank1_merged(
// CHECK-LABEL: llvm.func @rank3(
// CHECK:         llvm.call @fill_rank1_merged(
// CHECK:         llvm.call @bound_8(
llvm.func internal @fill_rank1(%p: !llvm.ptr) {
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %g = llvm.getelementptr %p[4000] : (!llvm.ptr) -> !llvm.ptr, f32
  llvm.store %zero, %g : f32, !llvm.ptr
  llvm.return
}
llvm.func internal @fill_rank2(%p: !llvm.ptr) {
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  %g = llvm.getelementptr %p[8000] : (!llvm.ptr) -> !llvm.ptr, f32
  llvm.store %zero, %g : f32, !llvm.ptr
  llvm.return
}
llvm.func internal @bound_4(%p: !llvm.ptr) -> i64 {
  %n = llvm.mlir.constant(4 : i64) : i64
  llvm.return %n : i64
}
llvm.func internal @bound_8(%p: !llvm.ptr) -> i64 {
  %n = llvm.mlir.constant(8 : i64) : i64
  llvm.return %n : i64
}
llvm.func @rank1(%p: !llvm.ptr) attributes {soap_model_function} {
  llvm.call @fill_rank1(%p) : (!llvm.ptr) -> ()
  %n = llvm.call @bound_4(%p) : (!llvm.ptr) -> i64
  llvm.return
}
llvm.func @rank2(%p: !llvm.ptr) attributes {soap_model_function} {
  llvm.call @fill_rank2(%p) : (!llvm.ptr) -> ()
  %n = llvm.call @bound_4(%p) : (!llvm.ptr) -> i64
  llvm.return
}
llvm.func @rank3(%p: !llvm.ptr) attributes {soap_model_function} {
  llvm.call @fill_rank1(%p) : (!llvm.ptr) -> ()
  %n = llvm.call @bound_8(%p) : (!llvm.ptr) -> i64
  llvm.return
}
