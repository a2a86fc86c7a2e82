// RUN: soap-opt %s --soap-cpu-prepare --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --soap-cpu-entry | FileCheck %s

// An in-place update written over its parameter (soap-training-step
// returns=outputs: the update's destination is the parameter): the
// parameter's argument is writable (the other inputs are not), so
// bufferization writes the new weight into the input's own buffer; the
// function then stops returning it, and soap_main hands the input global
// itself to soaprt_update_input (nothing to copy).

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %{{.*}}: memref<4xf32> {llvm.noalias}, %[[W:.*]]: memref<4xf32> {llvm.noalias}) -> memref<4xf32> attributes {soap_model_function} {
// CHECK:         linalg.generic {{.*}} outs(%[[W]] : memref<4xf32>)
// CHECK-LABEL: func.func @soap_num_outputs() -> i64
// CHECK:         arith.constant 1 : i64
// CHECK-LABEL: func.func @soap_main()
// CHECK:         %[[X:.*]] = memref.get_global @__soap_input_0
// CHECK:         %[[G:.*]] = memref.get_global @__soap_input_1
// CHECK:         %[[Y:.*]] = call @step(%[[X]], %[[G]]) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK:         %[[UY:.*]] = memref.cast %[[Y]]
// CHECK:         call @soaprt_bind_output_f32(%{{.*}}, %[[UY]], %{{.*}})
// CHECK:         %[[UG:.*]] = memref.cast %[[G]]
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         call @soaprt_update_input_f32(%[[ONE]], %[[UG]], %{{.*}})
#id = affine_map<(d0) -> (d0)>
func.func @step(%x: tensor<4xf32>, %w: tensor<4xf32> {soap.parameter})
    -> (tensor<4xf32>, tensor<4xf32> {soap.updates_input = 1 : i64}) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %nw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%w : tensor<4xf32>) {
  ^bb0(%g: f32, %p: f32):
    %m = arith.subf %p, %g : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %y, %nw : tensor<4xf32>, tensor<4xf32>
}
