//===- OpGraphExtraction.cpp - IR -> MLIR-free op graph -------------------===//

#include "soap/Analysis/OpGraphExtraction.h"

#include "soap/Analysis/IterationSpace.h"
#include "soap/Analysis/Lookup.h"
#include "soap/Analysis/NormalizationStatistics.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::soap;
using ::soap::DimAccess;
using ::soap::LoopAt;
using ::soap::LoopTerm;
using ::soap::Node;
using ::soap::Operand;
using ::soap::Tensor;

bool mlir::soap::isValueStart(Operation *op) {
  return isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp>(op);
}

SmallVector<Operation *> mlir::soap::readersOfViews(Value value) {
  SmallVector<Operation *> readers;
  llvm::SmallPtrSet<Operation *, 8> seen;
  SmallVector<Value> views = {value};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      readers.push_back(user);
      if (isa<tensor::TensorDialect>(user->getDialect()))
        llvm::append_range(views, user->getResults());
    }
  }
  return readers;
}

std::string mlir::soap::getStableName(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>(SOAPDialect::kNameAttrName))
    return name.str();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return loc.getName().str();
  return std::string();
}

//===----------------------------------------------------------------------===//
// Affine accesses
//===----------------------------------------------------------------------===//

static void addTerm(DimAccess &access, int32_t loop, int64_t coefficient) {
  for (LoopTerm &term : access.terms)
    if (term.loop == loop) {
      term.coefficient += coefficient;
      return;
    }
  access.terms.push_back({loop, coefficient});
}

static bool accumulate(AffineExpr expr, int64_t scale, DimAccess &access) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    addTerm(access, dim.getPosition(), scale);
    return true;
  }
  if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
    access.constant += scale * cst.getValue();
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!bin)
    return false;
  if (expr.getKind() == AffineExprKind::Add)
    return accumulate(bin.getLHS(), scale, access) &&
           accumulate(bin.getRHS(), scale, access);
  if (expr.getKind() == AffineExprKind::Mul) {
    if (auto cst = dyn_cast<AffineConstantExpr>(bin.getRHS()))
      return accumulate(bin.getLHS(), scale * cst.getValue(), access);
    if (auto cst = dyn_cast<AffineConstantExpr>(bin.getLHS()))
      return accumulate(bin.getRHS(), scale * cst.getValue(), access);
  }
  return false;
}

/// index = constant + sum(coef * loop) when `expr` is affine in the loops;
/// otherwise the whole dimension.
static DimAccess toDimAccess(AffineExpr expr) {
  DimAccess access;
  if (!accumulate(expr, 1, access)) {
    access = DimAccess();
    access.whole = true;
  }
  llvm::erase_if(access.terms,
                 [](const LoopTerm &t) { return t.coefficient == 0; });
  return access;
}

SmallVector<DimAccess> mlir::soap::getDimAccesses(AffineMap map) {
  SmallVector<DimAccess> dims;
  for (AffineExpr expr : map.getResults())
    dims.push_back(toDimAccess(expr));
  return dims;
}

static DimAccess loopAccess(int32_t loop, int64_t constant = 0,
                            int64_t coefficient = 1) {
  DimAccess access;
  access.terms.push_back({loop, coefficient});
  access.constant = constant;
  return access;
}

static DimAccess constantAccess(int64_t constant) {
  DimAccess access;
  access.constant = constant;
  return access;
}

static DimAccess wholeAccess() {
  DimAccess access;
  access.whole = true;
  return access;
}

static bool sameAccess(ArrayRef<DimAccess> a, ArrayRef<DimAccess> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b)) {
    if (x.whole != y.whole || x.constant != y.constant ||
        x.terms.size() != y.terms.size())
      return false;
    for (auto [s, t] : llvm::zip(x.terms, y.terms))
      if (s.loop != t.loop || s.coefficient != t.coefficient)
        return false;
  }
  return true;
}

/// Adds to `conditions` the `index(l) == c` conjuncts of `condition` (a
/// comparison or an `arith.andi` of them); other conjuncts are left out,
/// which only widens the iterations they stand for.
static void collectLoopConditions(Value condition,
                                  SmallVectorImpl<LoopAt> &conditions) {
  if (auto both = condition.getDefiningOp<arith::AndIOp>()) {
    collectLoopConditions(both.getLhs(), conditions);
    collectLoopConditions(both.getRhs(), conditions);
    return;
  }
  auto cmp = condition.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return;
  for (auto [index, other] : {std::pair(cmp.getLhs(), cmp.getRhs()),
                              std::pair(cmp.getRhs(), cmp.getLhs())}) {
    auto loop = index.getDefiningOp<linalg::IndexOp>();
    APInt at;
    if (loop && matchPattern(other, m_ConstantInt(&at))) {
      conditions.push_back(
          {static_cast<int32_t>(loop.getDim()), at.getSExtValue()});
      return;
    }
  }
}

/// Keeps of `conditions` those `others` has too: the iterations either of
/// two reads happens at.
static void keepCommonConditions(SmallVectorImpl<LoopAt> &conditions,
                                 ArrayRef<LoopAt> others) {
  llvm::erase_if(conditions, [&](const LoopAt &at) {
    return !llvm::is_contained(others, at);
  });
}

/// The iterations at which `op`'s body reads `input` at all (Operand::
/// onlyAt): the `index(l) == c` conditions that every use of its block
/// argument is under, each use being the value an `arith.select` picks
/// where its condition holds. Empty where a use is anything else.
static SmallVector<LoopAt> readConditions(linalg::LinalgOp op,
                                          OpOperand *input) {
  BlockArgument arg = op.getMatchingBlockArgument(input);
  std::optional<SmallVector<LoopAt>> common;
  for (OpOperand &use : arg.getUses()) {
    auto select = dyn_cast<arith::SelectOp>(use.getOwner());
    if (!select || use.getOperandNumber() != 1)
      return {};
    SmallVector<LoopAt> conditions;
    collectLoopConditions(select.getCondition(), conditions);
    if (!common)
      common = std::move(conditions);
    else
      keepCommonConditions(*common, conditions);
  }
  return common ? *common : SmallVector<LoopAt>();
}

/// Rewrites the loops of `access` through `loopMap` (old loop -> new loop).
static DimAccess remapLoops(const DimAccess &access,
                            ArrayRef<int32_t> loopMap) {
  if (access.whole)
    return access;
  DimAccess result;
  result.constant = access.constant;
  for (const LoopTerm &term : access.terms)
    addTerm(result, loopMap[term.loop], term.coefficient);
  return result;
}

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

namespace {

/// A pad folded into its consumer: reading the pad's result at index i reads
/// the source at i - low.
struct FoldedPad {
  Value source;
  SmallVector<int64_t> low;
  Operation *op;
};

class Extractor {
public:
  Extractor(func::FuncOp func, const OpGraphExtractionOptions &options)
      : func(func), options(options) {}

  FailureOr<ExtractedOpGraph> run();

