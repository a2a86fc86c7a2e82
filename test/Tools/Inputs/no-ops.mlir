func.func @id(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
