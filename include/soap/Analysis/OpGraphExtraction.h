//===- OpGraphExtraction.h - IR -> MLIR-free op graph -----------*- C++ -*-===//
//
// Reduces a function on tensors to the compact soap::OpGraph that the
// simulator and search work on: one node per layer (a linalg op together
// with the elementwise chain that follows it, the fill that initializes it and
// the pads that feed it), tensors between them, parameters marked.
// Everything is derived from interfaces (linalg indexing maps and iterator
// types, TilingInterface); only tensor-level data movement ops (reshapes,
// slices, concatenation) are described op by op.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_ANALYSIS_OPGRAPHEXTRACTION_H
#define SOAP_ANALYSIS_OPGRAPHEXTRACTION_H

#include "soap/Simulator/OpGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
namespace soap {

struct OpGraphExtractionOptions {
  /// Group elementwise chains, fills and pads with the op they belong to.
  bool groupOps = true;
  /// Emit a remark for every op kept unpartitioned (replicated).
  bool remarkReplicated = true;
};

/// The graph together with the IR it came from.
struct ExtractedOpGraph {
  ::soap::OpGraph graph;
  /// For node i: its anchor op first, then every op grouped into it.
  SmallVector<SmallVector<Operation *>> nodeOps;
  /// For tensor i: the SSA value it stands for.
  SmallVector<Value> tensorValues;
};

/// The stable name of `op`: its `soap.name` attribute, else the name of a
/// NameLoc, else empty.
std::string getStableName(Operation *op);

/// Whether `op` only starts a value (an empty tensor, a fill, a constant):
/// no layer's work of its own.
bool isValueStart(Operation *op);

/// Every op that reads `value` or a view of it a tensor op makes (a slice,
/// a reshape: bufferization may leave those in `value`'s buffer), each
/// once, the tensor ops included: what an update of `value` in place must
/// come after.
SmallVector<Operation *> readersOfViews(Value value);

/// The function SOAP works on: `name` if given, else the one public function
/// with a body that no other function calls. Emits an error when there is no
/// such function or more than one candidate.
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module, StringRef name = "");

/// Which arguments of `func` are parameters (weights): those marked
/// `soap.parameter`; in a function with no marked argument, those that reach a
/// weight position (a convolution's filter, the side of a matmul that carries
/// no batch loop), possibly through transposes, broadcasts and reshapes, and
/// vectors beside matrix data; not those read only as an inference-mode
/// normalization's running statistics (NormalizationStatistics.h: buffers).
llvm::SmallBitVector getParameterArguments(func::FuncOp func);

/// Whether `use` reads a `tensor.pad` of a constant padding value as an
/// input of a linalg op. A pad whose one use is such a read belongs to its
/// reader's group (each tile pads what it reads) rather than being a layer
/// of its own.
bool isGroupedPadRead(OpOperand &use);

/// The argument that `value` is the new value of: the index `i` when the
/// function returns `value` as a result marked `soap.updates_input = i` (an
/// in-place update), nothing otherwise.
std::optional<int64_t> getUpdatedArgument(Value value);

/// How a copy reads its one input dimension: through loop `loop`, or at
/// index 0 (`loop` -1); `reversed`: at extent - 1 - loop, over a loop of the
/// dimension's extent (a convolution's filter flipped in its window).
struct CopyRead {
  int32_t loop;
  bool reversed;
};

/// The reads of `op` when it is a copy, transpose, broadcast or flip: one
/// input of static shape whose element it yields as is, each dimension read
/// as a CopyRead, all loops parallel, the output written through a
/// permutation of them. Shared by the op graph (which reads a parameter
/// through such a view) and soap-bubble-up-slices (which slices its input
/// instead of its result).
std::optional<SmallVector<CopyRead>> getCopyReads(linalg::LinalgOp op);

/// How each result of an indexing map indexes a tensor dimension, in the op
/// graph's terms (constant + sum of coefficient x loop, or the whole
/// dimension when not affine in the loops).
SmallVector<::soap::DimAccess> getDimAccesses(AffineMap map);

/// Builds the op graph of `func`. Emits a located error (and fails) for what
/// cannot be represented: dynamic shapes, calls, ops SOAP does not
/// understand that produce tensors used by partitionable ops.
FailureOr<ExtractedOpGraph>
extractOpGraph(func::FuncOp func, const OpGraphExtractionOptions &options = {});

} // namespace soap
} // namespace mlir

#endif // SOAP_ANALYSIS_OPGRAPHEXTRACTION_H