  llvm::SmallBitVector parameterArguments() {
    findParameters();
    Block &body = func.getBody().front();
    llvm::SmallBitVector result(body.getNumArguments());
    for (BlockArgument arg : body.getArguments())
      if (isParameter(arg))
        result.set(arg.getArgNumber());
    return result;
  }

private:
  // Parameters.
  void findParameters();
  void markWeightSources(Value value, unsigned depth = 0);
  /// Whether every reader of `value` (through reshapes and transposes)
  /// broadcasts it over its leading dim (broadcastsOverLeadingDim).
  bool broadcastSamplesOnly(Value value, unsigned depth = 0) const;
  /// Into `arguments`: the function arguments `value` is a view of (through
  /// reshapes and one-input elementwise ops such as transposes).
  void findViewedArguments(Value value, llvm::DenseSet<Value> &arguments,
                           unsigned depth = 0);
  bool isParameter(Value value) const { return parameters.contains(value); }
  /// What reading `value` reads: a pad folded into its readers' source.
  Value readValue(Value value) const {
    auto pad = foldedPads.find(value);
    return pad == foldedPads.end() ? value : pad->second.source;
  }
  /// Whether `value` is an argument of the function (not of a region in it).
  bool isFunctionArgument(Value value) const {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner()->getParentOp() == func;
  }

  // Tensors and nodes.
  FailureOr<int32_t> getTensor(Value value, Operation *user);
  int32_t newNode(Operation *anchor, StringRef kind);
  /// A node for tensor data movement (pad, slices, reshapes, concat): loops
  /// and kinds from the op's iteration space (IterationSpace.h), and the
  /// identity access over those loops.
  int32_t newDataMovementNode(Operation *op, SmallVector<DimAccess> &identity);
  LogicalResult setOutput(int32_t node, Value value,
                          SmallVector<DimAccess> dims, bool append = false);
  /// `onlyAt`: the iterations that read it (Operand::onlyAt); dropped for
  /// a parameter or a scalar.
  LogicalResult addInput(int32_t node, Value value, SmallVector<DimAccess> dims,
                         Operation *user, ArrayRef<LoopAt> onlyAt = {});
  void finalize();

  // Per op.
  LogicalResult visit(Operation *op);
  LogicalResult visitLinalg(linalg::LinalgOp op);
  FailureOr<bool> tryFuseElementwise(linalg::LinalgOp op);
  LogicalResult visitPad(tensor::PadOp op);
  LogicalResult visitInsertSlice(tensor::InsertSliceOp op);
  LogicalResult visitConcat(tensor::ConcatOp op);
  LogicalResult visitExtractSlice(tensor::ExtractSliceOp op);
  LogicalResult visitReshape(Operation *op, ArrayRef<ReassociationIndices> groups,
                             RankedTensorType collapsed,
                             RankedTensorType expanded, bool isExpand);
  LogicalResult visitReplicated(Operation *op);

  bool isFoldableFill(Operation *op) const;
  static double bodyFlops(linalg::LinalgOp op);
  static bool hasStaticShape(Value value);

  func::FuncOp func;
  OpGraphExtractionOptions options;
  ExtractedOpGraph result;
  llvm::DenseMap<Value, int32_t> tensorOf;
  llvm::DenseSet<Value> parameters;
  /// Values markWeightSources went through: weights and their views.
  llvm::DenseSet<Value> weightViews;
  /// Values that are the current output of a node, which a following
  /// elementwise op or insert_slice may extend.
  llvm::DenseMap<Value, int32_t> openOutput;
  llvm::DenseMap<Value, FoldedPad> foldedPads;
  llvm::StringMap<unsigned> kindCounters;
  llvm::StringMap<unsigned> usedNames;
  unsigned numConstants = 0;
};

} // namespace

/// Whether `scale` times the product of `extents` is at most 2^`bits`.
static bool fitsCount(ArrayRef<int64_t> extents, int64_t scale, unsigned bits) {
  const int64_t kLimit = int64_t(1) << bits;
  int64_t count = scale;
  for (int64_t extent : extents)
    if (extent < 0 || llvm::MulOverflow(count, extent, count) || count > kLimit)
      return false;
  return true;
}

bool Extractor::hasStaticShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape();
}

double Extractor::bodyFlops(linalg::LinalgOp op) {
  double iterations = 1;
  for (int64_t extent : op.getStaticLoopRanges())
    iterations *= static_cast<double>(std::max<int64_t>(extent, 1));
  int64_t bodyOps = 0;
  bool selectsByIndex = false;
  if (Block *body = op.getBlock())
    for (Operation &inner : body->without_terminator()) {
      if (!isa<linalg::IndexOp, arith::ConstantOp>(inner))
        ++bodyOps;
      // A reduction that keeps the element whose loop index equals a value
      // (an embedding lookup written as a one-hot contraction) is a gather:
      // one element per output point, not one per iteration.
      if (auto cmp = dyn_cast<arith::CmpIOp>(inner))
        for (Value operand : cmp->getOperands()) {
          Operation *def = operand.getDefiningOp();
          while (def && isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp,
                            arith::TruncIOp>(def))
            def = def->getOperand(0).getDefiningOp();
          if (isa_and_nonnull<linalg::IndexOp>(def) &&
              op.getNumReductionLoops() > 0)
            selectsByIndex = true;
        }
    }
  if (selectsByIndex) {
    double outputPoints = 1;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (auto [extent, iterator] : llvm::zip(ranges, iterators))
      if (iterator == utils::IteratorType::parallel)
        outputPoints *= static_cast<double>(std::max<int64_t>(extent, 1));
    return outputPoints;
  }
  return iterations * static_cast<double>(bodyOps);
}

std::optional<SmallVector<CopyRead>>
mlir::soap::getCopyReads(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return std::nullopt;
  OpOperand *in = op.getDpsInputOperand(0);
  auto inType = dyn_cast<RankedTensorType>(in->get().getType());
  if (!inType || !inType.hasStaticShape() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isPermutation())
    return std::nullopt;
  if (!isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::CopyOp>(
          op.getOperation())) {
    Block *body = op.getBlock();
    if (!body || body->getOperations().size() != 1)
      return std::nullopt;
    auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
    if (!yield || yield.getNumOperands() != 1 ||
        yield.getOperand(0) != body->getArgument(0))
      return std::nullopt;
  }
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<CopyRead> reads;
  for (auto [d, e] :
       llvm::enumerate(op.getMatchingIndexingMap(in).getResults())) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (c.getValue() != 0)
        return std::nullopt;
      reads.push_back({-1, false});
      continue;
    }
    DimAccess access = toDimAccess(e);
    if (access.whole || access.terms.size() != 1)
      return std::nullopt;
    int32_t loop = access.terms[0].loop;
    int64_t size = inType.getDimSize(d);
    bool plain = access.terms[0].coefficient == 1 && access.constant == 0;
    bool reversed = access.terms[0].coefficient == -1 &&
                    access.constant == size - 1 && extents[loop] == size;
    if (!plain && !reversed)
      return std::nullopt;
    reads.push_back({loop, reversed});
  }
  return reads;
}

