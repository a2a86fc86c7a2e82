// RUN: soap-opt %s --soap-cpu-prepare --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --soap-cpu-entry | FileCheck %s

// An in-place update whose parts are held apart (soap.held_parts: device 0
// columns 0-1 and 4-5, device 1 columns 2-3 and 6-7): soap_setup hands the
// list to soaprt_input_parts(1, ...), from a constant global, so that
// gathering input 1 takes each part from its device; the step itself no
// longer carries the attribute.

// CHECK: memref.global "private" constant @__soap_held_parts_1 : memref<20xi64> = dense<[0, 0, 0, 4, 2, 0, 0, 4, 4, 2, 1, 0, 2, 4, 2, 1, 0, 6, 4, 2]>
// CHECK-LABEL: func.func @step(
// CHECK-NOT:     soap.held_parts
// CHECK-LABEL: func.func @soap_setup()
// CHECK:         call @soaprt_bind_input_f32
// CHECK:         %[[PARTS:.*]] = memref.get_global @__soap_held_parts_1 : memref<20xi64>
// CHECK:         %[[U:.*]] = memref.cast %[[PARTS]] : memref<20xi64> to memref<*xi64>
// CHECK:         call @soaprt_input_parts(%{{.*}}, %[[U]])
// CHECK-LABEL: func.func @soap_main()
// CHECK:         call @soaprt_update_input_f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%x: tensor<4x8xf32>, %w: tensor<4x8xf32> {soap.parameter})
    -> (tensor<4x8xf32> {soap.updates_input = 1 : i64, soap.held_parts = array<i64: 0, 0, 0, 4, 2, 0, 0, 4, 4, 2, 1, 0, 2, 4, 2, 1, 0, 6, 4, 2>}) {
  %e = tensor.empty() : tensor<4x8xf32>
  %nw = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.subf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %nw : tensor<4x8xf32>
}
