// RUN: soap-opt %s --soap-cpu-prepare --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --soap-cpu-entry | FileCheck %s

// A training step that updates its weight in place (result #1 marked
// soap.updates_input = 1): soap_main hands that result to
// soaprt_update_input(1, ...), which writes it over input 1, instead of
// binding it as an output; the outputs are the other results, renumbered.

// CHECK-LABEL: func.func @soap_num_outputs() -> i64
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         return %[[ONE]]
// CHECK-LABEL: func.func @soap_main()
// CHECK:         %[[R:.*]]:3 = call @step(
// CHECK:         %[[U0:.*]] = memref.cast %[[R]]#0
// CHECK:         call @soaprt_bind_output_f32(%{{.*}}, %[[U0]], %{{.*}})
// CHECK:         %[[U1:.*]] = memref.cast %[[R]]#1
// CHECK:         %[[I1:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_update_input_f32(%[[I1]], %[[U1]], %{{.*}})
// CHECK:         %[[U2:.*]] = memref.cast %[[R]]#2
// CHECK:         %[[I2:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_update_input_f32(%[[I2]], %[[U2]], %{{.*}})
// CHECK-NOT:     soaprt_bind_output
// CHECK:         return
#id = affine_map<(d0) -> (d0)>
func.func @step(%x: tensor<4xf32>, %w: tensor<4xf32> {soap.parameter}, %b: tensor<4xf32> {soap.parameter})
    -> (tensor<4xf32>, tensor<4xf32> {soap.updates_input = 1 : i64}, tensor<4xf32> {soap.updates_input = 2 : i64}) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %nw = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.subf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %nb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%b, %x : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.addf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %y, %nw, %nb : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
