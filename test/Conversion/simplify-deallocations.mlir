// RUN: soap-opt %s --soap-simplify-deallocations | FileCheck %s
// RUN: soap-opt %s --soap-simplify-deallocations=max-memrefs=1 -verify-diagnostics | FileCheck %s --check-prefix=KEPT

// Upstream's simplification runs on a function whose deallocs list few
// buffers (here it drops the dealloc: the retained buffer is returned and
// the other is dead); above max-memrefs the function is left as it is,
// with a remark.
// CHECK-LABEL: func.func @f(
// CHECK-NOT:     bufferization.dealloc
// KEPT-LABEL:  func.func @f(
// KEPT:          bufferization.dealloc (%{{.*}}, %{{.*}} : memref<2xf32>, memref<2xf32>)
// expected-remark @below {{'f' deallocates 2 buffers (more than 1): its deallocations are not simplified}}
func.func @f(%c: i1) -> memref<2xf32> {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<2xf32>
  %r:1 = bufferization.dealloc (%a, %b : memref<2xf32>, memref<2xf32>) if (%c, %c) retain (%a : memref<2xf32>)
  return %a : memref<2xf32>
}
