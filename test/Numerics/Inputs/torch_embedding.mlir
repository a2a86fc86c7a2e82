// An embedding lookup as torch-mlir exports it (a parallel generic whose
// body extracts the id's row of a table captured from outside, the id's
// range asserted), then a linear layer: soap-import turns the lookup into
// a select reduction over the rows (soap-lookup-reductions), so the table
// is an operand, trained and partitioned like any weight.
func.func @torch_embedding(%ids: tensor<2x5xi64>, %table: tensor<100x8xf32> {soap.parameter},
                           %w: tensor<8x4xf32> {soap.parameter}) -> tensor<2x5x4xf32> {
  %c100 = arith.constant 100 : index
  %c0 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5x8xf32>
  %emb = linalg.generic {indexing_maps = [affine_map<(b, t, h) -> (b, t)>, affine_map<(b, t, h) -> (b, t, h)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x5xi64>) outs(%e : tensor<2x5x8xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %h = linalg.index 2 : index
    %lt = arith.cmpi slt, %i, %c100 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %id, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %table[%i, %h] : tensor<100x8xf32>
    linalg.yield %v : f32
  } -> tensor<2x5x8xf32>
  %eo = tensor.empty() : tensor<2x5x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, t, o, h) -> (b, t, h)>, affine_map<(b, t, o, h) -> (h, o)>, affine_map<(b, t, o, h) -> (b, t, o)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%emb, %w : tensor<2x5x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<2x5x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x5x4xf32>
  return %y : tensor<2x5x4xf32>
}
