//===- LookupReductions.cpp - Embedding gathers as select reductions ------===//
//
// See Passes.td (soap-lookup-reductions).
//
//===----------------------------------------------------------------------===//

#include "soap/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_LOOKUPREDUCTIONS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// A gather `out[p] = table[..., id[p], ...]` in a generic's body: the
/// table, which of its dimensions the id indexes, and the loop each other
/// dimension reads (at rowDim: ~0u, unused).
struct Gather {
  Value table;
  unsigned rowDim = 0;
  SmallVector<unsigned> loops;
};

/// The id an index of the extract comes from: a block argument of the
/// generic's one input through casts, or null.
static BlockArgument idArgument(Value index, Block &body) {
  while (Operation *def = index.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
      return nullptr;
    index = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(index);
  if (!arg || arg.getOwner() != &body || arg.getArgNumber() != 0 ||
      !arg.getType().isSignlessInteger())
    return nullptr;
  return arg;
}

/// The yielded `tensor.extract` of a tensor captured from outside `op`, of
/// static shape: a read the op's operands do not show. Null otherwise.
static tensor::ExtractOp capturedRead(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
    return {};
  Block &body = *op.getBlock();
  auto extract =
      body.getTerminator()->getOperand(0).getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getBlock() != &body)
    return {};
  Value table = extract.getTensor();
  auto tableType = dyn_cast<RankedTensorType>(table.getType());
  if (op->isAncestor(table.getParentBlock()->getParentOp()) || !tableType ||
      !tableType.hasStaticShape())
    return {};
  return extract;
}

/// Nothing in `body` but `extract` computes a value the result depends on
/// (what an export's stripped asserts compared is dead).
static bool onlyPureBesides(Block &body, Operation *extract) {
  return llvm::all_of(body.without_terminator(), [&](Operation &inner) {
    return &inner == extract || isPure(&inner);
  });
}

static std::optional<Gather> matchGather(linalg::GenericOp op) {
  tensor::ExtractOp extract = capturedRead(op);
  if (!extract || op.getNumDpsInputs() != 1)
    return std::nullopt;
  Block &body = *op.getBlock();
  Value table = extract.getTensor();
  auto tableType = cast<RankedTensorType>(table.getType());
  Type element = op.getDpsInitOperand(0)->get().getType();
  if (!isa<FloatType>(tableType.getElementType()) ||
      cast<RankedTensorType>(element).getElementType() !=
          tableType.getElementType() ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0))
           .isProjectedPermutation() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation())
    return std::nullopt;
  Gather gather;
  gather.table = table;
  bool haveId = false;
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    if (auto loop = index.getDefiningOp<linalg::IndexOp>()) {
      // Each loop at most once (the table's map a projected permutation),
      // over the whole dimension (an operand of the new op must match the
      // loop's extent).
      if (llvm::is_contained(gather.loops, loop.getDim()) ||
          op.getStaticLoopRanges()[loop.getDim()] != tableType.getDimSize(dim))
        return std::nullopt;
      gather.loops.push_back(loop.getDim());
      continue;
    }
    if (haveId || !idArgument(index, body))
      return std::nullopt;
    haveId = true;
    gather.rowDim = dim;
    gather.loops.push_back(~0u); // unused: the row loop
  }
  if (!haveId || !onlyPureBesides(body, extract))
    return std::nullopt;
  return gather;
}

/// out[p] = select(id[p] == r, table[.., r, ..], out[p]) over a new
/// reduction loop r (the last), out filled with zeros.
static void rewriteGather(linalg::GenericOp op, const Gather &gather) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  auto extend = [&](AffineMap map) {
    return AffineMap::get(numLoops + 1, 0, map.getResults(), ctx);
  };
  SmallVector<AffineExpr> tableDims;
  for (auto [dim, loop] : llvm::enumerate(gather.loops))
    tableDims.push_back(
        getAffineDimExpr(dim == gather.rowDim ? numLoops : loop, ctx));
  SmallVector<AffineMap> maps = {
      extend(op.getMatchingIndexingMap(op.getDpsInputOperand(0))),
      AffineMap::get(numLoops + 1, 0, tableDims, ctx),
      extend(op.getMatchingIndexingMap(op.getDpsInitOperand(0)))};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::reduction);
  Value init = op.getDpsInitOperand(0)->get();
  Type element = cast<RankedTensorType>(init.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value zeros = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  Value ids = op.getDpsInputOperand(0)->get();
  auto lookup = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{ids, gather.table}, zeros, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value row = linalg::IndexOp::create(nb, nl, numLoops);
        Value rowId =
            arith::IndexCastOp::create(nb, nl, args[0].getType(), row);
        Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                          args[0], rowId);
        Value kept = arith::SelectOp::create(nb, nl, hit, args[1], args[2]);
        linalg::YieldOp::create(nb, nl, kept);
      });
  lookup->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op->replaceAllUsesWith(lookup->getResults());
  op->erase();
}

