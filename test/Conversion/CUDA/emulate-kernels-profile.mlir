// RUN: soap-opt %s --soap-cuda-emulate-kernels=profile-accesses | FileCheck %s
// RUN: soap-opt %s --soap-cuda-emulate-kernels | FileCheck %s --check-prefix=PLAIN

// With profile-accesses, the emulated launch calls the access profiler:
// the launch (its name and location, and its two access sites) before the
// loops, each thread's linear block and thread ids, every load and store's
// byte address (the aligned pointer plus (offset + i * stride0 + j *
// stride1) * 4 for f32), and the launch's end after the loops.
// CHECK-DAG:   llvm.mlir.global internal constant @soaprt_emu_profile_name_0("scale_kernel::scale_kernel scale model.py:7:3\00")
// CHECK-DAG:   func.func private @soaprt_emu_profile_launch(!llvm.ptr, i64)
// CHECK-DAG:   func.func private @soaprt_emu_profile_thread(i64, i64)
// CHECK-DAG:   func.func private @soaprt_emu_profile_access(i64, i64, i64, i64)
// CHECK-DAG:   func.func private @soaprt_emu_profile_launch_end()
// CHECK-LABEL: func.func @scale(
// CHECK-SAME:      %[[X:.*]]: memref<6x10xf32, strided<[20, 1], offset: 3>>
// CHECK:         %[[NAME:.*]] = llvm.getelementptr %{{.*}}[0, 0]
// CHECK:         %[[SITES:.*]] = arith.constant 2 : i64
// CHECK:         call @soaprt_emu_profile_launch(%[[NAME]], %[[SITES]])
// CHECK:         scf.for %[[BX:.*]] =
// CHECK:           scf.for %[[TX:.*]] =
// CHECK:             %[[BLOCK:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:             %[[THREAD:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:             call @soaprt_emu_profile_thread(%[[BLOCK]], %[[THREAD]])
// CHECK:               %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK:               %[[ROW:.*]] = arith.muli %{{.*}}, %[[STRIDES]]#0
// CHECK:               %[[E0:.*]] = arith.addi %[[OFF]], %[[ROW]]
// CHECK:               %[[COL:.*]] = arith.muli %{{.*}}, %[[STRIDES]]#1
// CHECK:               %[[E:.*]] = arith.addi %[[E0]], %[[COL]]
// CHECK:               %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:               %[[BYTES:.*]] = arith.muli %[[E]], %{{.*}}
// CHECK:               %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK:               %[[A64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:               call @soaprt_emu_profile_access(%{{.*}}, %[[A64]], %{{.*}}, %{{.*}})
// CHECK-NEXT:          memref.load %[[X]]
// CHECK:               call @soaprt_emu_profile_access(
// CHECK-NEXT:          memref.store
// CHECK:         call @soaprt_emu_profile_launch_end()
// CHECK-NEXT:    return

// PLAIN-NOT: soaprt_emu_profile
module attributes {gpu.container_module} {
  func.func @scale(%x: memref<6x10xf32, strided<[20, 1], offset: 3>>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %c10 = arith.constant 10 : index
    gpu.launch_func @scale_kernel::@scale_kernel
        blocks in (%c6, %c1, %c1) threads in (%c10, %c1, %c1)
        args(%x : memref<6x10xf32, strided<[20, 1], offset: 3>>)
        loc(fused["scale", "model.py":7:3])
    return
  }
  gpu.module @scale_kernel {
    gpu.func @scale_kernel(%x: memref<6x10xf32, strided<[20, 1], offset: 3>>) kernel {
      %r = gpu.block_id x
      %c = gpu.thread_id x
      %v = memref.load %x[%r, %c] : memref<6x10xf32, strided<[20, 1], offset: 3>>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%r, %c] : memref<6x10xf32, strided<[20, 1], offset: 3>>
      gpu.return
    }
  }
}