/// Whether `op` sums products of its two inputs over its reduction loops:
/// a matmul, batch matmul, convolution or einsum, named or generic (the
/// upstream contraction and convolution interfaces, the latter with a
/// multiply-accumulate body, which pooling has not). The cost model's
/// contraction class, whatever the op is called.
static bool isProductSum(linalg::LinalgOp op) {
  if (linalg::isaContractionOpInterface(op))
    return true;
  return linalg::isaConvolutionOpInterface(op) &&
         linalg::detail::isContractionBody(
             *op.getBlock(), [](Operation *product, Operation *sum) {
               return (isa<arith::MulFOp>(product) &&
                       isa<arith::AddFOp>(sum)) ||
                      (isa<arith::MulIOp>(product) && isa<arith::AddIOp>(sum));
             });
}

/// A fill whose result only initializes linalg ops (the accumulator of a
/// matmul or convolution): it is part of its consumer.
bool Extractor::isFoldableFill(Operation *op) const {
  if (!isa<linalg::FillOp>(op) || !options.groupOps)
    return false;
  for (OpOperand &use : op->getResult(0).getUses()) {
    auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!user || !user.isDpsInit(&use))
      return false;
  }
  return !op->getResult(0).use_empty();
}

void Extractor::markWeightSources(Value value, unsigned depth) {
  if (depth > 8)
    return;
  weightViews.insert(value);
  if (isa<BlockArgument>(value)) {
    if (isFunctionArgument(value))
      parameters.insert(value);
    return;
  }
  Operation *def = value.getDefiningOp();
  if (isa<tensor::EmptyOp, linalg::FillOp>(def))
    return;
  // Follow layout ops on weights (transpose, broadcast, reshape, scaling).
  SmallVector<Value> sources;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
    for (OpOperand *in : linalgOp.getDpsInputOperands())
      if (isa<ShapedType>(in->get().getType()))
        sources.push_back(in->get());
  } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
    sources.push_back(def->getOperand(0));
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    // A part of a fused projection's weight (soap-split-fused-projections
    // slices the argument, its transpose or a constant). Not a slice of a
    // computed value (a key sliced from a fused projection's output, read
    // at a matmul's weight side, is data).
    llvm::DenseSet<Value> viewed;
    findViewedArguments(slice.getSource(), viewed);
    if (!viewed.empty() || slice.getSource().getDefiningOp<arith::ConstantOp>())
      sources.push_back(slice.getSource());
  }
  for (Value source : sources) {
    if (auto arg = dyn_cast<BlockArgument>(source))
      (void)arg;
    else if (!source.getDefiningOp() ||
             !isa<arith::ConstantOp, linalg::LinalgOp, tensor::ExpandShapeOp,
                  tensor::CollapseShapeOp, tensor::ExtractSliceOp>(
                 source.getDefiningOp()))
      continue;
    markWeightSources(source, depth + 1);
  }
}

void Extractor::findViewedArguments(Value value,
                                    llvm::DenseSet<Value> &arguments,
                                    unsigned depth) {
  if (depth > 8)
    return;
  if (isFunctionArgument(value)) {
    arguments.insert(value);
    return;
  }
  Operation *def = value.getDefiningOp();
  if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def)) {
    // Only through views (a transpose, a broadcast, a copy): one input,
    // every loop parallel.
    if (linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumReductionLoops() != 0)
      return;
    findViewedArguments(linalgOp.getDpsInputOperand(0)->get(), arguments,
                        depth + 1);
  } else if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                 def)) {
    findViewedArguments(def->getOperand(0), arguments, depth + 1);
  }
}

/// Whether `use` reads its value the same for every index of the reader's
/// leading dim, which has more than one: its indexing map does not use the
/// loop that indexes the reader's output's dim 0 (a linalg.broadcast that
/// adds that dim, a generic that reads it at a constant 0).
static bool broadcastsOverLeadingDim(OpOperand &use) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!linalgOp || !linalgOp.isDpsInput(&use) || linalgOp.getNumDpsInits() != 1)
    return false;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  AffineMap out = linalgOp.getMatchingIndexingMap(init);
  auto outType = dyn_cast<RankedTensorType>(init->get().getType());
  if (!outType || outType.getRank() == 0 || outType.getDimSize(0) < 2)
    return false;
  auto sample = dyn_cast<AffineDimExpr>(out.getResult(0));
  return sample && !linalgOp.getMatchingIndexingMap(&use).isFunctionOfDim(
                       sample.getPosition());
}

/// Whether `op` only moves one input's elements (a transpose, a copy):
/// one input, one output, both read through permutations.
static bool isPermutation(linalg::LinalgOp op) {
  return op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1 &&
         op.getNumReductionLoops() == 0 &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isPermutation(); });
}

bool Extractor::broadcastSamplesOnly(Value value, unsigned depth) const {
  if (depth > 8 || value.use_empty())
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
      if (!broadcastSamplesOnly(user->getResult(0), depth + 1))
        return false;
      continue;
    }
    if (broadcastsOverLeadingDim(use))
      continue;
    // Through a transpose.
    auto permute = dyn_cast<linalg::LinalgOp>(user);
    if (!permute || !permute.isDpsInput(&use) || !isPermutation(permute) ||
        !broadcastSamplesOnly(permute->getResult(0), depth + 1))
      return false;
  }
  return true;
}

void Extractor::findParameters() {
  Block &body = func.getBody().front();
  bool anyMarked = false;
  for (BlockArgument arg : body.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), SOAPDialect::kParameterAttrName)) {
      parameters.insert(arg);
      anyMarked = true;
    }
  // Unmarked models: arguments reached from a weight position (a filter, the
  // side of a matmul without the batch loop) are weights.
  if (!anyMarked) {
    func.walk([&](linalg::LinalgOp op) {
      FailureOr<IterationSpace> space = getIterationSpace(op);
      if (failed(space))
        return;
      for (auto [i, in] : llvm::enumerate(op.getDpsInputOperands()))
        if (space->isParameterOperand[i])
          markWeightSources(in->get());
    });
    // Where that leaves no argument data, one that a layer also reads as
    // its data (x in x^T x, read through the transpose at a matmul's data
    // side and directly at its weight side) is data: else every op would
    // compute from weights only and the model would have no layer. (Not
    // otherwise: a position embedding added through a broadcast is read at
    // the add's data side too.)
    bool anyData = llvm::any_of(body.getArguments(), [&](BlockArgument arg) {
      return !arg.use_empty() && !isParameter(arg);
    });
    llvm::DenseSet<Value> dataArguments;
    if (!anyData)
      func.walk([&](linalg::LinalgOp op) {
        if (llvm::any_of(op->getResults(),
                         [&](Value v) { return weightViews.contains(v); }))
          return; // a view of a weight (a transposed filter), not a layer
        FailureOr<IterationSpace> space = getIterationSpace(op);
        if (failed(space))
          return;
        for (auto [i, in] : llvm::enumerate(op.getDpsInputOperands()))
          if (!space->isParameterOperand[i])
            findViewedArguments(in->get(), dataArguments);
      });
    for (Value arg : dataArguments)
      parameters.erase(arg);
    // An argument that every reader broadcasts over the leading (sample)
    // dim has no sample dim: a weight (a learned position embedding
    // [1, S, D] added to every sample, a class token expanded over the
    // batch, a weight broadcast for torch-mlir's batch_matmul of a 3-D
    // input by a 2-D weight).
    for (BlockArgument arg : body.getArguments())
      if (!isParameter(arg) && isa<FloatType>(getElementTypeOrSelf(arg)) &&
          broadcastSamplesOnly(arg))
        parameters.insert(arg);
    // Vectors (biases, scales) beside higher-rank data arguments are
    // weights too.
    bool hasMatrixData = llvm::any_of(body.getArguments(), [&](Value arg) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      return type && type.getRank() >= 2 && !isParameter(arg);
    });
    if (hasMatrixData)
      for (BlockArgument arg : body.getArguments())
        if (auto type = dyn_cast<RankedTensorType>(arg.getType());
            type && type.getRank() == 1)
          parameters.insert(arg);
    // An inference-mode normalization's running statistics are buffers,
    // not weights: an argument read only as them is data.
    llvm::DenseSet<OpOperand *> statistics =
        getNormalizationStatisticReads(func);
    for (BlockArgument arg : body.getArguments())
      if (!arg.use_empty() &&
          llvm::all_of(arg.getUses(), [&](OpOperand &use) {
            return statistics.contains(&use);
          }))
        parameters.erase(arg);
  }
  // Constants and values computed from parameters only are parameters.
  for (Operation &op : body.without_terminator()) {
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      if (isa<RankedTensorType>(cst.getType()))
        parameters.insert(cst.getResult());
      continue;
    }
    SmallVector<Value> inputs;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      // A lookup of constant ids in a table (a model's position
      // embeddings; Lookup.h) gathers rows rather than viewing the table in
      // another form (a transposed or flipped weight): a layer, so that its
      // tiles read, and its gradient updates, only the part of the table
      // they use.
      if (isa<linalg::FillOp>(op) || matchOneHotSelection(linalgOp))
        continue;
      for (OpOperand *in : linalgOp.getDpsInputOperands())
        if (isa<ShapedType>(in->get().getType()))
          inputs.push_back(in->get());
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                   tensor::ExtractSliceOp, tensor::PadOp>(op)) {
      inputs.push_back(op.getOperand(0));
    } else {
      continue;
    }
    if (!inputs.empty() && llvm::all_of(inputs, [&](Value v) {
          return isParameter(v);
        }))
      for (Value res : op.getResults())
        parameters.insert(res);
  }
}