/// A read of a captured tensor at loop indices, some reversed: `out[p] =
/// table[..., p_d, ..., (n - 1) - p_e, ...]` (torch-mlir's aten.flip, and
/// the transposed and flipped filter of its transposed convolution).
struct IndexedRead {
  tensor::ExtractOp extract;
  /// Per table dim, the loop that indexes it and whether it is reversed.
  SmallVector<std::pair<unsigned, bool>> dims;
};

static std::optional<IndexedRead> matchIndexedRead(linalg::GenericOp op) {
  tensor::ExtractOp extract = capturedRead(op);
  if (!extract ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isPermutation())
    return std::nullopt;
  auto tableType = cast<RankedTensorType>(extract.getTensor().getType());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  IndexedRead read{extract, {}};
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    bool reversed = false;
    APInt last;
    if (auto sub = index.getDefiningOp<arith::SubIOp>();
        sub && matchPattern(sub.getLhs(), m_ConstantInt(&last))) {
      index = sub.getRhs();
      reversed = true;
    }
    auto loop = index.getDefiningOp<linalg::IndexOp>();
    // Each loop at most once, over the whole dimension (reversed: from its
    // last element).
    if (!loop || llvm::any_of(read.dims, [&](auto &d) {
          return d.first == loop.getDim();
        }))
      return std::nullopt;
    int64_t extent = ranges[loop.getDim()];
    if (extent != tableType.getDimSize(dim) ||
        (reversed && last.getSExtValue() != extent - 1))
      return std::nullopt;
    read.dims.push_back({static_cast<unsigned>(loop.getDim()), reversed});
  }
  if (!onlyPureBesides(*op.getBlock(), extract))
    return std::nullopt;
  return read;
}

/// The table becomes an operand. Plain dims read it through their loops;
/// each reversed dim through a new reduction loop j that keeps the element
/// where j = (n - 1) - p_e: a one-hot sum over j (out starts at zero).
static void rewriteIndexedRead(linalg::GenericOp op, const IndexedRead &read) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = op.getNumLoops();
  SmallVector<std::pair<unsigned, unsigned>> reversals; // (loop, new loop)
  SmallVector<AffineExpr> tableDims;
  for (auto [loop, reversed] : read.dims) {
    if (!reversed) {
      tableDims.push_back(getAffineDimExpr(loop, ctx));
      continue;
    }
    unsigned j = numLoops + reversals.size();
    reversals.push_back({loop, j});
    tableDims.push_back(getAffineDimExpr(j, ctx));
  }
  unsigned total = numLoops + reversals.size();
  OpOperand *initOperand = op.getDpsInitOperand(0);
  Value init = initOperand->get();
  SmallVector<AffineMap> maps = {
      AffineMap::get(total, 0, tableDims, ctx),
      AffineMap::get(total, 0,
                     op.getMatchingIndexingMap(initOperand).getResults(), ctx)};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.append(reversals.size(), utils::IteratorType::reduction);
  Type element = cast<RankedTensorType>(init.getType()).getElementType();
  if (!reversals.empty()) {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
    init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  }
  Value table = read.extract->getOperand(0);
  auto gather = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{table}, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        if (reversals.empty()) {
          linalg::YieldOp::create(nb, nl, args[0]);
          return;
        }
        Value hit;
        for (auto [loop, j] : reversals) {
          // p_e + j == n - 1.
          Value sum = arith::AddIOp::create(
              nb, nl, linalg::IndexOp::create(nb, nl, loop),
              linalg::IndexOp::create(nb, nl, j));
          int64_t last = op.getStaticLoopRanges()[loop] - 1;
          Value eq = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::eq, sum,
              arith::ConstantIndexOp::create(nb, nl, last));
          hit = hit ? arith::AndIOp::create(nb, nl, hit, eq).getResult() : eq;
        }
        Value zero = arith::ConstantOp::create(nb, nl, nb.getZeroAttr(element));
        Value kept = arith::SelectOp::create(nb, nl, hit, args[0], zero);
        linalg::YieldOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, args[1], kept).getResult());
      });
  gather->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op->replaceAllUsesWith(gather->getResults());
  op->erase();
}

