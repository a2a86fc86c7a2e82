// RUN: soap-opt %s --split-input-file --soap-outline-loop-nests | FileCheck %s

// Two loop nests in a row: each becomes a private noinline function that
// takes the buffers and values it uses from above; constants are cloned
// into it. The order of the nests and their loops stay as they were.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>, %[[S:.*]]: f32, %[[N:.*]]: index)
// CHECK-NOT:     scf.for
// CHECK:         call @step_loop0(%[[X]], %[[S]], %[[Y]]) : (memref<4x8xf32>, f32, memref<4x8xf32>) -> ()
// CHECK-NEXT:    %[[R:.*]] = call @step_loop1(%[[Y]], %[[N]]) : (memref<4x8xf32>, index) -> f32
// CHECK-NEXT:    return %[[R]] : f32
// CHECK:       func.func private @step_loop0(%[[X0:.*]]: memref<4x8xf32>, %[[S0:.*]]: f32, %[[Y0:.*]]: memref<4x8xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             memref.load %[[X0]]
// CHECK:             arith.mulf %{{.*}}, %[[S0]] : f32
// CHECK:             memref.store %{{.*}}, %[[Y0]]
// CHECK:         return
// CHECK:       func.func private @step_loop1(%[[Y1:.*]]: memref<4x8xf32>, %[[N1:.*]]: index) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} = %[[C0]] to %[[N1]] step %[[C1]] iter_args(%{{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:           memref.load %[[Y1]]
// CHECK:         return %[[SUM]] : f32
func.func @step(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %s: f32, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %y[%i, %j] : memref<4x8xf32>
    }
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %y[%i, %c0] : memref<4x8xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  return %sum : f32
}

// -----

// A loop that calls out (the runtime) stays; the nests inside it are
// outlined. A name that is taken gets another.
// CHECK-LABEL: func.func @calls(
// CHECK:         scf.for
// CHECK-NEXT:      func.call @soaprt_work() : () -> ()
// CHECK-NEXT:      func.call @calls_loop0_0(
// CHECK:       func.func private @calls_loop0_0(
// CHECK-SAME:      attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
func.func private @soaprt_work()
func.func private @calls_loop0()
func.func @calls(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    func.call @soaprt_work() : () -> ()
    scf.for %j = %c0 to %c4 step %c1 {
      memref.store %one, %y[%j] : memref<4xf32>
    }
  }
  return
}

// -----

// A nest equal to one outlined before but for its locations (another
// rank's copy of a layer, a repeated block) calls that function; LLVM
// compiles it once. Nests that differ in a constant, an argument type or
// an op are functions of their own.
// CHECK-LABEL: func.func @rank0(
// CHECK-SAME:      %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[C:.*]]: memref<5xf32>)
// CHECK-NOT:     scf.for
// CHECK:         call @rank0_loop0(%[[A]])
// CHECK-NEXT:    call @rank0_loop0(%[[B]])
// CHECK-NEXT:    call @rank0_loop2(%[[A]])
// CHECK-NEXT:    call @rank0_loop3(%[[C]])
// CHECK-NEXT:    call @rank0_loop4(%[[A]])
// CHECK-NEXT:    return
// CHECK:       func.func private @rank0_loop0(
// CHECK:         arith.constant 2.000000e+00
// CHECK-NOT:   func.func private @rank0_loop1(
// CHECK:       func.func private @rank0_loop2(
// CHECK:         arith.constant 3.000000e+00
// CHECK:       func.func private @rank0_loop3(%{{.*}}: memref<5xf32>)
// CHECK:       func.func private @rank0_loop4(
// CHECK:         arith.mulf
// CHECK-LABEL: func.func @rank1(
// CHECK-SAME:      %[[A1:.*]]: memref<4xf32>
// CHECK-NOT:     scf.for
// CHECK:         call @rank0_loop0(%[[A1]])
// CHECK-NEXT:    call @rank0_loop2(%[[A1]])
// CHECK-NEXT:    return
// CHECK-NOT:   func.func private @rank1_loop
func.func @rank0(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %two : f32
    memref.store %w, %a[%i] : memref<4xf32>
  } loc("layer1")
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %b[%i] : memref<4xf32>
    %w = arith.addf %v, %two : f32
    memref.store %w, %b[%i] : memref<4xf32>
  } loc("layer2")
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %three : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c5 step %c1 {
    %v = memref.load %c[%i] : memref<5xf32>
    %w = arith.addf %v, %two : f32
    memref.store %w, %c[%i] : memref<5xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  return
}
func.func @rank1(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %two : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %three : f32
    memref.store %w, %a[%i] : memref<4xf32>
  }
  return
}
