//===- RescaleBatch.cpp - Set the batch size of a model -------------------===//
//
// Follows the batch dimension from the entry function's data arguments
// through the function (both ways along every op it meets, to a fixpoint) and
// rescales every tensor dimension it reaches.
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_RESCALEBATCH
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// Which dimensions of which values carry the batch.
class BatchPropagation {
public:
  explicit BatchPropagation(func::FuncOp func) : func(func) {}

  void mark(Value value, int64_t dim) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || dim < 0 || dim >= type.getRank())
      return;
    SmallVector<bool> &dims = batchDims[value];
    dims.resize(type.getRank(), false);
    if (dims[dim])
      return;
    dims[dim] = true;
    if (Operation *def = value.getDefiningOp())
      worklist.insert(def);
    for (Operation *user : value.getUsers())
      worklist.insert(user);
  }

  bool isBatch(Value value, int64_t dim) const {
    auto it = batchDims.find(value);
    return it != batchDims.end() && dim < (int64_t)it->second.size() &&
           it->second[dim];
  }

  void run() {
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      visit(op);
    }
  }

  /// In the order found (a deterministic walk: diagnostics name the same
  /// value on every run).
  llvm::MapVector<Value, SmallVector<bool>> batchDims;
  /// Generic ops whose broadcast map (constant 0 at a batch position) must
  /// index the batch loop instead: (op, operand number, result position,
  /// loop).
  SmallVector<std::tuple<linalg::GenericOp, unsigned, unsigned, unsigned>>
      broadcastFixes;

private:
  void visitLinalg(linalg::LinalgOp op) {
    SmallVector<OpOperand *> operands;
    for (OpOperand &o : op->getOpOperands())
      if (isa<RankedTensorType>(o.get().getType()))
        operands.push_back(&o);
    AffineMap outMap = op.getNumDpsInits()
                           ? op.getMatchingIndexingMap(op.getDpsInitOperand(0))
                           : AffineMap();
    llvm::SmallSetVector<unsigned, 2> loops;
    auto collect = [&](OpOperand *o, Value value) {
      AffineMap map = op.getMatchingIndexingMap(o);
      for (unsigned p = 0; p < map.getNumResults(); ++p) {
        if (!isBatch(value, p))
          continue;
        AffineExpr e = map.getResult(p);
        if (auto d = dyn_cast<AffineDimExpr>(e)) {
          loops.insert(d.getPosition());
        } else if (isa<AffineConstantExpr>(e) && outMap &&
                   outMap.getNumResults() == map.getNumResults()) {
          if (auto d = dyn_cast<AffineDimExpr>(outMap.getResult(p))) {
            loops.insert(d.getPosition());
            if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
              broadcastFixes.push_back(
                  {generic, o->getOperandNumber(), p, d.getPosition()});
          }
        }
      }
    };
    for (OpOperand *o : operands)
      collect(o, o->get());
    for (OpResult res : op->getResults())
      collect(op.getDpsInitOperand(res.getResultNumber()), res);
    for (unsigned loop : loops) {
      for (OpOperand *o : operands) {
        AffineMap map = op.getMatchingIndexingMap(o);
        for (unsigned p = 0; p < map.getNumResults(); ++p)
          if (auto d = dyn_cast<AffineDimExpr>(map.getResult(p));
              d && d.getPosition() == loop) {
            mark(o->get(), p);
            if (op.isDpsInit(o))
              mark(op.getTiedOpResult(o), p);
          }
      }
    }
  }

  /// Ops whose operands and results line up dimension by dimension.
  void visitSameRank(Operation *op) {
    SmallVector<Value> values;
    for (Value v : op->getOperands())
      if (isa<RankedTensorType>(v.getType()))
        values.push_back(v);
    for (Value v : op->getResults())
      if (isa<RankedTensorType>(v.getType()))
        values.push_back(v);
    for (Value a : values)
      for (Value b : values) {
        auto ta = cast<RankedTensorType>(a.getType());
        auto tb = cast<RankedTensorType>(b.getType());
        if (ta.getRank() != tb.getRank())
          continue;
        for (int64_t d = 0; d < ta.getRank(); ++d)
          if (isBatch(a, d))
            mark(b, d);
      }
  }

  void visitReshape(Value collapsed, Value expanded,
                    ArrayRef<ReassociationIndices> groups) {
    for (auto [i, group] : llvm::enumerate(groups)) {
      if (isBatch(collapsed, i))
        mark(expanded, group.front());
      for (int64_t d : group)
        if (isBatch(expanded, d))
          mark(collapsed, i);
    }
  }

  void visit(Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return visitLinalg(linalgOp);
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      return visitReshape(expand.getSrc(), expand.getResult(),
                          expand.getReassociationIndices());
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      return visitReshape(collapse.getResult(), collapse.getSrc(),
                          collapse.getReassociationIndices());
    if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
      llvm::SmallBitVector dropped = extract.getDroppedDims();
      int64_t r = 0;
      for (int64_t d = 0; d < extract.getSourceType().getRank(); ++d) {
        if (dropped.test(d))
          continue;
        if (isBatch(extract.getSource(), d))
          mark(extract.getResult(), r);
        if (isBatch(extract.getResult(), r))
          mark(extract.getSource(), d);
        ++r;
      }
      return;
    }
    if (isa<tensor::PadOp, tensor::InsertSliceOp, tensor::ConcatOp,
            tensor::CastOp>(op) ||
        op->hasTrait<OpTrait::Elementwise>())
      return visitSameRank(op);
  }

  func::FuncOp func;
  llvm::SetVector<Operation *> worklist;
};

