// A block inserted into a zero-filled tensor (the zeros show around it),
// then a matmul that reads all of it: partitioned, the insert must read the
// fill's zeros where the block does not cover them.
func.func @insert_into_fill(%x: tensor<4x8xf32>, %w: tensor<16x6xf32> {soap.parameter}) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %i = tensor.insert_slice %x into %f[0, 4] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %eo = tensor.empty() : tensor<4x6xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.matmul ins(%i, %w : tensor<4x16xf32>, tensor<16x6xf32>) outs(%fo : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
