// RUN: soap-opt %s --soap-lower-to-cuda="to-llvm=false" | FileCheck %s
// RUN: soap-opt %s --soap-lower-to-cuda | FileCheck %s --check-prefix=BINARY
// RUN: soap-opt %s --soap-lower-to-cuda="host-emulation=true" | FileCheck %s --check-prefix=EMULATED

// The op classes that become generated kernels, through the whole CUDA
// lowering: max pooling (window loops in each thread), a softmax (row max
// and row sum as per-thread reductions, exp and division as elementwise
// kernels). The fill that initializes a reduction runs in the reduction's
// kernel (scf-parallel-loop-fusion), and the accumulator stays in a register
// (soap-scalar-accumulators). Each kernel is its own PTX module in the end.
// CHECK-LABEL: func.func @classes(
// CHECK-COUNT-5: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// The constant sizes are sunk into the kernels (gpu-launch-sink-index-
// computations): the index arithmetic divides by constants, which the NVPTX
// back end turns into multiplications.
// CHECK:       gpu.module @classes_kernel
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         arith.remsi %{{.*}}, %[[FOUR]] : index
// CHECK:         memref.store
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           scf.for {{.*}} iter_args
// CHECK:             arith.maximumf
// CHECK:       gpu.module @classes_kernel_0
// CHECK:         memref.store
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           arith.maximumf
// CHECK:       gpu.module @classes_kernel_1
// CHECK:         arith.subf
// CHECK:         math.exp
// CHECK:       gpu.module @classes_kernel_2
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           arith.addf
// CHECK:       gpu.module @classes_kernel_3
// CHECK:         arith.divf
// With host-emulation the kernels are host loops in the entry and only host
// code is left: no GPU op, no mgpu call, the same runtime entry points.
// EMULATED-NOT:   gpu.
// EMULATED-NOT:   mgpu
// EMULATED-LABEL: llvm.func @classes(
// EMULATED:         llvm.call @_mlir_memref_to_llvm_alloc
// EMULATED:         llvm.intr.exp
// EMULATED:         llvm.fdiv
// EMULATED-LABEL: llvm.func @soap_main(
// EMULATED:         llvm.call @soaprt_cuda_input
// BINARY-COUNT-5: gpu.binary @classes_kernel{{.*}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// BINARY-NOT:     gpu.module
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#red = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @classes(%x: tensor<2x4x8x8xf32>, %s: tensor<16x32xf32>) -> (tensor<2x4x4x4xf32>, tensor<16x32xf32>) {
  %ninf = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<2x4x4x4xf32>
  %pi = linalg.fill ins(%ninf : f32) outs(%pe : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %win : tensor<2x4x8x8xf32>, tensor<2x2xf32>) outs(%pi : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %me = tensor.empty() : tensor<16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%me : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#red, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<16x32xf32>) outs(%mi : tensor<16xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %ee = tensor.empty() : tensor<16x32xf32>
  %exp = linalg.generic {indexing_maps = [#red, #row, #red], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<16x32xf32>, tensor<16xf32>) outs(%ee : tensor<16x32xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<16x32xf32>
  %si = linalg.fill ins(%zero : f32) outs(%me : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#red, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<16x32xf32>) outs(%si : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %soft = linalg.generic {indexing_maps = [#red, #row, #red], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<16x32xf32>, tensor<16xf32>) outs(%ee : tensor<16x32xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %r = arith.divf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  return %pool, %soft : tensor<2x4x4x4xf32>, tensor<16x32xf32>
}
