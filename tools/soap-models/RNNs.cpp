//===- RNNs.cpp - RNNTC, RNNLM, NMT (unrolled LSTMs) ----------------------===//
//
// The recurrent benchmarks of the FlexFlow paper, unrolled over 40 steps as
// the paper's simulator sees them: per step and layer, x_t @ W_ih and
// h_{t-1} @ W_hh (two linalg.matmul, the second accumulating into the first)
// and one linalg.generic for the bias, the gates (i, f, g, o) and the cell
// update, yielding h_t and c_t. Each LSTM layer has W_ih [in, 4H],
// W_hh [H, 4H] and one bias [4, H] (PyTorch's two biases b_ih + b_hh are one
// parameter here). Initial states are zero. Token ids are i64 inputs
// [B, 40]; embeddings use ModelBuilder::embedding (a linalg.generic over
// (b, t, e, v)). Dropout is left out.
//
// - rnntc: text classifier (the paper's RNNTC on movie reviews): vocabulary
//   20,000, embedding 1024, 4 LSTM layers of 1024, a linear layer on the last
//   step's top hidden state to 2 classes. 54,052,866 parameters.
// - rnnlm: language model: vocabulary 10,000, embedding 2048, 2 LSTM layers
//   of 2048, a linear decoder to the vocabulary on every step (one matmul over
//   [B*40, 2048]); output logits [B, 40, 10000]. 108,095,248 parameters.
// - nmt: encoder-decoder with Luong (general-dot) attention: source and
//   target vocabularies of 32,000, embeddings 1024, 2 encoder + 2 decoder LSTM
//   layers of 1024 (the decoder starts from the encoder's final states), 40
//   source and 40 target steps (teacher forcing: target tokens are an input).
//   Per decoder step: scores = h_t . enc_out (linalg.batch_matmul), softmax,
//   context = probs . enc_out, attentional state tanh([ctx; h_t] @ W_c) with
//   W_c [2048, 1024] (no bias); no input feeding. A linear generator to the
//   vocabulary over all steps; output logits [B, 40, 32000].
//   134,003,968 parameters.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace soapmodels;

namespace {
/// Sizes of a recurrent model: the paper's, or the test size (--small).
struct Sizes {
  int64_t steps, vocab, embed, hidden;
};
Sizes sizes(bool small, int64_t vocab, int64_t embed, int64_t hidden) {
  if (small)
    return {4, 50, 16, 16};
  return {40, vocab, embed, hidden};
}

struct LSTMStack {
  ModelBuilder &mb;
  std::string prefix;
  SmallVector<ModelBuilder::LSTMLayer> layers;
  SmallVector<Value> h, c;

  LSTMStack(ModelBuilder &mb, const std::string &prefix, int64_t numLayers,
            int64_t inputSize, int64_t hidden)
      : mb(mb), prefix(prefix) {
    for (int64_t l = 0; l < numLayers; ++l)
      layers.push_back(mb.lstmLayer(l == 0 ? inputSize : hidden, hidden,
                                    prefix + ".l" + std::to_string(l)));
  }

  /// Zero initial states.
  void zeroState(int64_t batch) {
    for (auto [l, layer] : llvm::enumerate(layers)) {
      std::string p = prefix + ".l" + std::to_string(l);
      h.push_back(mb.filled({batch, layer.hidden}, 0.0, p + ".h0"));
      c.push_back(mb.filled({batch, layer.hidden}, 0.0, p + ".c0"));
    }
  }

  /// One time step through all layers; returns the top layer's h.
  Value step(Value x, int64_t t) {
    for (auto [l, layer] : llvm::enumerate(layers)) {
      std::string name =
          prefix + ".l" + std::to_string(l) + ".t" + std::to_string(t);
      std::tie(h[l], c[l]) = mb.lstmStep(layer, x, h[l], c[l], name);
      x = h[l];
    }
    return x;
  }
};

/// Embeds tokens [B, T] and returns the per-step slices [B, E].
SmallVector<Value> embedSteps(ModelBuilder &mb, Value tokens, int64_t vocab,
                              int64_t dim, const std::string &name) {
  int64_t batch = ModelBuilder::shapeOf(tokens)[0];
  int64_t numSteps = ModelBuilder::shapeOf(tokens)[1];
  Value table = mb.param({vocab, dim}, name + ".weight");
  Value embedded = mb.embedding(tokens, table, name); // [B, T, E]
  SmallVector<Value> steps;
  for (int64_t t = 0; t < numSteps; ++t)
    steps.push_back(mb.slice(embedded, {0, t, 0}, {batch, 1, dim},
                             name + ".t" + std::to_string(t), {1}));
  return steps;
}

/// Collects per-step [B, H] states into [B, T, H].
Value collectSteps(ModelBuilder &mb, ArrayRef<Value> steps,
                   const std::string &name) {
  SmallVector<int64_t> shape = ModelBuilder::shapeOf(steps.front());
  int64_t batch = shape[0], hidden = shape[1];
  // [B, H] -> [B, 1, H] first, so the insertions are not rank-reducing;
  // all reshapes precede the insertion chain (like the parts of a concat).
  SmallVector<Value> expanded;
  for (auto [t, s] : llvm::enumerate(steps))
    expanded.push_back(mb.expand(s, {batch, 1, hidden}, {{0}, {1, 2}},
                                 name + ".t" + std::to_string(t) + ".expand"));
  int64_t numSteps = static_cast<int64_t>(steps.size());
  Value all = mb.empty({batch, numSteps, hidden}, name + ".empty");
  for (auto [t, s] : llvm::enumerate(expanded))
    all = mb.insert(s, all, {0, static_cast<int64_t>(t), 0},
                    {batch, 1, hidden}, name + ".t" + std::to_string(t));
  return all;
}

/// Linear layer applied to every step: [B, T, H] -> [B, T, V].
Value perStepLinear(ModelBuilder &mb, Value states, int64_t out,
                    const std::string &name) {
  int64_t batch = ModelBuilder::shapeOf(states)[0];
  int64_t numSteps = ModelBuilder::shapeOf(states)[1];
  Value flat = mb.collapse(states, {{0, 1}, {2}}, name + ".flatten");
  Value logits = mb.linear(flat, out, name);
  return mb.expand(logits, {batch, numSteps, out}, {{0, 1}, {2}},
                   name + ".logits");
}
} // namespace

