//===- IterationSpace.h - Loops of an op in the SOAP space ------*- C++ -*-===//
//
// The one place that decides, from upstream interfaces (linalg indexing maps
// and iterator types, TilingInterface), what an operation's iteration space is
// and which role (Sample / Attribute / Parameter / Reduction) each loop plays.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_ANALYSIS_ITERATIONSPACE_H
#define SOAP_ANALYSIS_ITERATIONSPACE_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Simulator/LoopKind.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir {
namespace soap {

using ::soap::LoopKind;
using ::soap::loopKindLetter;
using ::soap::loopKindName;

/// Decides whether an input operand of an op is a parameter (weight).
using IsParameterFn = llvm::function_ref<bool(OpOperand &)>;

/// The iteration space of one operation.
struct IterationSpace {
  /// Extent of each loop; ShapedType::kDynamic where it is not static.
  SmallVector<int64_t> extents;
  /// Role of each loop.
  SmallVector<LoopKind> kinds;
  /// For each operand (inputs then inits, as linalg orders them), the map from
  /// loops to tensor dimensions. Empty for ops known only via TilingInterface.
  SmallVector<AffineMap> indexingMaps;
  /// For each input operand, whether it is a parameter (weight).
  SmallVector<bool> isParameterOperand;

  int64_t getNumLoops() const { return extents.size(); }
  bool hasStaticExtents() const;
  /// "SAPR"-style string: one letter per loop.
  std::string getKindLetters() const;
};

/// How the partial results of a linalg op's split reduction combine: the
/// op's body combines its one output's block argument with a sum, max or
/// min. Fails for anything else (products, argmax, several outputs).
FailureOr<ReductionKind> getReductionCombiner(Operation *op);

/// The same for each output of an op with one or more: output i's yielded
/// value combines its block argument with a sum, max or min of a value that
/// reads no output's block argument. Fails if any output has none.
FailureOr<SmallVector<ReductionKind>> getReductionCombiners(Operation *op);

/// The value `v` holds everywhere, when its producer says so: a
/// `linalg.fill` of a constant scalar or a splat constant. Null otherwise.
TypedAttr getSplatValue(Value v);

/// How the partial results of `op`'s split reduction combine: its combiner
/// (getReductionCombiner), or a sum for a one-hot selection whose output
/// starts at zero (an embedding lookup, `select(id == r, table[r], acc)`
/// over the table's rows r, its output a zero fill; see Lookup.h): split
/// over r, the partial that holds the id's row selects it and the others
/// keep their zeros, so the sum of the partials is the lookup.
FailureOr<ReductionKind> getSplitCombiner(Operation *op);

/// The identity of `kind` for `elementType` (0, -inf / the smallest integer,
/// +inf / the largest integer): where a split reduction's partials start.
TypedAttr getReductionIdentity(Builder &b, ReductionKind kind,
                               Type elementType);

/// `x` combined with `y` (scalars of one float or integer type) by `kind`:
/// addf / addi, maximumf / maxsi, minimumf / minsi.
Value combineScalars(OpBuilder &b, Location loc, ReductionKind kind, Value x,
                     Value y);

/// True when `op` has an iteration space SOAP can partition: a linalg op, an
/// op implementing TilingInterface, or tensor data movement (slices, reshapes,
/// concatenation).
bool hasIterationSpace(Operation *op);

/// Computes the iteration space of `op`. Fails (without emitting anything)
/// when `op` has none. `isParameter` decides which inputs are weights; without
/// it, constants and inputs that do not carry the sample loop are weights.
FailureOr<IterationSpace>
getIterationSpace(Operation *op,
                  std::optional<IsParameterFn> isParameter = std::nullopt);

} // namespace soap
} // namespace mlir

#endif // SOAP_ANALYSIS_ITERATIONSPACE_H
