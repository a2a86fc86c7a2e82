//===- IterationSpace.cpp - Loops of an op in the SOAP space --------------===//

#include "soap/Analysis/IterationSpace.h"

#include "soap/Analysis/Lookup.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::soap;

bool IterationSpace::hasStaticExtents() const {
  return llvm::none_of(extents, ShapedType::isDynamic);
}

std::string IterationSpace::getKindLetters() const {
  std::string letters;
  for (LoopKind kind : kinds)
    letters.push_back(loopKindLetter(kind));
  return letters;
}

FailureOr<SmallVector<ReductionKind>>
mlir::soap::getReductionCombiners(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInits() == 0)
    return failure();
  Block *body = linalgOp.getBlock();
  if (!body)
    return failure();
  SmallVector<BlockArgument> accs;
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    accs.push_back(linalgOp.getMatchingBlockArgument(&init));
  Operation *terminator = body->getTerminator();
  if (terminator->getNumOperands() != accs.size())
    return failure();
  SmallVector<ReductionKind> kinds;
  for (auto [i, acc] : llvm::enumerate(accs)) {
    Operation *def = terminator->getOperand(i).getDefiningOp();
    if (!def || def->getBlock() != body || def->getNumOperands() != 2 ||
        !llvm::is_contained(def->getOperands(), acc))
      return failure();
    // The combined value must not read an accumulator (acc + acc * x is
    // no sum of independent terms: its partials cannot be combined).
    Value other = def->getOperand(0) == acc ? def->getOperand(1)
                                            : def->getOperand(0);
    SmallVector<Value> work = {other};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (llvm::is_contained(accs, v))
        return failure();
      Operation *inner = v.getDefiningOp();
      if (inner && inner->getBlock() == body && seen.insert(inner).second)
        llvm::append_range(work, inner->getOperands());
    }
    if (isa<arith::AddFOp, arith::AddIOp>(def))
      kinds.push_back(ReductionKind::Sum);
    else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(def))
      kinds.push_back(ReductionKind::Max);
    else if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(def))
      kinds.push_back(ReductionKind::Min);
    else
      return failure();
  }
  return kinds;
}

FailureOr<ReductionKind> mlir::soap::getReductionCombiner(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInits() != 1)
    return failure();
  FailureOr<SmallVector<ReductionKind>> kinds = getReductionCombiners(op);
  if (failed(kinds))
    return failure();
  return kinds->front();
}

TypedAttr mlir::soap::getSplatValue(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    Attribute scalar;
    if (matchPattern(fill.getInputs()[0], m_Constant(&scalar)))
      return dyn_cast<TypedAttr>(scalar);
    return {};
  }
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return dyn_cast<TypedAttr>(dense.getSplatValue<Attribute>());
  return {};
}

/// `v` is zero everywhere: a zero fill or a zero splat constant.
static bool isZeroTensor(Value v) {
  TypedAttr value = getSplatValue(v);
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValue().isZero();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return i.getValue().isZero();
  return false;
}

FailureOr<ReductionKind> mlir::soap::getSplitCombiner(Operation *op) {
  if (FailureOr<ReductionKind> kind = getReductionCombiner(op); succeeded(kind))
    return kind;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp && matchOneHotSelection(linalgOp) &&
      isZeroTensor(linalgOp.getDpsInitOperand(0)->get()))
    return ReductionKind::Sum;
  return failure();
}

Value mlir::soap::combineScalars(OpBuilder &b, Location loc, ReductionKind kind,
                                 Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case ReductionKind::Sum:
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult()
                   : arith::AddIOp::create(b, loc, x, y).getResult();
  case ReductionKind::Max:
    return isFloat ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                   : arith::MaxSIOp::create(b, loc, x, y).getResult();
  case ReductionKind::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, x, y).getResult()
                   : arith::MinSIOp::create(b, loc, x, y).getResult();
  }
  llvm_unreachable("unknown reduction kind");
}

TypedAttr mlir::soap::getReductionIdentity(Builder &b, ReductionKind kind,
                                           Type elementType) {
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    if (kind == ReductionKind::Sum)
      return b.getFloatAttr(elementType, 0.0);
    return b.getFloatAttr(
        elementType, APFloat::getInf(floatType.getFloatSemantics(),
                                     /*Negative=*/kind == ReductionKind::Max));
  }
  unsigned width = cast<IntegerType>(elementType).getWidth();
  if (kind == ReductionKind::Sum)
    return b.getIntegerAttr(elementType, 0);
  return b.getIntegerAttr(elementType, kind == ReductionKind::Max
                                           ? APInt::getSignedMinValue(width)
                                           : APInt::getSignedMaxValue(width));
}

bool mlir::soap::hasIterationSpace(Operation *op) {
  return isa<linalg::LinalgOp, TilingInterface, tensor::InsertSliceOp,
             tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::ConcatOp>(op);
}

/// Data movement between tensors (slices, reshapes, concatenation): one
/// parallel loop per dimension of the larger side (the destination of an
/// insertion, the expanded side of a reshape, the result otherwise), as the op
/// graph extraction partitions them.
static FailureOr<IterationSpace> getDataMovementIterationSpace(Operation *op) {
  RankedTensorType type;
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    type = insert.getDestType();
  else if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
    type = extract.getType();
  else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    type = expand.getResultType();
  else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    type = collapse.getSrcType();
  else if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    type = cast<RankedTensorType>(concat.getType());
  else
    return failure();
  IterationSpace space;
  space.extents.assign(type.getShape().begin(), type.getShape().end());
  for (int64_t d = 0; d < type.getRank(); ++d)
    space.kinds.push_back(d == 0 ? LoopKind::Sample : LoopKind::Attribute);
  return space;
}

