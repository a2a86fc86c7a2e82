//===- LookupPatterns.h - Embedding lookups written as reductions -*- C++
//-*-===//
//
// What soap-gather-lookups and soap-scatter-lookup-gradients build: the
// range test of an id against the rows a (tile of a) lookup holds, and the
// row it selects there. What they match is in soap/Analysis/Lookup.h.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_CONVERSION_LOOKUPPATTERNS_H
#define SOAP_LIB_CONVERSION_LOOKUPPATTERNS_H

#include "soap/Analysis/Lookup.h"

namespace mlir {
namespace soap {

/// `offset <= id < offset + rows` (an i1), built at `b`'s insertion point.
Value idInRange(OpBuilder &b, Location loc, Value id, int64_t offset,
                int64_t rows);

/// The row of the tile over rows [offset, offset + rows) that `id` selects
/// (`id - offset`, an index): the safe row 0 where `inRange` is false, or,
/// without `inRange`, where the id is known to be in range.
Value tileRow(OpBuilder &b, Location loc, Value id, Value inRange,
              int64_t offset);

} // namespace soap
} // namespace mlir

#endif // SOAP_LIB_CONVERSION_LOOKUPPATTERNS_H
