// RUN: soap-opt %s --split-input-file --verify-diagnostics --soap-cuda-emulate-kernels

// Threads of one block that meet at a barrier cannot run one after another.
module attributes {gpu.container_module} {
  func.func @barrier(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    // expected-error @below {{'gpu.launch_func' op cannot be emulated on the host: 'gpu.barrier' has no sequential meaning}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @k {
    // expected-note @below {{kernel defined here}}
    gpu.func @k(%x: memref<4xf32>) kernel {
      gpu.barrier
      gpu.return
    }
  }
}

// -----

// Shared memory is per block, not per program.
module attributes {gpu.container_module} {
  func.func @shared(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    // expected-error @below {{cannot be emulated on the host: memory attributions}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  gpu.module @k {
    // expected-note @below {{kernel defined here}}
    gpu.func @k(%x: memref<4xf32>) workgroup(%tile : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @dynamic_shared(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %bytes = arith.constant 64 : i32
    // expected-error @below {{cannot be emulated on the host: dynamic shared memory}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) dynamic_shared_memory_size %bytes args(%x : memref<4xf32>)
    return
  }
  gpu.module @k {
    // expected-note @below {{kernel defined here}}
    gpu.func @k(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// An asynchronous launch would need its tokens emulated too.
module attributes {gpu.container_module} {
  func.func @async(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t0 = gpu.wait async
    // expected-error @below {{cannot be emulated on the host: asynchronous launch}}
    %t1 = gpu.launch_func async [%t0] @k::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<4xf32>)
    gpu.wait [%t1]
    return
  }
  gpu.module @k {
    // expected-note @below {{kernel defined here}}
    gpu.func @k(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A kernel body in several blocks (control flow already lowered).
module attributes {gpu.container_module} {
  func.func @blocks(%x: memref<4xf32>, %c: i1) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    // expected-error @below {{cannot be emulated on the host: the kernel's body has several blocks}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%c : i1)
    return
  }
  gpu.module @k {
    // expected-note @below {{kernel defined here}}
    gpu.func @k(%c: i1) kernel {
      cf.cond_br %c, ^a, ^b
    ^a:
      gpu.return
    ^b:
      gpu.return
    }
  }
}

// -----

// Code already compiled to a binary has nothing to emulate.
module attributes {gpu.container_module} {
  // expected-error @below {{'gpu.binary' op is compiled code: run soap-cuda-emulate-kernels before gpu-module-to-binary}}
  gpu.binary @k [#gpu.object<#nvvm.target, "">]
}

// -----

// Nor has a kernel already lowered to NVVM (an llvm.func).
module attributes {gpu.container_module} {
  func.func @lowered(%x: i64) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{'gpu.launch_func' op cannot be emulated on the host: @k::@k is not a gpu.func (run soap-cuda-emulate-kernels before the kernels are lowered to NVVM)}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : i64)
    return
  }
  gpu.module @k {
    llvm.func @k(%x: i64) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
