//===- ModelBuilder.h - Builders for the soap-models zoo ---------*- C++ -*-===//
//
// A thin layer over MLIR's C++ builders that emits DNN layers in linalg on
// tensors (func, arith, math, tensor, linalg): NCHW convolutions with explicit
// tensor.pad, folded batch norm, pooling, fully connected layers (linalg.matmul
// with [in, out] weights), LSTM cells, attention, layer norm, softmax.
//
// Conventions:
// - Every weight is a function argument with the unit attribute
//   {soap.parameter} and a NameLoc that carries its (torchvision / GPT-2 style)
//   name, e.g. loc("layer1.0.conv1.weight").
// - Every op at the function's top level gets a unique NameLoc, e.g.
//   loc("layer1.0.conv1"); helper ops of a layer take the layer's name plus a
//   suffix (".pad", ".init", ".bias", ...). Ops in linalg.generic bodies take
//   their generic's location. No FileLineColLoc anywhere.
// - Activations are f32; token ids are i64.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_TOOLS_SOAP_MODELS_MODELBUILDER_H
#define SOAP_TOOLS_SOAP_MODELS_MODELBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <string>

namespace soapmodels {


using mlir::Value;

/// Builds one model: a module with one public function @NAME whose arguments
/// are the activation inputs followed by the parameters (in order of use).
class ModelBuilder {
public:
  ModelBuilder(mlir::MLIRContext *ctx, llvm::StringRef modelName,
               int64_t batch);

  int64_t batch() const { return batchSize; }
  mlir::OpBuilder &builder() { return b; }
  mlir::MLIRContext *context() { return b.getContext(); }
  mlir::Type f32() { return b.getF32Type(); }
  mlir::Type i64() { return b.getI64Type(); }

  /// A unique NameLoc for a top-level op (aborts on a duplicate: names are
  /// the ops' stable identities).
  mlir::Location at(const llvm::Twine &name);

  /// Function arguments.
  Value input(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
              const llvm::Twine &name);
  Value param(llvm::ArrayRef<int64_t> shape, const llvm::Twine &name);

  /// Ends the function with `return results` and returns the module.
  mlir::OwningOpRef<mlir::ModuleOp> finish(mlir::ValueRange results);

  // --- Basic tensors -------------------------------------------------------
  static llvm::SmallVector<int64_t> shapeOf(Value v);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elementType = nullptr);
  /// A scalar constant (one per value and type, at the top of the function).
  Value constant(double value, mlir::Type type = nullptr);
  Value empty(llvm::ArrayRef<int64_t> shape, const llvm::Twine &name,
              mlir::Type elementType = nullptr);
  /// tensor.empty + linalg.fill.
  Value filled(llvm::ArrayRef<int64_t> shape, double value,
               const llvm::Twine &name);

  // --- Structural ops ------------------------------------------------------
  Value pad(Value x, llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
            double value, const llvm::Twine &name);
  Value collapse(Value x, llvm::ArrayRef<mlir::ReassociationIndices> groups,
                 const llvm::Twine &name);
  Value expand(Value x, llvm::ArrayRef<int64_t> shape,
               llvm::ArrayRef<mlir::ReassociationIndices> groups,
               const llvm::Twine &name);
  /// Static slice; `dropDims` are size-1 dimensions removed from the result.
  Value slice(Value x, llvm::ArrayRef<int64_t> offsets,
              llvm::ArrayRef<int64_t> sizes, const llvm::Twine &name,
              llvm::ArrayRef<int64_t> dropDims = {});
  /// Inserts `src` (possibly rank-reduced) into `dest` at `offsets` with
  /// `sizes` (of dest's rank).
  Value insert(Value src, Value dest, llvm::ArrayRef<int64_t> offsets,
               llvm::ArrayRef<int64_t> sizes, const llvm::Twine &name);
  /// Concatenation along `dim` via tensor.insert_slice into tensor.empty.
  Value concat(llvm::ArrayRef<Value> parts, int64_t dim,
               const llvm::Twine &name);
  Value transpose(Value x, llvm::ArrayRef<int64_t> perm,
                  const llvm::Twine &name);

