// A 2 GiB input (32768 x 16384 f32) and a result: more static data than
// x86-64's small code model can address (large-buffers.test).
func.func @matmul(%a: tensor<32768x16384xf32>, %b: tensor<16384x256xf32>, %c: tensor<32768x256xf32>) -> tensor<32768x256xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<32768x16384xf32>, tensor<16384x256xf32>) outs(%c : tensor<32768x256xf32>) -> tensor<32768x256xf32>
  return %0 : tensor<32768x256xf32>
}
