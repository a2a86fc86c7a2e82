//===- Lookup.h - Embedding lookups written as reductions -------*- C++ -*-===//
//
// An embedding lookup in linalg on tensors is a one-hot selection over the
// table's rows: `out = select(id == r, table[r, ...], out)` with r a
// reduction loop (soap-lookup-reductions writes torch-mlir's gathers so, and
// the model zoo builds them so). Its gradient is the transposed selection,
// `acc + select(id == r, grad, 0)` with r a parallel loop. Once partitioned,
// a tile over rows [o, o + n) compares the id with `r + o`.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_ANALYSIS_LOOKUP_H
#define SOAP_ANALYSIS_LOOKUP_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir {
namespace soap {

/// An integer input's element compared for equality with a loop's index
/// plus a constant offset (0 before partitioning).
struct IdEqualsLoop {
  OpOperand *id;
  unsigned loop;
  int64_t offset = 0;
};

/// `cmp` (in `op`'s body) is `id == r + offset` or `r + offset == id`: the
/// block argument of an integer input of `op` and `linalg.index r`, shifted
/// by a constant (an `affine.apply` or `arith.addi`, as tiling offsets
/// indices) and index-cast or not.
std::optional<IdEqualsLoop> matchIdEqualsLoop(linalg::LinalgOp op,
                                              arith::CmpIOp cmp);

/// `op`'s one output is a one-hot selection over a reduction loop r: the
/// body yields `select(id == r + offset, value, acc)`, r is the op's only
/// reduction loop, the id's indexing map does not use r and `value` does
/// not read the accumulator. At most one r matches each output element.
std::optional<IdEqualsLoop> matchOneHotSelection(linalg::LinalgOp op);

} // namespace soap
} // namespace mlir

#endif // SOAP_ANALYSIS_LOOKUP_H
