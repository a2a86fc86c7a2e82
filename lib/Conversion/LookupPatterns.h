//===- LookupPatterns.h - Embedding lookups written as reductions -*- C++ -*-===//
//
// What soap-gather-lookups and soap-scatter-lookup-gradients recognise in
// the bodies of linalg.generic ops: an id compared with a loop's index
// (the one-hot test of a lookup written as a reduction over the table's
// rows), and the range test of the rewritten code.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_LOOKUPPATTERNS_H
#define SOAP_LIB_CONVERSION_LOOKUPPATTERNS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir {
namespace soap {

/// An integer input's element compared for equality with a loop's index.
struct IdEqualsLoop {
  OpOperand *id;
  unsigned loop;
};

/// `cmp` (in `op`'s body) is `id == r` or `r == id`: the block argument of
/// an integer input of `op` and `linalg.index r`, index-cast or not.
std::optional<IdEqualsLoop> matchIdEqualsLoop(linalg::GenericOp op,
                                              arith::CmpIOp cmp);

/// `0 <= id < rows` (an i1), built at `b`'s insertion point.
Value idInRange(OpBuilder &b, Location loc, Value id, int64_t rows);

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_LOOKUPPATTERNS_H