/// What to do about the most common dynamic dimension, an exported
/// model's symbolic batch size (soap-rescale-batch makes it static).
static constexpr const char *kDynamicBatchHint =
    " (a symbolic batch size: set it with soapc --batch=N)";

/// `user` reads or writes a tensor of dynamic shape `type`.
static InFlightDiagnostic dynamicShapeError(Operation *user, Type type) {
  return user->emitError() << "'" << user->getName()
                           << "' uses a tensor of dynamic shape " << type
                           << "; SOAP partitions static shapes only"
                           << kDynamicBatchHint;
}

FailureOr<int32_t> Extractor::getTensor(Value value, Operation *user) {
  auto it = tensorOf.find(value);
  if (it != tensorOf.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return user->emitError()
           << "operand of type " << value.getType()
           << " is not a ranked tensor; SOAP cannot partition it";
  if (!type.hasStaticShape())
    return dynamicShapeError(user, type);
  Tensor tensor;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    tensor.name = "arg" + std::to_string(arg.getArgNumber());
  } else if (Operation *def = value.getDefiningOp();
             def && isa<arith::ConstantOp>(def)) {
    tensor.name = "cst" + std::to_string(numConstants++);
  } else {
    // A derived parameter (e.g. a transposed weight) or a value no node
    // produces (an uninitialized tensor.empty).
    std::string base = isParameter(value) ? "param" : "value";
    tensor.name = base + std::to_string(kindCounters["#" + base]++);
  }
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return user->emitError()
           << "'" << user->getName() << "' uses a tensor of " << element
           << " elements; SOAP handles integer, index and "
              "floating-point elements";
  tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  // index: 64 bits, as both targets lower it.
  unsigned bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  tensor.elementBytes = std::max<int32_t>(1, (bits + 7) / 8);
  // Sizes in bytes are counted in 64 bits and as doubles (exact to 2^53).
  if (!fitsCount(tensor.shape, tensor.elementBytes, 52))
    return user->emitError()
           << "'" << user->getName() << "' uses a tensor of " << type
           << ", more than 2^52 bytes; SOAP "
              "cannot model it";
  // Integer constants (a model's position ids, masks) are data: no
  // gradient, nothing to synchronize.
  tensor.isParameter = isParameter(value) && isa<FloatType>(element);
  int32_t id = result.graph.tensors.size();
  result.graph.tensors.push_back(std::move(tensor));
  result.tensorValues.push_back(value);
  tensorOf[value] = id;
  return id;
}

int32_t Extractor::newNode(Operation *anchor, StringRef kind) {
  Node node;
  node.kind = kind.str();
  std::string name = getStableName(anchor);
  if (name.empty()) {
    std::string base = anchor->getName().stripDialect().str();
    name = base + "_" + std::to_string(kindCounters[base]++);
  }
  // Names must be unique in the graph.
  unsigned &seen = usedNames[name];
  if (seen++)
    name += "#" + std::to_string(seen - 1);
  node.name = name;
  node.groupedOps.push_back(anchor->getName().getStringRef().str());
  int32_t id = result.graph.nodes.size();
  result.graph.nodes.push_back(std::move(node));
  result.nodeOps.push_back({anchor});
  return id;
}

int32_t Extractor::newDataMovementNode(Operation *op,
                                       SmallVector<DimAccess> &identity) {
  int32_t node = newNode(op, op->getName().getStringRef());
  Node &n = result.graph.nodes[node];
  FailureOr<IterationSpace> space = getIterationSpace(op);
  assert(succeeded(space) && "data movement ops have an iteration space");
  n.extents.assign(space->extents.begin(), space->extents.end());
  n.loopKinds.assign(space->kinds.begin(), space->kinds.end());
  identity.clear();
  for (int32_t d = 0; d < n.numLoops(); ++d)
    identity.push_back(loopAccess(d));
  return node;
}

