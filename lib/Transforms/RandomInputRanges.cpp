//===- RandomInputRanges.cpp - He-uniform ranges for random weights -------===//
//
// See Passes.td (soap-random-input-ranges).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/IterationSpace.h"
#include "soap/Analysis/Lookup.h"
#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_RANDOMINPUTRANGES
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// Whether the all-parallel linalg op `op` (a transpose, broadcast, copy or
/// generic) yields its one input's element, as it is or converted to
/// another float or integer type (a bf16 -> f32 widening, an i32 -> i64
/// one of ids): its result holds its input's values, rearranged.
static bool rearrangesItsInput(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || !op.getBlock())
    return false;
  Block &body = *op.getBlock();
  Operation *yield = body.getTerminator();
  if (yield->getNumOperands() != 1)
    return false;
  Value v = yield->getOperand(0);
  if (Operation *def = v.getDefiningOp();
      def && isa<arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp, arith::ExtUIOp,
                 arith::TruncIOp, arith::IndexCastOp>(def))
    v = def->getOperand(0);
  return v == body.getArgument(0);
}

/// The argument of `func`'s body whose values `v` holds, rearranged
/// (reshaped, sliced, or by rearrangesItsInput's linalg ops): what a weight
/// operand or an id reads. Null when `v` computes something else.
static BlockArgument traceLayout(Value v, func::FuncOp func) {
  for (unsigned depth = 0; depth < 16; ++depth) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &func.getBody().front() ? arg : BlockArgument();
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ExtractSliceOp>(def))
      v = def->getOperand(0);
    else if (linalgOp && rearrangesItsInput(linalgOp))
      v = linalgOp.getDpsInputOperand(0)->get();
    else
      return {};
  }
  return {};
}

/// Whether `op` sums products (a matmul, a convolution): not a one-hot
/// select (an embedding lookup) or a plain sum (a mean, a norm).
static bool sumsProducts(linalg::LinalgOp op) {
  FailureOr<ReductionKind> combiner = getReductionCombiner(op);
  if (failed(combiner) || *combiner != ReductionKind::Sum)
    return false;
  return llvm::any_of(op.getBlock()->getOperations(), [](Operation &inner) {
    return isa<arith::MulFOp, arith::MulIOp>(inner);
  });
}

struct RandomInputRangesPass
    : public mlir::soap::impl::RandomInputRangesBase<RandomInputRangesPass> {
  using RandomInputRangesBase::RandomInputRangesBase;

  void runOnOperation() override {
    FailureOr<func::FuncOp> found = findEntryFunction(getOperation(), entry);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    if (func.isExternal())
      return;
    llvm::SmallBitVector parameters = getParameterArguments(func);

    // The largest fan-in each weight argument is read with.
    llvm::DenseMap<unsigned, int64_t> fanIns;
    func.walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() == 0 || !sumsProducts(op))
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      for (OpOperand *input : op.getDpsInputOperands()) {
        BlockArgument arg = traceLayout(input->get(), func);
        if (!arg || !parameters.test(arg.getArgNumber()))
          continue;
        AffineMap map = op.getMatchingIndexingMap(input);
        int64_t fanIn = 1;
        bool reduced = false, known = true;
        for (unsigned d = 0; d < map.getNumDims(); ++d) {
          if (iterators[d] != utils::IteratorType::reduction ||
              !map.isFunctionOfDim(d))
            continue;
          reduced = true;
          known &= !ShapedType::isDynamic(ranges[d]) && ranges[d] > 0;
          if (known)
            fanIn *= ranges[d];
        }
        if (!reduced || !known)
          continue;
        int64_t &best = fanIns[arg.getArgNumber()];
        best = std::max(best, fanIn);
      }
    });

    // The fewest rows an integer argument's ids are compared with: an
    // embedding lookup's `id == r` over the table's rows r, its gradient's
    // over the rows of the table's gradient, a label's one-hot over the
    // classes.
    llvm::DenseMap<unsigned, int64_t> idRows;
    func.walk([&](linalg::LinalgOp op) {
      if (!op.getBlock())
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      op.getBlock()->walk([&](arith::CmpIOp cmp) {
        std::optional<IdEqualsLoop> test = matchIdEqualsLoop(op, cmp);
        if (!test || test->offset != 0)
          return;
        int64_t rows = ranges[test->loop];
        BlockArgument arg = traceLayout(test->id->get(), func);
        if (!arg || ShapedType::isDynamic(rows) || rows <= 0)
          return;
        auto [it, inserted] = idRows.try_emplace(arg.getArgNumber(), rows);
        if (!inserted)
          it->second = std::min(it->second, rows);
      });
    });

    MLIRContext *context = &getContext();
    for (auto [index, rows] : idRows) {
      auto type = dyn_cast<ShapedType>(func.getArgument(index).getType());
      if (!type || !isa<IntegerType>(type.getElementType()) ||
          type.getElementType().getIntOrFloatBitWidth() < 2 ||
          func.getArgAttr(index, SOAPDialect::kInitialValueAttrName))
        continue;
      // No more ids than the type holds (an i8 id against 300 rows).
      unsigned width = type.getElementType().getIntOrFloatBitWidth();
      if (width < 64)
        rows = std::min<int64_t>(rows, int64_t(1) << (width - 1));
      func.setArgAttr(
          index, SOAPDialect::kRandomRangeAttrName,
          DenseF64ArrayAttr::get(context, {0.0, static_cast<double>(rows)}));
    }
    for (auto [index, fanIn] : fanIns) {
      auto type = dyn_cast<ShapedType>(func.getArgument(index).getType());
      if (!type || !isa<FloatType>(type.getElementType()) ||
          func.getArgAttr(index, SOAPDialect::kInitialValueAttrName))
        continue;
      double bound = std::sqrt(6.0 / static_cast<double>(fanIn));
      func.setArgAttr(index, SOAPDialect::kRandomRangeAttrName,
                      DenseF64ArrayAttr::get(context, {-bound, bound}));
    }
  }
};

} // namespace
