// RUN: soap-opt %s --split-input-file --soap-cuda-share-kernels | FileCheck %s
// RUN: soap-opt %s --split-input-file --soap-cuda-share-kernels | FileCheck %s --check-prefix=GONE

// Kernel outlining gives every launch a module. Rank 1's kernel is rank
// 0's but for its name and location: its module goes and its launch names
// rank 0's kernel. A kernel with another constant, another argument type
// or an attribute of its own (known block size) keeps its module, as does a
// module of two kernels.
// CHECK-LABEL: func.func @rank0(
// CHECK:         gpu.launch_func @rank0_kernel::@rank0_kernel {{.*}} args(%{{.*}} : memref<8xf32>)
// CHECK:         gpu.launch_func @rank0_kernel_0::@rank0_kernel
// CHECK:         gpu.launch_func @rank0_kernel_1::@rank0_kernel
// CHECK:         gpu.launch_func @rank0_kernel_2::@rank0_kernel
// CHECK:         gpu.launch_func @pair::@first
// CHECK-LABEL: func.func @rank1(
// CHECK:         gpu.launch_func @rank0_kernel::@rank0_kernel {{.*}} args(%{{.*}} : memref<8xf32>)
// CHECK:         gpu.launch_func @rank0_kernel::@rank0_kernel {{.*}} args(%{{.*}} : memref<8xf32>)
// CHECK:         gpu.launch_func @pair_copy::@first
// CHECK:       gpu.module @rank0_kernel {
// CHECK:       gpu.module @rank0_kernel_0 {
// CHECK:         arith.constant 3.000000e+00
// CHECK:       gpu.module @rank0_kernel_1 {
// CHECK:         gpu.func @rank0_kernel(%{{.*}}: memref<16xf32>)
// CHECK:       gpu.module @rank0_kernel_2 {
// CHECK-NEXT:    known_block_size
// CHECK:       gpu.module @pair {
// CHECK:       gpu.module @pair_copy {
// GONE-NOT:    @rank1_kernel
module attributes {gpu.container_module} {
  func.func @rank0(%x: memref<8xf32>, %y: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @rank0_kernel::@rank0_kernel
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    gpu.launch_func @rank0_kernel_0::@rank0_kernel
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    gpu.launch_func @rank0_kernel_1::@rank0_kernel
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%y : memref<16xf32>)
    gpu.launch_func @rank0_kernel_2::@rank0_kernel
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    gpu.launch_func @pair::@first
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    return
  }
  func.func @rank1(%x: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @rank1_kernel::@rank1_kernel
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    gpu.launch_func @rank1_kernel_0::@rank1_kernel
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    gpu.launch_func @pair_copy::@first
        blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%x : memref<8xf32>)
    return
  }
  gpu.module @rank0_kernel {
    gpu.func @rank0_kernel(%x: memref<8xf32>) kernel {
      %two = arith.constant 2.0 : f32
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%t] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @rank0_kernel_0 {
    gpu.func @rank0_kernel(%x: memref<8xf32>) kernel {
      %three = arith.constant 3.0 : f32
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<8xf32>
      %w = arith.mulf %v, %three : f32
      memref.store %w, %x[%t] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @rank0_kernel_1 {
    gpu.func @rank0_kernel(%x: memref<16xf32>) kernel {
      %two = arith.constant 2.0 : f32
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<16xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%t] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @rank0_kernel_2 {
    gpu.func @rank0_kernel(%x: memref<8xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      %two = arith.constant 2.0 : f32
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%t] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @pair {
    gpu.func @first(%x: memref<8xf32>) kernel {
      gpu.return
    }
    gpu.func @second(%x: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @rank1_kernel {
    gpu.func @rank1_kernel(%x: memref<8xf32>) kernel {
      %two = arith.constant 2.0 : f32
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%t] : memref<8xf32>
      gpu.return
    } loc("another_layer")
  }
  gpu.module @rank1_kernel_0 {
    gpu.func @rank1_kernel(%x: memref<8xf32>) kernel {
      %two = arith.constant 2.0 : f32
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<8xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %x[%t] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @pair_copy {
    gpu.func @first(%x: memref<8xf32>) kernel {
      gpu.return
    }
    gpu.func @second(%x: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The emulation and the CPU target see no gpu.module: nothing to do.
// CHECK-LABEL: func.func @host(
// CHECK-NEXT:    return
func.func @host() {
  return
}