LogicalResult Extractor::addInput(int32_t node, Value value,
                                  SmallVector<DimAccess> dims, Operation *user,
                                  ArrayRef<LoopAt> onlyAt) {
  if (isParameter(value) || dims.empty())
    onlyAt = {};
  // Reading a broadcast / transpose / copy of a parameter reads the
  // parameter itself, through the composed access.
  while (isParameter(value)) {
    auto view = dyn_cast_or_null<linalg::LinalgOp>(value.getDefiningOp());
    std::optional<SmallVector<CopyRead>> reads =
        view ? getCopyReads(view) : std::nullopt;
    if (!reads)
      break;
    OpOperand *in = view.getDpsInputOperand(0);
    AffineMap outMap = view.getMatchingIndexingMap(view.getDpsInitOperand(0));
    auto sourceType = cast<RankedTensorType>(in->get().getType());
    SmallVector<DimAccess> sourceDims;
    for (auto [d, read] : llvm::enumerate(*reads)) {
      if (read.loop < 0) {
        sourceDims.push_back(constantAccess(0));
        continue;
      }
      // The reader's access to the view's dim that the loop writes
      // (reversed: size - 1 - it).
      DimAccess source = dims[*outMap.getResultPosition(
          getAffineDimExpr(read.loop, view.getContext()))];
      if (read.reversed && !source.whole) {
        for (LoopTerm &term : source.terms)
          term.coefficient = -term.coefficient;
        source.constant = sourceType.getDimSize(d) - 1 - source.constant;
      }
      sourceDims.push_back(std::move(source));
    }
    result.nodeOps[node].push_back(view);
    value = in->get();
    dims = std::move(sourceDims);
  }
  // Reading a folded pad reads its source, shifted by the low padding.
  auto pad = foldedPads.find(value);
  if (pad != foldedPads.end()) {
    for (auto [dim, low] : llvm::zip(dims, pad->second.low))
      if (!dim.whole)
        dim.constant -= low;
    result.nodeOps[node].push_back(pad->second.op);
    result.graph.nodes[node].groupedOps.push_back(
        pad->second.op->getName().getStringRef().str());
    value = pad->second.source;
  }
  // A scalar constant broadcast into the body is no data flow.
  if (auto type = dyn_cast<RankedTensorType>(value.getType());
      type && type.getRank() == 0 &&
      isa_and_nonnull<arith::ConstantOp>(value.getDefiningOp()))
    return success();
  FailureOr<int32_t> tensor = getTensor(value, user);
  if (failed(tensor))
    return failure();
  // The same region of the same tensor read twice is one input, read where
  // either reads it (the conditions both have).
  for (Operand &existing : result.graph.nodes[node].inputs) {
    if (existing.tensor != *tensor || !sameAccess(existing.dims, dims))
      continue;
    SmallVector<LoopAt> common(existing.onlyAt.begin(), existing.onlyAt.end());
    keepCommonConditions(common, onlyAt);
    existing.onlyAt.assign(common.begin(), common.end());
    return success();
  }
  Operand operand;
  operand.tensor = *tensor;
  operand.dims.assign(dims.begin(), dims.end());
  operand.onlyAt.assign(onlyAt.begin(), onlyAt.end());
  result.graph.nodes[node].inputs.push_back(std::move(operand));
  return success();
}

LogicalResult Extractor::setOutput(int32_t node, Value value,
                                   SmallVector<DimAccess> dims, bool append) {
  Node &n = result.graph.nodes[node];
  FailureOr<int32_t> tensor = getTensor(value, value.getDefiningOp());
  if (failed(tensor))
    return failure();
  Tensor &t = result.graph.tensors[*tensor];
  t.producer = node;
  t.isParameter = false;
  t.name = append ? n.name + "#" + std::to_string(n.outputs.size()) : n.name;
  Operand operand;
  operand.tensor = *tensor;
  operand.dims.assign(dims.begin(), dims.end());
  if (!append)
    n.outputs.clear();
  n.outputs.push_back(std::move(operand));
  openOutput[value] = node;
  return success();
}

/// Whether `op`'s #soap.config, if it and `anchor` both have one, splits
/// its loops as `anchor`'s splits the loops they are (`loopMap`: op loop ->
/// anchor loop) and places each tile on the same device: then every device
/// makes the same part of `op`'s result either way.
static bool sameLayoutAsAnchor(Operation *op, Operation *anchor,
                               ArrayRef<int32_t> loopMap) {
  auto mine =
      op->getAttrOfType<ParallelConfigAttr>(SOAPDialect::kConfigAttrName);
  auto theirs =
      anchor->getAttrOfType<ParallelConfigAttr>(SOAPDialect::kConfigAttrName);
  if (!mine || !theirs)
    return true;
  ArrayRef<int64_t> degrees = mine.getDegrees();
  ArrayRef<int64_t> anchorDegrees = theirs.getDegrees();
  if (degrees.size() != loopMap.size() ||
      mine.getNumTiles() != theirs.getNumTiles())
    return false;
  llvm::SmallBitVector split(anchorDegrees.size());
  for (auto [l, a] : llvm::enumerate(loopMap)) {
    if (degrees[l] == 1)
      continue;
    if (a < 0 || static_cast<size_t>(a) >= anchorDegrees.size() ||
        degrees[l] != anchorDegrees[a] || split.test(a))
      return false;
    split.set(a);
  }
  // Equal tile counts: the anchor splits no loop but those.
  SmallVector<int64_t> coords(anchorDegrees.size(), 0);
  for (int64_t t = 0; t < mine.getNumTiles(); ++t) {
    int64_t rest = t;
    for (size_t l = degrees.size(); l-- > 0;) {
      if (loopMap[l] >= 0)
        coords[loopMap[l]] = rest % degrees[l];
      rest /= degrees[l];
    }
    int64_t anchorTile = 0;
    for (auto [a, degree] : llvm::enumerate(anchorDegrees))
      anchorTile = anchorTile * degree + coords[a];
    if (mine.getDeviceOfTile(t) != theirs.getDeviceOfTile(anchorTile))
      return false;
  }
  return true;
}

/// Whether the derivative of `op`'s payload reads `operand`'s value: it
/// reaches an op other than a sum or difference (whose derivatives are
/// constants). A ReLU's (max(x + b, 0)) or a product's does; a bias add's
/// does not.
static bool derivativeReads(linalg::LinalgOp op, OpOperand *operand) {
  SmallVector<Value> work{op.getMatchingBlockArgument(operand)};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<linalg::YieldOp>(user))
        continue;
      if (!isa<arith::AddFOp, arith::SubFOp, arith::NegFOp>(user))
        return true;
      work.push_back(user->getResult(0));
    }
  }
  return false;
}

