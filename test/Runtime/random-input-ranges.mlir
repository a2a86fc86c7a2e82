// RUN: soap-opt %s --soap-cpu-prepare --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --soap-cpu-entry | FileCheck %s

// An argument marked soap.random_range (soap-random-input-ranges: a
// weight's He-uniform range): soap_setup tells the runtime after binding
// it, with soaprt_input_random_range(index, low, high), where
// --random-inputs draws its values from; the other inputs keep the
// runtime's defaults. The mark is gone from the function.

// CHECK:       func.func private @soaprt_input_random_range(i64, f64, f64)
// CHECK-LABEL: func.func @linear(
// CHECK-NOT:     soap.random_range
// CHECK-SAME:    {
// CHECK-LABEL: func.func @soap_setup()
// CHECK:         call @soaprt_bind_input_f32(
// CHECK:         call @soaprt_bind_input_f32(
// CHECK:         call @soaprt_bind_input_f32(
// CHECK-DAG:     %[[I:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[LOW:.*]] = arith.constant -1.4142135623730951 : f64
// CHECK-DAG:     %[[HIGH:.*]] = arith.constant 1.4142135623730951 : f64
// CHECK:         call @soaprt_input_random_range(%[[I]], %[[LOW]], %[[HIGH]]) : (i64, f64, f64) -> ()
// CHECK-NOT:     soaprt_input_random_range
// CHECK:         return
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @linear(%x: tensor<2x3xf32>,
                  %w: tensor<3x4xf32> {soap.parameter, soap.random_range = array<f64: -1.4142135623730951, 1.4142135623730951>},
                  %b: tensor<4xf32> {soap.parameter}) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