/// Returns the loop that `map` uses for tensor dimension `dim`, if the result
/// is a plain loop index.
static std::optional<unsigned> loopOfDim(AffineMap map, unsigned dim) {
  if (dim >= map.getNumResults())
    return std::nullopt;
  if (auto d = dyn_cast<AffineDimExpr>(map.getResult(dim)))
    return d.getPosition();
  return std::nullopt;
}

/// Default weight heuristic: a constant is a weight.
static bool isConstantOperand(OpOperand &operand) {
  return matchPattern(operand.get(), m_Constant());
}

static FailureOr<IterationSpace>
getLinalgIterationSpace(linalg::LinalgOp op,
                        std::optional<IsParameterFn> isParameter) {
  IterationSpace space;
  space.extents = op.getStaticLoopRanges();
  space.indexingMaps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = iterators.size();
  if (space.extents.size() != numLoops)
    return failure();

  auto isParallel = [&](unsigned loop) {
    return iterators[loop] == utils::IteratorType::parallel;
  };
  auto mapUses = [](AffineMap map, unsigned loop) {
    return map.isFunctionOfDim(loop);
  };

  // Parameters decided by the caller (or constants) first; they never carry
  // the sample loop.
  SmallVector<OpOperand *> inputs;
  for (OpOperand *operand : op.getDpsInputOperands())
    inputs.push_back(operand);
  space.isParameterOperand.assign(inputs.size(), false);
  for (auto [i, operand] : llvm::enumerate(inputs)) {
    if (!isa<ShapedType>(operand->get().getType()))
      continue;
    space.isParameterOperand[i] =
        isParameter ? (*isParameter)(*operand) : isConstantOperand(*operand);
  }

  // Sample loop: the parallel loop indexing dimension 0 of the first data
  // input; failing that, of the first output.
  std::optional<unsigned> sample;
  for (auto [i, operand] : llvm::enumerate(inputs)) {
    auto type = dyn_cast<ShapedType>(operand->get().getType());
    if (!type || type.getRank() == 0 || space.isParameterOperand[i])
      continue;
    std::optional<unsigned> loop =
        loopOfDim(op.getMatchingIndexingMap(operand), 0);
    if (loop && isParallel(*loop)) {
      sample = loop;
      break;
    }
  }
  if (!sample && op.getNumDpsInits() > 0) {
    std::optional<unsigned> loop =
        loopOfDim(op.getMatchingIndexingMap(op.getDpsInitOperand(0)), 0);
    if (loop && isParallel(*loop))
      sample = loop;
  }

  // Without a caller's decision, an input other than the first data input
  // that does not carry the sample loop (the filter of a convolution, the
  // weight side of a matmul, a bias) is a weight.
  if (!isParameter && sample) {
    bool seenData = false;
    for (auto [i, operand] : llvm::enumerate(inputs)) {
      auto type = dyn_cast<ShapedType>(operand->get().getType());
      if (!type || type.getRank() == 0 || space.isParameterOperand[i])
        continue;
      if (!seenData) {
        seenData = true;
        continue;
      }
      // A constant result (torch-mlir's broadcast of a size-1 batch) marks
      // an activation broadcast along the batch, not a weight.
      AffineMap map = op.getMatchingIndexingMap(operand);
      bool broadcastsBatch = llvm::any_of(map.getResults(), [](AffineExpr e) {
        return isa<AffineConstantExpr>(e);
      });
      if (!mapUses(map, *sample) && !broadcastsBatch)
        space.isParameterOperand[i] = true;
    }
  }

  space.kinds.resize(numLoops, LoopKind::Attribute);
  for (unsigned loop = 0; loop < numLoops; ++loop) {
    if (!isParallel(loop)) {
      space.kinds[loop] = LoopKind::Reduction;
      continue;
    }
    if (sample && loop == *sample) {
      space.kinds[loop] = LoopKind::Sample;
      continue;
    }
    bool inParameter = false;
    for (auto [i, operand] : llvm::enumerate(inputs))
      if (space.isParameterOperand[i] &&
          mapUses(op.getMatchingIndexingMap(operand), loop))
        inParameter = true;
    bool inOutput = llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
      return mapUses(op.getMatchingIndexingMap(&init), loop);
    });
    if (inParameter && inOutput)
      space.kinds[loop] = LoopKind::Parameter;
  }
  return space;
}

/// Ops that implement TilingInterface but are not linalg ops (tensor.pad,
/// linalg.pack, ...): the iteration space is that of the first result, whose
/// shape gives the extents (no IR is built to find them).
static FailureOr<IterationSpace>
getTilingIterationSpace(TilingInterface op) {
  SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
  if (op->getNumResults() == 0)
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() != static_cast<int64_t>(iterators.size()))
    return failure();
  IterationSpace space;
  space.extents.assign(type.getShape().begin(), type.getShape().end());
  for (auto [loop, iterator] : llvm::enumerate(iterators)) {
    if (iterator != utils::IteratorType::parallel)
      space.kinds.push_back(LoopKind::Reduction);
    else
      space.kinds.push_back(loop == 0 ? LoopKind::Sample : LoopKind::Attribute);
  }
  return space;
}

FailureOr<IterationSpace>
mlir::soap::getIterationSpace(Operation *op,
                              std::optional<IsParameterFn> isParameter) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return getLinalgIterationSpace(linalgOp, isParameter);
  if (auto tilingOp = dyn_cast<TilingInterface>(op))
    return getTilingIterationSpace(tilingOp);
  return getDataMovementIterationSpace(op);
}