struct RescaleBatchPass
    : public mlir::soap::impl::RescaleBatchBase<RescaleBatchPass> {
  using RescaleBatchBase::RescaleBatchBase;

  void runOnOperation() override {
    if (batch == 0)
      return;
    if (batch < 0) {
      getOperation().emitError() << "batch must be positive, got " << batch;
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = findEntryFunction(getOperation(), entry);
    if (failed(func) || failed(rescale(*func)))
      return signalPassFailure();
  }

  LogicalResult rescale(func::FuncOp func);
  LogicalResult specializeDynamicBatch(func::FuncOp func,
                                       const llvm::SmallBitVector &parameters);
};

} // namespace

/// An export with a symbolic batch size (torch-mlir's `dynamic_shapes`,
/// JAX's shape polymorphism) has data arguments whose leading dimension is
/// dynamic. They get the static batch; upstream canonicalization carries it
/// through the function (`tensor.dim` folds to the constant, `tensor.empty`,
/// reshapes and linalg ops take static types, the casts fold away), and the
/// results take the static types they then have. Fails with a located error
/// where a dynamic dimension remains.
LogicalResult RescaleBatchPass::specializeDynamicBatch(
    func::FuncOp func, const llvm::SmallBitVector &parameters) {
  Block &body = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  bool changed = false;
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || parameters.test(arg.getArgNumber()) || type.getRank() == 0 ||
        !type.isDynamicDim(0))
      continue;
    for (int64_t d = 1; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        return func.emitError()
               << "cannot set the batch: argument #" << arg.getArgNumber()
               << " of type " << type << " has dynamic dimension " << d
               << " besides its leading (batch) dimension; SOAP partitions "
                  "static shapes only";
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = batch;
    arg.setType(type.clone(shape));
    auto cast = tensor::CastOp::create(builder, arg.getLoc(), type, arg);
    arg.replaceAllUsesExcept(cast, cast);
    changed = true;
  }
  if (!changed)
    return success();
  func.setFunctionType(builder.getFunctionType(
      body.getArgumentTypes(), func.getFunctionType().getResults()));
  OpPassManager canonicalize(func::FuncOp::getOperationName());
  canonicalize.addPass(createCanonicalizerPass());
  if (failed(runPipeline(canonicalize, func)))
    return failure();
  for (OpOperand &result : body.getTerminator()->getOpOperands())
    if (auto cast = result.get().getDefiningOp<tensor::CastOp>())
      if (cast.getSource().getType().hasStaticShape()) {
        result.set(cast.getSource());
        if (cast.use_empty())
          cast.erase();
      }
  func.setFunctionType(builder.getFunctionType(
      body.getArgumentTypes(), body.getTerminator()->getOperandTypes()));
  WalkResult dynamic = func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType());
          type && !type.hasStaticShape()) {
        op->emitError() << "cannot set the batch: '" << op->getName()
                        << "' still produces " << type << " once the batch is "
                        << static_cast<int64_t>(batch)
                        << "; SOAP partitions static shapes only";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(dynamic.wasInterrupted());
}