/// A read of a captured tensor at loop indices, some divided by a
/// constant: `out[p] = table[..., p_d floordiv s, ...]` (torch-mlir's
/// nearest-neighbour upsampling by an integer factor s).
struct BlockRead {
  tensor::ExtractOp extract;
  /// Per table dim, the loop that indexes it and its factor (1: plain).
  SmallVector<std::pair<unsigned, int64_t>> dims;
};

static std::optional<BlockRead> matchBlockRead(linalg::GenericOp op) {
  tensor::ExtractOp extract = capturedRead(op);
  if (!extract ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  auto tableType = cast<RankedTensorType>(extract.getTensor().getType());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  BlockRead read{extract, {}};
  bool divided = false;
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    int64_t factor = 1;
    APInt c;
    if (auto div = index.getDefiningOp<arith::FloorDivSIOp>();
        div && matchPattern(div.getRhs(), m_ConstantInt(&c)) &&
        c.getSExtValue() > 1) {
      factor = c.getSExtValue();
      index = div.getLhs();
      divided = true;
    }
    auto loop = index.getDefiningOp<linalg::IndexOp>();
    if (!loop || llvm::any_of(read.dims, [&](auto &d) {
          return d.first == loop.getDim();
        }))
      return std::nullopt;
    // Each element of the table's dim repeated `factor` times covers the
    // loop exactly.
    if (ranges[loop.getDim()] != tableType.getDimSize(dim) * factor)
      return std::nullopt;
    read.dims.push_back({static_cast<unsigned>(loop.getDim()), factor});
  }
  if (!divided || !onlyPureBesides(*op.getBlock(), extract))
    return std::nullopt;
  return read;
}

/// Each divided loop k = s q + r becomes loops (q, r): the table is read
/// through (.., q, ..), broadcast over r, into the output with its dims
/// split so (an expand of its shape), and the result collapsed back.
static void rewriteBlockRead(linalg::GenericOp op, const BlockRead &read) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> factor(ranges.size(), 1);
  for (auto [loop, f] : read.dims)
    factor[loop] = f;
  // New loops: per old loop d, (q, r) when divided, else d.
  SmallVector<unsigned> first; // old loop -> its (first) new loop
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (auto [d, extent] : llvm::enumerate(ranges)) {
    first.push_back(shape.size());
    if (factor[d] == 1) {
      groups.push_back({static_cast<int64_t>(shape.size())});
      shape.push_back(extent);
      continue;
    }
    groups.push_back({static_cast<int64_t>(shape.size()),
                      static_cast<int64_t>(shape.size()) + 1});
    shape.push_back(extent / factor[d]);
    shape.push_back(factor[d]);
  }
  unsigned numLoops = shape.size();
  SmallVector<AffineExpr> tableDims;
  for (auto [loop, f] : read.dims)
    tableDims.push_back(getAffineDimExpr(first[loop], ctx));
  Value init = op.getDpsInitOperand(0)->get();
  Type element = cast<RankedTensorType>(init.getType()).getElementType();
  Value empty = tensor::EmptyOp::create(b, loc, shape, element);
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, tableDims, ctx),
                                 b.getMultiDimIdentityMap(numLoops)};
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  auto spread = linalg::GenericOp::create(
      b, loc, empty.getType(), ValueRange{read.extract->getOperand(0)}, empty,
      maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, args[0]);
      });
  spread->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Value result = tensor::CollapseShapeOp::create(b, loc, init.getType(),
                                                 spread.getResult(0), groups);
  op->replaceAllUsesWith(ValueRange{result});
  op->erase();
}

/// Rewrites every generic in `root` that `match` matches (all matched
/// first: a rewrite erases the op).
template <typename Match>
static void rewriteAll(Operation *root,
                       std::optional<Match> (*match)(linalg::GenericOp),
                       void (*rewrite)(linalg::GenericOp, const Match &)) {
  SmallVector<std::pair<linalg::GenericOp, Match>> found;
  root->walk([&](linalg::GenericOp op) {
    if (std::optional<Match> m = match(op))
      found.push_back({op, *m});
  });
  for (auto &[op, m] : found)
    rewrite(op, m);
}

struct LookupReductionsPass
    : public mlir::soap::impl::LookupReductionsBase<LookupReductionsPass> {
  void runOnOperation() override {
    rewriteAll(getOperation(), matchGather, rewriteGather);
    rewriteAll(getOperation(), matchIndexedRead, rewriteIndexedRead);
    rewriteAll(getOperation(), matchBlockRead, rewriteBlockRead);
  }
};

} // namespace