/// Elementwise op whose data input is the open output of a node used by
/// nothing else: the op joins that node.
FailureOr<bool> Extractor::tryFuseElementwise(linalg::LinalgOp op) {
  if (!options.groupOps || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      isa<linalg::FillOp>(op.getOperation()))
    return false;
  // An in-place update stays a node of its own: soap-partition computes it
  // on every device that holds a part of the argument it updates.
  if (getUpdatedArgument(op->getResult(0)))
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isPermutation())
    return false;
  // The data input: an input that is the open output of a node and used by
  // nothing else. With several (a residual add), the latest node, so that
  // the other candidates are produced before it (and the other operands
  // must be: checked below).
  OpOperand *main = nullptr;
  int32_t node = -1;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in->get().getType() != op->getResult(0).getType() ||
        isParameter(in->get()))
      continue;
    auto open = openOutput.find(in->get());
    if (open == openOutput.end() || open->second <= node)
      continue;
    if (llvm::any_of(in->get().getUsers(),
                     [&](Operation *user) { return user != op.getOperation(); }))
      continue;
    main = in;
    node = open->second;
  }
  if (!main)
    return false;
  // Every other operand made before that node: joined, the node would read
  // what a later node makes (a residual add whose other input is also read
  // elsewhere, so it is no candidate; an RNN step's cell update reading the
  // previous step's cell state and its own gates).
  // (A pad folded into its readers is read as its source: the zero-padded
  // slice gradient of a tensor read whole and in part, such as rotary
  // embedding's rotate_half of q beside q.)
  for (OpOperand &in : op->getOpOperands()) {
    auto t = tensorOf.find(readValue(in.get()));
    if (&in != main && t != tensorOf.end() &&
        result.graph.tensors[t->second].producer > node)
      return false;
  }
  Node &n = result.graph.nodes[node];
  const Operand &anchorOut = n.outputs.front();
  auto shape = cast<RankedTensorType>(main->get().getType()).getShape();
  AffineMap mainMap = op.getMatchingIndexingMap(main);

  // Loop l of this op -> output dim p -> loop of the node.
  SmallVector<int32_t> loopMap(op.getNumLoops(), -1);
  for (unsigned p = 0; p < outMap.getNumResults(); ++p) {
    unsigned loop = cast<AffineDimExpr>(outMap.getResult(p)).getPosition();
    AffineExpr mainExpr = mainMap.getResult(p);
    bool sameDim = isa<AffineDimExpr>(mainExpr) &&
                   cast<AffineDimExpr>(mainExpr).getPosition() == loop;
    bool unitBroadcast = isa<AffineConstantExpr>(mainExpr) &&
                         cast<AffineConstantExpr>(mainExpr).getValue() == 0 &&
                         shape[p] == 1;
    if (!sameDim && !unitBroadcast)
      return false;
    const DimAccess &dim = anchorOut.dims[p];
    if (dim.whole || dim.constant != 0 || dim.terms.size() != 1 ||
        dim.terms[0].coefficient != 1)
      return false;
    loopMap[loop] = dim.terms[0].loop;
  }

  // An op placed elsewhere stays a node of its own (the gradient of a
  // convolution's activation, on the activation's devices: the
  // convolution's input gradient goes there, as the simulator sends it).
  if (!sameLayoutAsAnchor(op, result.nodeOps[node].front(), loopMap))
    return false;

  // Join: every other read operand becomes an input of the node, and the
  // data input a value inside it (kept for the backward pass where the
  // op's derivative reads it).
  n.flops += bodyFlops(op);
  if (derivativeReads(op, main))
    n.savedBytes += result.graph.tensors[tensorOf.lookup(main->get())].bytes();
  n.groupedOps.push_back(op->getName().getStringRef().str());
  result.nodeOps[node].push_back(op.getOperation());
  openOutput.erase(main->get());
  auto remapAll = [&](AffineMap map) {
    SmallVector<DimAccess> dims;
    for (const DimAccess &d : getDimAccesses(map))
      dims.push_back(remapLoops(d, loopMap));
    return dims;
  };
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in == main || !isa<RankedTensorType>(in->get().getType()))
      continue;
    SmallVector<LoopAt> onlyAt;
    for (LoopAt at : readConditions(op, in))
      if (loopMap[at.loop] >= 0)
        onlyAt.push_back({loopMap[at.loop], at.index});
    if (failed(addInput(node, in->get(),
                        remapAll(op.getMatchingIndexingMap(in)), op, onlyAt)))
      return failure();
  }
  if (init->get() != main->get() && op.payloadUsesValueFromOperand(init) &&
      !isa_and_nonnull<tensor::EmptyOp, linalg::FillOp>(
          init->get().getDefiningOp()) &&
      failed(addInput(node, init->get(), remapAll(outMap), op)))
    return failure();
  if (failed(setOutput(node, op->getResult(0), remapAll(outMap))))
    return failure();
  return true;
}

LogicalResult Extractor::visitLinalg(linalg::LinalgOp op) {
  if (isFoldableFill(op.getOperation()))
    return success(); // joins its consumer (recorded there)
  for (Value res : op->getResults())
    if (!hasStaticShape(res))
      return op->emitError()
             << "'" << op->getName() << "' has a result of dynamic shape "
             << res.getType() << "; SOAP partitions static shapes only"
             << kDynamicBatchHint;
  FailureOr<bool> fused = tryFuseElementwise(op);
  if (failed(fused))
    return failure();
  if (*fused)
    return success();

  FailureOr<IterationSpace> space =
      getIterationSpace(op, IsParameterFn([&](OpOperand &operand) {
                          return isParameter(readValue(operand.get()));
                        }));
  if (failed(space))
    return op->emitError() << "cannot compute the iteration space of '"
                           << op->getName() << "'";
  // Iteration counts: 64 bits.
  if (!fitsCount(space->extents, 1, 62))
    return op->emitError() << "'" << op->getName()
                           << "' has more than 2^62 iterations; SOAP cannot "
                              "model it";
  int32_t node = newNode(op, op->getName().getStringRef());
  Node &n = result.graph.nodes[node];
  n.extents.assign(space->extents.begin(), space->extents.end());
  n.loopKinds.assign(space->kinds.begin(), space->kinds.end());
  n.flops = bodyFlops(op);
  n.contraction = isProductSum(op);
  n.reductionSplittable =
      op.getNumReductionLoops() == 0 || succeeded(getSplitCombiner(op));
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(in->get().getType()))
      continue;
    // The window operand of a pooling op is a shape, not data.
    if (isa_and_nonnull<tensor::EmptyOp>(in->get().getDefiningOp()))
      continue;
    if (failed(addInput(node, in->get(),
                        getDimAccesses(op.getMatchingIndexingMap(in)), op,
                        readConditions(op, in))))
      return failure();
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Operation *def = init.get().getDefiningOp();
    if (isa_and_nonnull<linalg::FillOp>(def) && isFoldableFill(def)) {
      result.nodeOps[node].push_back(def);
      result.graph.nodes[node].groupedOps.push_back(
          def->getName().getStringRef().str());
      continue;
    }
    if (isa_and_nonnull<tensor::EmptyOp>(def) ||
        !op.payloadUsesValueFromOperand(&init))
      continue;
    if (failed(addInput(node, init.get(),
                        getDimAccesses(op.getMatchingIndexingMap(&init)), op)))
      return failure();
  }
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
    if (failed(setOutput(node, op->getResult(i),
                         getDimAccesses(op.getMatchingIndexingMap(&init)),
                         /*append=*/i > 0)))
      return failure();
  return success();
}

bool mlir::soap::isGroupedPadRead(OpOperand &use) {
  auto pad = use.get().getDefiningOp<tensor::PadOp>();
  auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return pad && pad.getConstantPaddingValue() && reader &&
         reader.isDpsInput(&use);
}

LogicalResult Extractor::visitPad(tensor::PadOp op) {
  auto low = op.getStaticLow();
  bool staticPads = llvm::none_of(low, ShapedType::isDynamic) &&
                    llvm::none_of(op.getStaticHigh(), ShapedType::isDynamic);
  if (!staticPads || !hasStaticShape(op.getResult()))
    return op.emitError() << "'tensor.pad' with dynamic padding or shape "
                             "cannot be partitioned";
  Value result = op.getResult();
  if (options.groupOps && result.hasOneUse() &&
      isGroupedPadRead(*result.getUses().begin())) {
    foldedPads[result] = {op.getSource(), SmallVector<int64_t>(low), op};
    return success();
  }
  // A pad of its own: loops over the padded result.
  SmallVector<DimAccess> in, out;
  int32_t node = newDataMovementNode(op, out);
  for (int64_t d = 0; d < op.getResultType().getRank(); ++d)
    in.push_back(loopAccess(d, -low[d]));
  if (failed(addInput(node, op.getSource(), in, op)))
    return failure();
  return setOutput(node, result, out);
}

