//===- LookupPatterns.cpp - Embedding lookups written as reductions -------===//

#include "LookupPatterns.h"

using namespace mlir;

Value soap::idInRange(OpBuilder &b, Location loc, Value id, int64_t offset,
                      int64_t rows) {
  Type type = id.getType();
  Value first =
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, offset));
  Value limit =
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, offset + rows));
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, id, first),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, limit));
}

Value soap::tileRow(OpBuilder &b, Location loc, Value id, Value inRange,
                    int64_t offset) {
  Type type = id.getType();
  Value first =
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, offset));
  Value row =
      inRange ? arith::SelectOp::create(b, loc, inRange, id, first) : id;
  if (offset != 0)
    row = arith::SubIOp::create(b, loc, row, first);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), row);
}