OwningOpRef<ModuleOp> soapmodels::buildRNNTC(MLIRContext *ctx, int64_t batch,
                                             bool small) {
  auto [numSteps, vocab, embed, hidden] = sizes(small, 20000, 1024, 1024);
  const int64_t layers = 4, classes = 2;
  ModelBuilder mb(ctx, "rnntc", batch);
  Value tokens = mb.input({batch, numSteps}, mb.i64(), "input_ids");
  SmallVector<Value> xs = embedSteps(mb, tokens, vocab, embed, "embed");
  LSTMStack lstm(mb, "lstm", layers, embed, hidden);
  lstm.zeroState(batch);
  Value top;
  for (int64_t t = 0; t < numSteps; ++t)
    top = lstm.step(xs[t], t);
  Value logits = mb.linear(top, classes, "fc");
  return mb.finish({logits});
}

OwningOpRef<ModuleOp> soapmodels::buildRNNLM(MLIRContext *ctx, int64_t batch,
                                             bool small) {
  auto [numSteps, vocab, embed, hidden] = sizes(small, 10000, 2048, 2048);
  (void)embed; // the embedding is the hidden size
  const int64_t layers = 2;
  ModelBuilder mb(ctx, "rnnlm", batch);
  Value tokens = mb.input({batch, numSteps}, mb.i64(), "input_ids");
  SmallVector<Value> xs = embedSteps(mb, tokens, vocab, hidden, "embed");
  LSTMStack lstm(mb, "lstm", layers, hidden, hidden);
  lstm.zeroState(batch);
  SmallVector<Value> tops;
  for (int64_t t = 0; t < numSteps; ++t)
    tops.push_back(lstm.step(xs[t], t));
  Value states = collectSteps(mb, tops, "lstm.outputs");
  return mb.finish({perStepLinear(mb, states, vocab, "decoder")});
}

OwningOpRef<ModuleOp> soapmodels::buildNMT(MLIRContext *ctx, int64_t batch,
                                           bool small) {
  auto [numSteps, vocab, embed, hidden] = sizes(small, 32000, 1024, 1024);
  const int64_t layers = 2;
  ModelBuilder mb(ctx, "nmt", batch);
  Value src = mb.input({batch, numSteps}, mb.i64(), "src_ids");
  Value tgt = mb.input({batch, numSteps}, mb.i64(), "tgt_ids");

  // Encoder.
  SmallVector<Value> xs = embedSteps(mb, src, vocab, embed, "encoder.embed");
  LSTMStack encoder(mb, "encoder", layers, embed, hidden);
  encoder.zeroState(batch);
  SmallVector<Value> encTops;
  for (int64_t t = 0; t < numSteps; ++t)
    encTops.push_back(encoder.step(xs[t], t));
  Value memory = collectSteps(mb, encTops, "encoder.outputs"); // [B, S, H]
  Value keys = mb.transpose(memory, {0, 2, 1}, "attention.keys"); // [B, H, S]

  // Decoder, starting from the encoder's final states.
  SmallVector<Value> ys = embedSteps(mb, tgt, vocab, embed, "decoder.embed");
  LSTMStack decoder(mb, "decoder", layers, embed, hidden);
  decoder.h = encoder.h;
  decoder.c = encoder.c;
  Value wc = mb.param({2 * hidden, hidden}, "attention.linear_out.weight");
  SmallVector<Value> attnStates;
  for (int64_t t = 0; t < numSteps; ++t) {
    std::string p = "decoder.t" + std::to_string(t) + ".attention";
    Value top = decoder.step(ys[t], t);
    Value query = mb.expand(top, {batch, 1, hidden}, {{0}, {1, 2}},
                            p + ".query");
    Value scores = mb.batchMatmul(query, keys, p + ".scores"); // [B, 1, S]
    Value probs = mb.softmax(scores, p + ".softmax");
    Value context = mb.batchMatmul(probs, memory, p + ".context"); // [B,1,H]
    context = mb.collapse(context, {{0}, {1, 2}}, p + ".context.collapse");
    Value cat = mb.concat({context, top}, 1, p + ".cat"); // [B, 2H]
    Value out = mb.matmul(cat, wc, p + ".linear_out");
    attnStates.push_back(mb.tanh(out, p + ".tanh"));
  }
  Value states = collectSteps(mb, attnStates, "decoder.outputs");
  return mb.finish({perStepLinear(mb, states, vocab, "generator")});
}
