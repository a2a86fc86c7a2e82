//===- Transformer.cpp - A GPT-2-medium-like decoder ----------------------===//
//
// transformer: GPT-2 medium (24 layers, hidden 1024, 16 heads of 64, MLP
// 4096, context 1024, vocabulary 50257, learned position embeddings, pre-layer
// norm, GELU, LM head tied to the token embedding), batch 64, sequence 1024.
// Parameter names follow Hugging Face's GPT-2 (wte, wpe, h.N.ln_1, ...);
// weights of the linear layers are [in, out] as in GPT-2's Conv1D.
// 354,823,168 parameters (GPT-2 medium's published count). --small: 2
// layers, hidden 32, 4 heads of 8, sequence 8, vocabulary 64.
//
// Layout: activations are [B*S, E] for the matmuls; attention reshapes to
// [B*heads, S, 64] for linalg.batch_matmul. The causal mask is applied with
// linalg.index inside the scaling generic. Dropout is left out. The token
// embedding is a linalg.generic over (b, s, e, v) that selects the row equal
// to the token id (see ModelBuilder::embedding); the LM head is a
// linalg.matmul with a transposed-B indexing map on the same wte argument.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace soapmodels;

OwningOpRef<ModuleOp> soapmodels::buildTransformer(MLIRContext *ctx,
                                                   int64_t batch, bool small) {
  const int64_t layers = small ? 2 : 24, hidden = small ? 32 : 1024,
                heads = small ? 4 : 16, seq = small ? 8 : 1024,
                vocab = small ? 64 : 50257, headDim = hidden / heads,
                ffn = 4 * hidden;
  ModelBuilder mb(ctx, "transformer", batch);
  OpBuilder &b = mb.builder();

  Value tokens = mb.input({batch, seq}, mb.i64(), "input_ids");
  Value wte = mb.param({vocab, hidden}, "wte.weight");
  Value wpe = mb.param({seq, hidden}, "wpe.weight");

  // Token + position embeddings: [B, S, E] -> [B*S, E].
  Value x = mb.embedding(tokens, wte, "wte");
  {
    AffineExpr s = getAffineDimExpr(1, ctx), e = getAffineDimExpr(2, ctx);
    x = mb.map(
        {x, wpe}, "wpe",
        [](OpBuilder &nb, Location loc, ValueRange a) {
          return arith::AddFOp::create(nb, loc, a[0], a[1]).getResult();
        },
        {b.getMultiDimIdentityMap(3), AffineMap::get(3, 0, {s, e}, ctx)});
  }
  x = mb.collapse(x, {{0, 1}, {2}}, "flatten_tokens");

  const double scale = 1.0 / std::sqrt(static_cast<double>(headDim));
  const double negInf = -std::numeric_limits<double>::infinity();
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = "h." + std::to_string(l);
    // --- Attention ---
    Value h = mb.layerNorm(x, p + ".ln_1");
    Value qkv = mb.linear(h, 3 * hidden, p + ".attn.c_attn"); // [B*S, 3E]
    qkv = mb.expand(qkv, {batch, seq, 3, heads, headDim}, {{0, 1}, {2, 3, 4}},
                    p + ".attn.split_heads");
    auto headsOf = [&](int64_t which, const char *name,
                       ArrayRef<int64_t> perm) {
      Value part = mb.slice(qkv, {0, 0, which, 0, 0},
                            {batch, seq, 1, heads, headDim},
                            p + ".attn." + name + ".slice", {2});
      // [B, S, H, D] -> perm -> collapse the leading [B, H].
      part = mb.transpose(part, perm, p + ".attn." + name + ".transpose");
      return mb.collapse(part, {{0, 1}, {2}, {3}},
                         p + ".attn." + name + ".collapse");
    };
    Value q = headsOf(0, "q", {0, 2, 1, 3}); // [B*H, S, D]
    Value k = headsOf(1, "k", {0, 2, 3, 1}); // [B*H, D, S]
    Value v = headsOf(2, "v", {0, 2, 1, 3}); // [B*H, S, D]
    Value scores = mb.batchMatmul(q, k, p + ".attn.scores"); // [B*H, S, S]
    Value scaleCst = mb.constant(scale), maskCst = mb.constant(negInf);
    scores = mb.map({scores}, p + ".attn.scale_mask",
                    [&](OpBuilder &nb, Location loc, ValueRange a) {
                      Value i = linalg::IndexOp::create(nb, loc, 1);
                      Value j = linalg::IndexOp::create(nb, loc, 2);
                      Value future = arith::CmpIOp::create(
                          nb, loc, arith::CmpIPredicate::ugt, j, i);
                      Value scaled =
                          arith::MulFOp::create(nb, loc, a[0], scaleCst);
                      return arith::SelectOp::create(nb, loc, future, maskCst,
                                                     scaled)
                          .getResult();
                    });
    Value probs = mb.softmax(scores, p + ".attn.softmax");
    Value ctxv = mb.batchMatmul(probs, v, p + ".attn.context"); // [B*H, S, D]
    ctxv = mb.expand(ctxv, {batch, heads, seq, headDim}, {{0, 1}, {2}, {3}},
                     p + ".attn.context.expand");
    ctxv = mb.transpose(ctxv, {0, 2, 1, 3}, p + ".attn.merge_heads");
    ctxv = mb.collapse(ctxv, {{0, 1}, {2, 3}}, p + ".attn.merge_heads.collapse");
    Value attn = mb.linear(ctxv, hidden, p + ".attn.c_proj");
    x = mb.add(x, attn, p + ".attn.residual");
    // --- MLP ---
    h = mb.layerNorm(x, p + ".ln_2");
    h = mb.linear(h, ffn, p + ".mlp.c_fc");
    h = mb.gelu(h, p + ".mlp.gelu");
    h = mb.linear(h, hidden, p + ".mlp.c_proj");
    x = mb.add(x, h, p + ".mlp.residual");
  }
  x = mb.layerNorm(x, "ln_f");
  Value logits = mb.matmulTransposedB(x, wte, "lm_head"); // [B*S, V]
  logits = mb.expand(logits, {batch, seq, vocab}, {{0, 1}, {2}}, "logits");
  return mb.finish({logits});
}