  // --- Generic elementwise / reduction ops ---------------------------------
  using BodyFn = std::function<llvm::SmallVector<Value>(
      mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;
  /// A linalg.generic with explicit maps; the body gets the block arguments
  /// (inputs then outputs) and returns the values to yield.
  mlir::ValueRange generic(llvm::ArrayRef<Value> inputs,
                           llvm::ArrayRef<Value> outputs,
                           llvm::ArrayRef<mlir::AffineMap> maps,
                           llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                           const llvm::Twine &name, const BodyFn &body);
  /// Elementwise over the shape of `inputs[0]`; every input has the identity
  /// map unless `maps` (one per input) is given; the result is a new tensor.
  Value map(llvm::ArrayRef<Value> inputs, const llvm::Twine &name,
            const std::function<Value(mlir::OpBuilder &, mlir::Location,
                                      mlir::ValueRange)> &body,
            llvm::ArrayRef<mlir::AffineMap> maps = {});
  /// Reduces the last dimension of `x` (combined with `init`).
  Value reduceLast(Value x, double init, const llvm::Twine &name,
                   const std::function<Value(mlir::OpBuilder &, mlir::Location,
                                             Value elem, Value acc)> &combine);

  Value add(Value x, Value y, const llvm::Twine &name);
  Value relu(Value x, const llvm::Twine &name);
  /// min(max(x, 0), 6).
  Value relu6(Value x, const llvm::Twine &name);
  Value tanh(Value x, const llvm::Twine &name);
  /// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GPT-2's gelu).
  Value gelu(Value x, const llvm::Twine &name);
  Value scale(Value x, double factor, const llvm::Twine &name);

  // --- Layers ---------------------------------------------------------------
  struct Conv {
    int64_t outChannels;
    int64_t kh, kw;
    int64_t sh = 1, sw = 1;
    int64_t ph = 0, pw = 0;
    bool bias = false;
  };
  /// NCHW convolution (linalg.conv_2d_nchw_fchw), weight [F, C, KH, KW]
  /// "<name>.weight", optional per-channel bias "<name>.bias".
  Value conv2d(Value x, const Conv &conv, const llvm::Twine &name);
  /// Depthwise NCHW convolution, one KxK filter per channel
  /// (linalg.depthwise_conv_2d_nchw_chw, as torch-mlir exports
  /// `groups == channels`), weight [C, K, K] "<name>.weight", padding
  /// `padding` on every side.
  Value depthwiseConv2d(Value x, int64_t k, int64_t stride, int64_t padding,
                        const llvm::Twine &name);
  /// Folded batch norm: y = x * weight[c] + bias[c] (params "<name>.weight",
  /// "<name>.bias").
  Value batchNorm(Value x, const llvm::Twine &name);
  /// Per-channel bias of an NCHW tensor (param `paramName`).
  Value channelBias(Value x, const llvm::Twine &paramName,
                    const llvm::Twine &name);
  Value maxPool(Value x, int64_t k, int64_t stride, int64_t padding,
                const llvm::Twine &name);
  /// Average pooling counting padding (PyTorch's count_include_pad=True):
  /// linalg.pooling_nchw_sum then a scale by 1/(k*k).
  Value avgPool(Value x, int64_t k, int64_t stride, int64_t padding,
                const llvm::Twine &name);
  /// Global average pooling: [N, C, H, W] -> [N, C].
  Value globalAvgPool(Value x, const llvm::Twine &name);
  /// [N, C, H, W] -> [N, C*H*W].
  Value flatten(Value x, const llvm::Twine &name);

  /// x [M, K] @ W [K, N] (+ bias [N]); params "<name>.weight", "<name>.bias".
  Value linear(Value x, int64_t outFeatures, const llvm::Twine &name,
               bool bias = true);
  /// x [M, K] @ W [K, N] with an existing weight; accumulates into `acc`
  /// when given (else into a fresh zero tensor).
  Value matmul(Value x, Value w, const llvm::Twine &name, Value acc = nullptr);
  /// x [M, K] @ W^T for W [N, K] (tied embedding / LM head).
  Value matmulTransposedB(Value x, Value w, const llvm::Twine &name);
  /// Bias [N] added to x [..., N].
  Value addBias(Value x, Value bias, const llvm::Twine &name);
  Value batchMatmul(Value x, Value y, const llvm::Twine &name);

  /// Token ids [B, T] (i64) -> embeddings [B, T, E] from table [V, E]: a
  /// linalg.generic over (b, t, e, v) with v a reduction loop selecting the
  /// row whose index equals the token (a gather written as a one-hot
  /// contraction, so the table is a visible operand of a linalg op).
  Value embedding(Value tokens, Value table, const llvm::Twine &name);

  /// Softmax over the last dimension (max, exp, sum, divide).
  Value softmax(Value x, const llvm::Twine &name);
  /// Layer norm over the last dimension of x [M, N] with params
  /// "<name>.weight", "<name>.bias" (eps 1e-5).
  Value layerNorm(Value x, const llvm::Twine &name);

  /// One LSTM step: gates = x @ W_ih + h @ W_hh; one linalg.generic applies
  /// the bias [4, H], the gate nonlinearities (i, f, g, o order) and the cell
  /// update, yielding (h', c').
  struct LSTMLayer {
    Value wih, whh, bias;
    int64_t hidden;
  };
  LSTMLayer lstmLayer(int64_t inputSize, int64_t hidden,
                      const llvm::Twine &name);
  std::pair<Value, Value> lstmStep(const LSTMLayer &layer, Value x, Value h,
                                   Value c, const llvm::Twine &name);

private:
  mlir::OpBuilder b;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  mlir::Block *body;
  int64_t batchSize;
  llvm::SmallVector<bool> isParameter;
  llvm::StringSet<> names;
  llvm::DenseMap<std::pair<mlir::Type, uint64_t>, Value> constants;
};

/// A model of the zoo.
struct ModelInfo {
  const char *name;
  const char *description;
  int64_t defaultBatch;
  std::function<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext *,
                                                  int64_t batch)>
      build;
  /// The same graph at test size (soap-models --small), or none.
  std::function<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext *,
                                                  int64_t batch)>
      buildSmall = nullptr;
};

