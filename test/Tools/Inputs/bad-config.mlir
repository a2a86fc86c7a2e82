func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // 'degree' is not a config key.
  %0 = linalg.matmul {soap.config = #soap.config<degrees = [2, 1, 1], degree = 2>} ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}