/// Concatenation as torch-mlir writes it: insert_slices into an empty tensor.
/// The chain becomes one node over the result; each source is read at
/// `loop - offset` (reads outside a source's extent are empty).
LogicalResult Extractor::visitInsertSlice(tensor::InsertSliceOp op) {
  if (llvm::any_of(op.getStaticOffsets(), ShapedType::isDynamic) ||
      !hasStaticShape(op.getResult()))
    return op.emitError() << "'tensor.insert_slice' with dynamic offsets or "
                             "shape cannot be partitioned";
  if (op.getSourceType().getRank() != op.getType().getRank())
    return op.emitError() << "'tensor.insert_slice' of a rank-reducing "
                             "source cannot be partitioned";
  // soap-spread-strided-inserts (soap-import) rewrites those into a splat.
  if (!op.hasUnitStride())
    return op.emitError() << "'tensor.insert_slice' with strides > 1 into "
                             "a tensor other than a splat (a fill or a splat "
                             "constant) cannot be partitioned";
  SmallVector<DimAccess> in;
  for (auto [d, offset] : llvm::enumerate(op.getStaticOffsets()))
    in.push_back(loopAccess(d, -offset));
  Value dest = op.getDest();
  int32_t node;
  auto open = openOutput.find(dest);
  // Extend the chain's node unless the source is produced after it (the
  // graph keeps a topological order).
  auto producedAfter = [&](Value v, int32_t n) {
    auto it = tensorOf.find(v);
    return it != tensorOf.end() &&
           result.graph.tensors[it->second].producer > n;
  };
  if (options.groupOps && open != openOutput.end() && dest.hasOneUse() &&
      isa_and_nonnull<tensor::InsertSliceOp>(dest.getDefiningOp()) &&
      !producedAfter(op.getSource(), open->second)) {
    node = open->second;
    openOutput.erase(dest);
    result.nodeOps[node].push_back(op);
    result.graph.nodes[node].groupedOps.push_back(
        op->getName().getStringRef().str());
  } else {
    SmallVector<DimAccess> identity;
    node = newDataMovementNode(op, identity);
    // The destination's values show wherever the sources do not cover it
    // (a fill's zeros around an inserted block): it is read, unless it is
    // uninitialized.
    if (!isa_and_nonnull<tensor::EmptyOp>(dest.getDefiningOp()) &&
        failed(addInput(node, dest, identity, op)))
      return failure();
  }
  if (failed(addInput(node, op.getSource(), in, op)))
    return failure();
  SmallVector<DimAccess> out;
  for (int64_t d = 0; d < op.getType().getRank(); ++d)
    out.push_back(loopAccess(d));
  return setOutput(node, op.getResult(), out);
}

LogicalResult Extractor::visitConcat(tensor::ConcatOp op) {
  if (!hasStaticShape(op.getResult()))
    return op.emitError() << "'tensor.concat' of dynamic shape cannot be "
                             "partitioned";
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<DimAccess> out;
  int32_t node = newDataMovementNode(op, out);
  int64_t offset = 0;
  uint64_t axis = op.getDim();
  for (Value input : op.getInputs()) {
    SmallVector<DimAccess> in;
    for (int64_t d = 0; d < type.getRank(); ++d)
      in.push_back(loopAccess(d, static_cast<uint64_t>(d) == axis ? -offset : 0));
    if (failed(addInput(node, input, in, op)))
      return failure();
    offset += cast<RankedTensorType>(input.getType()).getDimSize(axis);
  }
  return setOutput(node, op.getResult(), out);
}

LogicalResult Extractor::visitExtractSlice(tensor::ExtractSliceOp op) {
  if (llvm::any_of(op.getStaticOffsets(), ShapedType::isDynamic) ||
      llvm::any_of(op.getStaticStrides(), ShapedType::isDynamic) ||
      !hasStaticShape(op.getResult()))
    return op.emitError() << "'tensor.extract_slice' with dynamic offsets, "
                             "strides or sizes cannot be partitioned";
  SmallVector<DimAccess> out;
  int32_t node = newDataMovementNode(op, out);
  llvm::SmallBitVector dropped = op.getDroppedDims();
  SmallVector<DimAccess> in;
  int32_t loop = 0;
  for (int64_t d = 0; d < op.getSourceType().getRank(); ++d) {
    int64_t offset = op.getStaticOffsets()[d];
    if (dropped.test(d))
      in.push_back(constantAccess(offset));
    else
      in.push_back(loopAccess(loop++, offset, op.getStaticStrides()[d]));
  }
  if (failed(addInput(node, op.getSource(), in, op)))
    return failure();
  return setOutput(node, op.getResult(), out);
}

