// RUN: soap-opt %s -split-input-file --soap-change-float-type="from=f32 to=bf16" | FileCheck %s
// RUN: soap-opt %s -split-input-file --soap-change-float-type="from=bf16,f16 to=f32" | FileCheck %s --check-prefix=WIDE
// RUN: not soap-opt %s -split-input-file --soap-change-float-type="from=bf16,f64 to=f32" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not soap-opt %s -split-input-file --soap-change-float-type="from=bf16 to=tf32" 2>&1 | FileCheck %s --check-prefix=BADTO

// Every f32 becomes bf16: arguments, results, tensor types, scalar
// constants rounded to nearest even (-inf stays -inf), dense constants.
// CHECK-LABEL: func.func @narrow(
// CHECK-SAME:    %{{.*}}: tensor<2x4xbf16>) -> tensor<2x4xbf16>
// CHECK-DAG:     arith.constant 0xFF80 : bf16
// CHECK-DAG:     arith.constant 1.000980e-01 : bf16
// CHECK-DAG:     arith.constant dense<[1.000000e+00, 3.015630e+00, -2.500000e-01, 0.000000e+00]> : tensor<4xbf16>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK:         ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: bf16):
// CHECK-NOT:     f32
// BAD: error: soap-change-float-type: unknown type 'f64' (expected f32, bf16 or f16)
// BADTO: error: soap-change-float-type: unknown type 'tf32' (expected f32, bf16 or f16)
#map = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @narrow(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %tenth = arith.constant 0.1 : f32
  %bias = arith.constant dense<[1.0, 3.01, -0.25, 0.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#map, #col, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.mulf %s, %tenth : f32
    %m = arith.maximumf %t, %ninf : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// bf16 and f16 made f32 (one pass, both types): a mixed-precision
// product's extensions of its operands to f32 become conversions of f32 to
// itself, and go.
// WIDE-LABEL: func.func @widen(
// WIDE-SAME:    %{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8x2xf32>) -> tensor<4x2xf32>
// WIDE-NOT:     extf
// WIDE:         arith.mulf %{{.*}}, %{{.*}} : f32
// WIDE-NOT:     {{b?f16}}
// Made bf16 (f32 to bf16, the first RUN), an f16 operand's extension to
// f32 becomes f16 to f32 to bf16 (f16 and bf16: neither is wider).
// CHECK-LABEL: func.func @widen(
// CHECK:         %[[E:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:         arith.truncf %[[E]] : f32 to bf16
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @widen(%x: tensor<4x8xbf16>, %w: tensor<8x2xf16>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xbf16>, tensor<8x2xf16>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%p: bf16, %q: f16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
