// An embedding lookup in the zoo's form (a select reduction over the
// table's 1000 rows, rewritten into a gather by soap-gather-lookups), the
// mean over the sequence plus the first token's embedding (two uses: the
// training step sums their gradients into the table's), and a linear
// layer: 2 sequences of 5 token ids.
#ids = affine_map<(b, t, h, v) -> (b, t)>
#table = affine_map<(b, t, h, v) -> (v, h)>
#emb = affine_map<(b, t, h, v) -> (b, t, h)>
func.func @embedding(%ids: tensor<2x5xi64>,
                     %table: tensor<1000x8xf32> {soap.parameter},
                     %w: tensor<8x4xf32> {soap.parameter}) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %fifth = arith.constant 0.2 : f32
  %e = tensor.empty() : tensor<2x5x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %emb = linalg.generic {indexing_maps = [#ids, #table, #emb], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ids, %table : tensor<2x5xi64>, tensor<1000x8xf32>) outs(%f : tensor<2x5x8xf32>) {
  ^bb0(%id: i64, %row: f32, %acc: f32):
    %v = linalg.index 3 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %s = arith.select %eq, %row, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x5x8xf32> loc("embed")
  %em = tensor.empty() : tensor<2x8xf32>
  %fm = linalg.fill ins(%zero : f32) outs(%em : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(b, h, t) -> (b, t, h)>, affine_map<(b, h, t) -> (b, h)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%emb : tensor<2x5x8xf32>) outs(%fm : tensor<2x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %fifth : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32> loc("mean")
  %first = tensor.extract_slice %emb[0, 0, 0] [2, 1, 8] [1, 1, 1] : tensor<2x5x8xf32> to tensor<2x8xf32>
  %both = linalg.generic {indexing_maps = [affine_map<(b, h) -> (b, h)>, affine_map<(b, h) -> (b, h)>, affine_map<(b, h) -> (b, h)>], iterator_types = ["parallel", "parallel"]}
      ins(%mean, %first : tensor<2x8xf32>, tensor<2x8xf32>) outs(%em : tensor<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32> loc("add_first")
  %eo = tensor.empty() : tensor<2x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4xf32>) -> tensor<2x4xf32>
  %out = linalg.matmul ins(%both, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%fo : tensor<2x4xf32>) -> tensor<2x4xf32> loc("fc")
  return %out : tensor<2x4xf32>
}