/// expand_shape / collapse_shape: loops over the expanded shape; the
/// collapsed side is indexed by the row-major combination of its group.
LogicalResult Extractor::visitReshape(Operation *op,
                                      ArrayRef<ReassociationIndices> groups,
                                      RankedTensorType collapsed,
                                      RankedTensorType expanded,
                                      bool isExpand) {
  if (!collapsed.hasStaticShape() || !expanded.hasStaticShape())
    return op->emitError() << "'" << op->getName()
                           << "' of dynamic shape cannot be partitioned";
  SmallVector<DimAccess> expandedAccess, collapsedAccess;
  int32_t node = newDataMovementNode(op, expandedAccess);
  for (const ReassociationIndices &group : groups) {
    // Row-major: the last dimension of the group varies fastest.
    SmallVector<int64_t> strides(group.size(), 1);
    for (int64_t i = static_cast<int64_t>(group.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * expanded.getDimSize(group[i + 1]);
    DimAccess access;
    for (auto [dim, stride] : llvm::zip(group, strides))
      if (expanded.getDimSize(dim) != 1)
        addTerm(access, dim, stride);
    collapsedAccess.push_back(access);
  }
  if (isExpand) {
    if (failed(addInput(node, op->getOperand(0), collapsedAccess, op)))
      return failure();
    return setOutput(node, op->getResult(0), expandedAccess);
  }
  if (failed(addInput(node, op->getOperand(0), expandedAccess, op)))
    return failure();
  return setOutput(node, op->getResult(0), collapsedAccess);
}

/// An op SOAP does not understand but that works on tensors: it runs
/// unpartitioned (one tile, every operand whole).
LogicalResult Extractor::visitReplicated(Operation *op) {
  if (options.remarkReplicated)
    op->emitRemark() << "'" << op->getName()
                     << "' has no iteration space SOAP understands; it is "
                        "kept unpartitioned (replicated)";
  int32_t node = newNode(op, op->getName().getStringRef());
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      continue;
    SmallVector<DimAccess> whole(type.getRank(), wholeAccess());
    if (failed(addInput(node, operand, whole, op)))
      return failure();
  }
  if (op->getNumResults() != 1)
    return op->emitError() << "'" << op->getName() << "' has "
                           << op->getNumResults()
                           << " results; SOAP handles ops with one result";
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  return setOutput(node, op->getResult(0),
                   SmallVector<DimAccess>(type.getRank(), wholeAccess()));
}

LogicalResult Extractor::visit(Operation *op) {
  // Computations on parameters only (a transposed weight) are parameters.
  if (op->getNumResults() > 0 &&
      llvm::all_of(op->getResults(), [&](Value v) { return isParameter(v); }))
    return success();
  if (isa<arith::ConstantOp, tensor::EmptyOp, func::ReturnOp, cf::AssertOp>(op))
    return success();
  if (auto call = dyn_cast<func::CallOp>(op))
    return op->emitError() << "call to '" << call.getCallee()
                           << "' must be inlined before SOAP can partition "
                              "the function (run soap-import)";
  // A dimension of size 0 leaves a loop nothing can split (and nothing to
  // compute).
  auto isEmptyTensor = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && llvm::is_contained(tensor.getShape(), 0);
  };
  for (TypeRange types :
       {TypeRange(op->getOperandTypes()), TypeRange(op->getResultTypes())})
    for (Type type : types)
      if (isEmptyTensor(type))
        return op->emitError()
               << "'" << op->getName() << "' works on an empty tensor (" << type
               << "); SOAP cannot partition it";
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalgOp.hasPureTensorSemantics())
      return op->emitError() << "'" << op->getName()
                             << "' works on buffers (memref); SOAP "
                                "partitions programs on tensors, before "
                                "bufferization";
    return visitLinalg(linalgOp);
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return visitPad(pad);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return visitInsertSlice(insert);
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return visitConcat(concat);
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
    return visitExtractSlice(extract);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return visitReshape(op, expand.getReassociationIndices(),
                        expand.getSrcType(), expand.getResultType(), true);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return visitReshape(op, collapse.getReassociationIndices(),
                        collapse.getResultType(), collapse.getSrcType(), false);
  bool touchesTensors =
      llvm::any_of(op->getOperandTypes(), llvm::IsaPred<TensorType>) ||
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<TensorType>);
  if (!touchesTensors)
    return success(); // scalar bookkeeping (index math, predicates)
  if (op->getNumRegions() != 0)
    return op->emitError() << "'" << op->getName()
                           << "' has regions and no iteration space; SOAP "
                              "cannot partition it";
  for (Type t : op->getOperandTypes())
    if (auto tensor = dyn_cast<TensorType>(t);
        tensor && !tensor.hasStaticShape())
      return dynamicShapeError(op, t);
  if (op->getNumResults() == 0)
    return op->emitError() << "'" << op->getName()
                           << "' reads tensors and produces nothing; SOAP "
                              "cannot partition it";
  for (Type t : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!isa<TensorType>(t))
      return op->emitError()
             << "'" << op->getName() << "' produces a scalar (" << t
             << ") from a tensor; SOAP partitions programs on whole tensors "
                "only";
    if (!tensor || !tensor.hasStaticShape())
      return op->emitError() << "'" << op->getName()
                             << "' produces a dynamically shaped or unranked "
                                "tensor; SOAP cannot partition it";
  }
  return visitReplicated(op);
}

void Extractor::finalize() {
  // Drop tensors no node reads or writes (outputs replaced by grouping).
  auto &tensors = result.graph.tensors;
  std::vector<bool> used(tensors.size(), false);
  for (Node &node : result.graph.nodes) {
    for (Operand &op : node.inputs)
      used[op.tensor] = true;
    for (Operand &op : node.outputs)
      used[op.tensor] = true;
  }
  std::vector<int32_t> newIndex(tensors.size(), -1);
  std::vector<Tensor> kept;
  SmallVector<Value> keptValues;
  for (size_t t = 0; t < tensors.size(); ++t)
    if (used[t]) {
      newIndex[t] = kept.size();
      kept.push_back(std::move(tensors[t]));
      keptValues.push_back(result.tensorValues[t]);
    }
  tensors = std::move(kept);
  result.tensorValues = std::move(keptValues);
  tensorOf.clear();
  for (auto [i, v] : llvm::enumerate(result.tensorValues))
    tensorOf[v] = i;
  for (Node &node : result.graph.nodes) {
    for (Operand &op : node.inputs)
      op.tensor = newIndex[op.tensor];
    for (Operand &op : node.outputs)
      op.tensor = newIndex[op.tensor];
  }

  for (Node &node : result.graph.nodes) {
    double bytes = 0;
    llvm::SmallDenseSet<int32_t> seen;
    for (const Operand &op : node.inputs)
      if (seen.insert(op.tensor).second)
        bytes += result.graph.tensors[op.tensor].bytes();
    for (const Operand &op : node.outputs)
      bytes += result.graph.tensors[op.tensor].bytes();
    node.bytes = bytes;
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value v : ret.getOperands()) {
    auto it = tensorOf.find(v);
    if (it != tensorOf.end())
      result.graph.tensors[it->second].isOutput = true;
  }
  result.graph.name = func.getSymName().str();
}

FailureOr<ExtractedOpGraph> Extractor::run() {
  if (func.isExternal())
    return func.emitError() << "function '" << func.getSymName()
                            << "' has no body to partition";
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "function '" << func.getSymName()
           << "' has control flow (several blocks); SOAP partitions "
              "straight-line tensor programs";
  findParameters();
  for (Operation &op : func.getBody().front())
    if (failed(visit(&op)))
      return failure();
  finalize();
  std::string problem = result.graph.validate();
  if (!problem.empty())
    return func.emitError() << "internal error: the op graph is "
                               "inconsistent: "
                            << problem;
  return std::move(result);
}

FailureOr<func::FuncOp> mlir::soap::findEntryFunction(ModuleOp module,
                                                      StringRef name) {
  if (!name.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module.emitError() << "no function named '" << name
                                << "' in the module";
    return func;
  }
  llvm::DenseSet<StringRef> called;
  module.walk([&](func::CallOp call) { called.insert(call.getCallee()); });
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal() &&
        !called.contains(func.getSymName()))
      candidates.push_back(func);
  if (candidates.empty())
    return module.emitError()
           << "no entry function: expected a public function with a body "
              "that no other function calls";
  if (candidates.size() > 1) {
    InFlightDiagnostic diag = module.emitError()
                              << "several candidate entry functions (";
    llvm::interleaveComma(candidates, diag, [&](func::FuncOp f) {
      diag << "'" << f.getSymName() << "'";
    });
    diag << "); choose one with --entry=NAME";
    return diag;
  }
  return candidates.front();
}

llvm::SmallBitVector mlir::soap::getParameterArguments(func::FuncOp func) {
  Extractor extractor(func, OpGraphExtractionOptions());
  return extractor.parameterArguments();
}

std::optional<int64_t> mlir::soap::getUpdatedArgument(Value value) {
  for (OpOperand &use : value.getUses()) {
    auto ret = dyn_cast<func::ReturnOp>(use.getOwner());
    auto func = ret ? dyn_cast<func::FuncOp>(ret->getParentOp()) : nullptr;
    if (!func)
      continue;
    if (auto index = func.getResultAttrOfType<IntegerAttr>(
            use.getOperandNumber(), SOAPDialect::kUpdatesInputAttrName))
      return index.getInt();
  }
  return std::nullopt;
}

FailureOr<ExtractedOpGraph>
mlir::soap::extractOpGraph(func::FuncOp func,
                           const OpGraphExtractionOptions &options) {
  return Extractor(func, options).run();
}