mlir::OwningOpRef<mlir::ModuleOp> buildAlexNet(mlir::MLIRContext *, int64_t);
mlir::OwningOpRef<mlir::ModuleOp> buildResNet101(mlir::MLIRContext *, int64_t);
mlir::OwningOpRef<mlir::ModuleOp> buildMobileNetV2(mlir::MLIRContext *,
                                                   int64_t);
mlir::OwningOpRef<mlir::ModuleOp> buildInceptionV3(mlir::MLIRContext *,
                                                   int64_t);
/// The recurrent models; `small`: 4 steps, embeddings and hidden states of
/// 16, vocabularies of 50 (the same layers and ops, for numerical tests).
mlir::OwningOpRef<mlir::ModuleOp> buildRNNTC(mlir::MLIRContext *, int64_t,
                                             bool small = false);
mlir::OwningOpRef<mlir::ModuleOp> buildRNNLM(mlir::MLIRContext *, int64_t,
                                             bool small = false);
mlir::OwningOpRef<mlir::ModuleOp> buildNMT(mlir::MLIRContext *, int64_t,
                                           bool small = false);
/// `small`: 2 layers, hidden 32, 4 heads of 8, MLP 128, sequence 8,
/// vocabulary 64 (the same layers and ops, for numerical tests).
mlir::OwningOpRef<mlir::ModuleOp> buildTransformer(mlir::MLIRContext *, int64_t,
                                                   bool small = false);
mlir::OwningOpRef<mlir::ModuleOp> buildMLP(mlir::MLIRContext *, int64_t);


} // namespace soapmodels

#endif // SOAP_TOOLS_SOAP_MODELS_MODELBUILDER_H