LogicalResult RescaleBatchPass::rescale(func::FuncOp func) {
  // The batch: the leading dimension of every data argument.
  Block &body = func.getBody().front();
  SmallVector<BlockArgument> data;
  llvm::SmallBitVector parameters = getParameterArguments(func);
  if (failed(specializeDynamicBatch(func, parameters)))
    return failure();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || parameters.test(arg.getArgNumber()))
      continue;
    if (type.getRank() == 0 || type.isDynamicDim(0))
      return func.emitError()
             << "cannot identify the batch dimension: argument #"
             << arg.getArgNumber() << " of type " << type
             << " has no static leading dimension";
    data.push_back(arg);
  }
  if (data.empty())
    return func.emitError() << "cannot identify the batch dimension: '"
                            << func.getSymName()
                            << "' has no tensor argument that is not a "
                               "parameter";
  int64_t oldBatch = cast<RankedTensorType>(data.front().getType()).getDimSize(0);
  for (BlockArgument arg : data)
    if (cast<RankedTensorType>(arg.getType()).getDimSize(0) != oldBatch)
      return func.emitError()
             << "cannot identify the batch dimension: the data arguments' "
                "leading dimensions differ ("
             << oldBatch << " and "
             << cast<RankedTensorType>(arg.getType()).getDimSize(0)
             << "); mark the weights with {soap.parameter}";
  if (oldBatch == batch)
    return success();
  if (oldBatch == 0)
    return func.emitError()
           << "cannot rescale the batch: argument #"
           << data.front().getArgNumber() << " has an empty leading dimension ("
           << data.front().getType() << ")";

  // The propagation follows values through ops on tensors; a loop's or a
  // branch's region (scf.for, scf.if, scf.while) carries them past it.
  WalkResult regions = func.walk([&](Operation *op) {
    if (!isa<RegionBranchOpInterface>(op) ||
        op->getParentOp() != func.getOperation())
      return WalkResult::advance();
    op->emitError() << "cannot rescale the batch through '" << op->getName()
                    << "' (its regions); SOAP partitions straight-line "
                       "tensor programs";
    return WalkResult::interrupt();
  });
  if (regions.wasInterrupted())
    return failure();

  BatchPropagation propagation(func);
  for (BlockArgument arg : data)
    propagation.mark(arg, 0);
  propagation.run();

  bool tooLarge = false;
  auto newShape = [&](Value value, SmallVector<int64_t> &shape) -> LogicalResult {
    auto type = cast<RankedTensorType>(value.getType());
    shape.assign(type.getShape().begin(), type.getShape().end());
    const SmallVector<bool> &dims = propagation.batchDims[value];
    for (auto [d, isBatch] : llvm::enumerate(dims)) {
      if (!isBatch)
        continue;
      if (shape[d] % oldBatch != 0)
        return failure();
      if (llvm::MulOverflow(shape[d] / oldBatch, int64_t(batch), shape[d]) ||
          shape[d] >= (int64_t(1) << 52)) {
        tooLarge = true;
        return failure();
      }
    }
    return success();
  };

  // Rewrite attributes that spell out shapes, then the types.
  OpBuilder builder(func.getContext());
  SmallVector<std::pair<Value, RankedTensorType>> retypes;
  for (auto &[value, dims] : propagation.batchDims) {
    SmallVector<int64_t> shape;
    Operation *owner = value.getDefiningOp();
    if (auto extract = dyn_cast_or_null<tensor::ExtractSliceOp>(owner)) {
      auto srcType = extract.getSourceType();
      for (int64_t d = 0; d < srcType.getRank(); ++d)
        if (propagation.isBatch(extract.getSource(), d) &&
            (extract.getStaticSizes()[d] != srcType.getDimSize(d) ||
             extract.getStaticOffsets()[d] != 0))
          return extract.emitError()
                 << "cannot rescale the batch through a slice of part of "
                    "the batch";
    }
    if (failed(newShape(value, shape)))
      return (owner ? owner->emitError() : func.emitError())
             << "cannot rescale the batch: a dimension of " << value.getType()
             << (tooLarge ? " would exceed 2^52 at batch "
                          : " is not a multiple of the batch ")
             << (tooLarge ? int64_t(batch) : oldBatch);
    auto type = cast<RankedTensorType>(value.getType());
    retypes.push_back({value, type.clone(shape)});
  }
  for (auto &[value, newType] : retypes) {
    Operation *owner = value.getDefiningOp();
    if (auto cst = dyn_cast_or_null<arith::ConstantOp>(owner)) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      if (!dense || !dense.isSplat())
        return cst.emitError()
               << "cannot rescale the batch: this constant depends on the "
                  "batch size and is not a splat";
      cst.setValueAttr(DenseElementsAttr::get(newType,
                                              dense.getSplatValue<Attribute>()));
    } else if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(owner)) {
      expand.setStaticOutputShape(newType.getShape());
    } else if (auto extract = dyn_cast_or_null<tensor::ExtractSliceOp>(owner)) {
      // Slices that take the whole batch keep taking it.
      SmallVector<int64_t> sizes(extract.getStaticSizes());
      auto srcType = extract.getSourceType();
      SmallVector<int64_t> srcShape;
      (void)newShape(extract.getSource(), srcShape);
      for (int64_t d = 0; d < srcType.getRank(); ++d)
        if (propagation.isBatch(extract.getSource(), d))
          sizes[d] = srcShape[d];
      extract.setStaticSizes(sizes);
    } else if (owner && !isa<linalg::LinalgOp, tensor::EmptyOp, tensor::PadOp,
                             tensor::InsertSliceOp, tensor::ConcatOp,
                             tensor::CastOp, tensor::CollapseShapeOp>(owner) &&
               !owner->hasTrait<OpTrait::Elementwise>()) {
      return owner->emitError() << "cannot rescale the batch through '"
                                << owner->getName() << "'";
    }
  }
  for (Operation &op : body)
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      SmallVector<int64_t> sizes(insert.getStaticSizes());
      SmallVector<int64_t> srcShape;
      bool changed = false;
      if (propagation.batchDims.count(insert.getSource())) {
        (void)newShape(insert.getSource(), srcShape);
        for (size_t d = 0; d < sizes.size() && d < srcShape.size(); ++d)
          if (propagation.isBatch(insert.getSource(), d)) {
            sizes[d] = srcShape[d];
            changed = true;
          }
      }
      if (changed)
        insert.setStaticSizes(sizes);
    }
  for (auto &[generic, operand, position, loop] : propagation.broadcastFixes) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    AffineMap map = maps[operand];
    SmallVector<AffineExpr> results(map.getResults());
    results[position] = builder.getAffineDimExpr(loop);
    maps[operand] = AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                   results, builder.getContext());
    generic.setIndexingMapsAttr(builder.getAffineMapArrayAttr(maps));
  }
  for (auto &[value, newType] : retypes)
    value.setType(newType);
  func.setFunctionType(builder.getFunctionType(
      body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
  if (failed(verify(func)))
    return func.emitError() << "rescaling the batch from " << oldBatch << " to "
                            << int64_t(batch) << " produced invalid IR";
  return success();
}
