//===- ConvolutionPatterns.cpp - Convolutions a library computes ---------===//

#include "ConvolutionPatterns.h"
#include "LibraryCalls.h"

#include "soap/Analysis/OpGraphExtraction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlir {
namespace soap {
/// A statically shaped tensor or memref of `element`.
static bool isStaticOf(Value v, Type element) {
  auto type = dyn_cast<ShapedType>(v.getType());
  return type && type.getElementType() == element && type.hasStaticShape();
}

/// Whether the body is `yield(acc + a * b)` over the two inputs.
static bool isMultiplyAccumulate(linalg::LinalgOp op) {
  Block &body = *op.getBlock();
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || body.getOperations().size() != 3)
    return false;
  BlockArgument acc = body.getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if ((add.getLhs() != acc && add.getRhs() != acc) || !mul)
    return false;
  return (mul.getLhs() == body.getArgument(0) &&
          mul.getRhs() == body.getArgument(1)) ||
         (mul.getLhs() == body.getArgument(1) &&
          mul.getRhs() == body.getArgument(0));
}

/// The loop each result of `map` is (plain dims only).
static std::optional<SmallVector<int64_t>> plainLoops(AffineMap map) {
  SmallVector<int64_t> loops;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    loops.push_back(d.getPosition());
  }
  return loops;
}

std::optional<LibraryConvolution> matchLibraryConvolution(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic && !linalg::isaConvolutionOpInterface(op))
    return std::nullopt;
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || !isMultiplyAccumulate(op))
    return std::nullopt;
  // X, W and Y of one float type.
  Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  if (!isa<FloatType>(element))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (!isStaticOf(operand.get(), element))
      return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // X reads through the windows; of the other two, Y has the output
  // positions and W the window offsets.
  int xi = plainLoops(maps[0]) ? 1 : 0;
  if (!plainLoops(maps[1 - xi]) || !plainLoops(maps[2]) ||
      (generic == nullptr && xi != 0))
    return std::nullopt;
  LibraryConvolution conv;
  conv.filterGradient = generic != nullptr;
  conv.x = op.getDpsInputOperand(xi)->get();
  Value other = op.getDpsInputOperand(1 - xi)->get();
  Value output = op.getDpsInitOperand(0)->get();
  conv.y = conv.filterGradient ? other : output;
  conv.w = conv.filterGradient ? output : other;
  AffineMap yMap = conv.filterGradient ? maps[1 - xi] : maps[2];
  AffineMap wMap = conv.filterGradient ? maps[2] : maps[1 - xi];
  SmallVector<int64_t> yLoops = *plainLoops(yMap), wLoops = *plainLoops(wMap);
  int64_t numLoops = op.getNumLoops();
  SmallVector<int64_t> xAt(numLoops, -1), yAt(numLoops, -1), wAt(numLoops, -1);
  for (auto [dim, loop] : llvm::enumerate(yLoops))
    yAt[loop] = dim;
  for (auto [dim, loop] : llvm::enumerate(wLoops))
    wAt[loop] = dim;
  if (llvm::count_if(yAt, [](int64_t d) { return d >= 0; }) !=
          static_cast<int64_t>(yLoops.size()) ||
      llvm::count_if(wAt, [](int64_t d) { return d >= 0; }) !=
          static_cast<int64_t>(wLoops.size()))
    return std::nullopt; // a loop read twice
  // X: plain dims, and two windows (rows first) of an output position loop
  // (in Y only) and a window offset loop (in W only).
  SmallVector<::soap::DimAccess> reads = getDimAccesses(maps[xi]);
  SmallVector<int64_t> windowDims;
  SmallVector<int64_t> posLoops, kerLoops;
  SmallVector<int64_t> loopRanges = op.getStaticLoopRanges();
  for (auto [dim, read] : llvm::enumerate(reads)) {
    if (read.whole || read.constant != 0)
      return std::nullopt;
    if (read.terms.size() == 1 && read.terms[0].coefficient == 1) {
      int64_t loop = read.terms[0].loop;
      if (xAt[loop] >= 0)
        return std::nullopt;
      xAt[loop] = dim;
      continue;
    }
    if (read.terms.size() != 2 || windowDims.size() == 2)
      return std::nullopt;
    const ::soap::LoopTerm *pos = &read.terms[0], *ker = &read.terms[1];
    if (yAt[pos->loop] < 0)
      std::swap(pos, ker);
    if (yAt[pos->loop] < 0 || wAt[pos->loop] >= 0 || wAt[ker->loop] < 0 ||
        yAt[ker->loop] >= 0 || pos->coefficient < 1 || ker->coefficient < 1)
      return std::nullopt;
    int w = static_cast<int>(windowDims.size());
    conv.strides[w] = pos->coefficient;
    conv.dilations[w] = ker->coefficient;
    conv.out[w] = loopRanges[pos->loop];
    conv.kernel[w] = loopRanges[ker->loop];
    windowDims.push_back(dim);
    posLoops.push_back(pos->loop);
    kerLoops.push_back(ker->loop);
  }
  if (windowDims.size() != 2)
    return std::nullopt;
  for (int64_t l : llvm::concat<int64_t>(posLoops, kerLoops))
    if (xAt[l] >= 0)
      return std::nullopt;
  // Every other loop by the operands that read it.
  std::optional<int64_t> n, g, c, f;
  auto setOnce = [](std::optional<int64_t> &slot, int64_t loop) {
    if (slot)
      return false;
    slot = loop;
    return true;
  };
  for (int64_t l = 0; l < numLoops; ++l) {
    if (llvm::is_contained(posLoops, l) || llvm::is_contained(kerLoops, l))
      continue;
    bool inX = xAt[l] >= 0, inY = yAt[l] >= 0, inW = wAt[l] >= 0;
    bool ok = inX && inY && inW    ? setOnce(g, l)
              : inX && inY && !inW ? setOnce(n, l)
              : inX && !inY && inW ? setOnce(c, l)
              : !inX && inY && inW ? setOnce(f, l)
                                   : false;
    if (!ok)
      return std::nullopt;
  }
  auto dimsOf = [](ArrayRef<int64_t> at,
                   std::initializer_list<std::optional<int64_t>> loops) {
    SmallVector<int64_t, 2> dims;
    for (std::optional<int64_t> l : loops)
      if (l)
        dims.push_back(at[*l]);
    return dims;
  };
  conv.xDims = {dimsOf(xAt, {n}), dimsOf(xAt, {g, c}),
                SmallVector<int64_t, 2>{windowDims[0]},
                SmallVector<int64_t, 2>{windowDims[1]}};
  conv.yDims = {dimsOf(yAt, {n}), dimsOf(yAt, {g, f}),
                SmallVector<int64_t, 2>{yAt[posLoops[0]]},
                SmallVector<int64_t, 2>{yAt[posLoops[1]]}};
  conv.wDims = {dimsOf(wAt, {g, f}), dimsOf(wAt, {c}),
                SmallVector<int64_t, 2>{wAt[kerLoops[0]]},
                SmallVector<int64_t, 2>{wAt[kerLoops[1]]}};
  conv.groups = g ? loopRanges[*g] : 1;
  conv.grouped = g.has_value();
  return conv;
}

namespace {
/// How the library's view of a buffer is made: a transpose (if `order` is not
/// the identity), a collapse of each group's dims (if any has several), an
/// expand adding the unit dims (if a group is empty).
struct ViewPlan {
  SmallVector<unsigned> order;
  MemRefType transposed;
  SmallVector<ReassociationIndices> collapse;
  bool merges = false;
  SmallVector<ReassociationIndices> expand;
  SmallVector<int64_t> shape;
};
} // namespace

static FailureOr<ViewPlan> planView(MemRefType type,
                                    const ConvolutionDims &dims) {
  ViewPlan plan;
  for (const auto &group : dims)
    for (int64_t d : group)
      plan.order.push_back(static_cast<unsigned>(d));
  if (static_cast<int64_t>(plan.order.size()) != type.getRank())
    return failure();
  plan.transposed = permutedType(type, plan.order);
  if (!plan.transposed)
    return failure();
  // Each group's dims merged.
  int64_t next = 0;
  for (const auto &group : dims) {
    if (group.empty())
      continue;
    ReassociationIndices indices;
    for (size_t i = 0; i < group.size(); ++i)
      indices.push_back(next++);
    plan.merges |= indices.size() > 1;
    plan.collapse.push_back(indices);
  }
  MemRefType collapsed = plan.transposed;
  if (plan.merges) {
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(plan.transposed,
                                                          plan.collapse))
      return failure();
    collapsed = memref::CollapseShapeOp::computeCollapsedType(plan.transposed,
                                                              plan.collapse);
  }
  // A unit dim for each empty group (with the group before it, or the
  // first one after it).
  if (llvm::all_of(dims, [](const auto &group) { return !group.empty(); }))
    return plan;
  if (collapsed.getRank() == 0)
    return failure();
  plan.expand.resize(collapsed.getRank());
  int64_t source = -1;
  for (auto [i, group] : llvm::enumerate(dims)) {
    if (!group.empty())
      ++source;
    plan.expand[std::max<int64_t>(source, 0)].push_back(
        static_cast<int64_t>(i));
    plan.shape.push_back(group.empty() ? 1 : collapsed.getDimSize(source));
  }
  if (failed(memref::ExpandShapeOp::computeExpandedType(collapsed, plan.shape,
                                                        plan.expand)))
    return failure();
  return plan;
}

bool hasConvolutionView(Value buffer, const ConvolutionDims &dims) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  return type && succeeded(planView(type, dims));
}

Value convolutionView(OpBuilder &b, Location loc, Value buffer,
                      const ConvolutionDims &dims) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type)
    return {};
  FailureOr<ViewPlan> plan = planView(type, dims);
  if (failed(plan))
    return {};
  Value view = buffer;
  if (!llvm::equal(plan->order, llvm::seq<unsigned>(0, plan->order.size()))) {
    AffineMap permutation =
        AffineMap::getPermutationMap(plan->order, b.getContext());
    view = memref::TransposeOp::create(b, loc, plan->transposed, view,
                                       AffineMapAttr::get(permutation));
  }
  if (plan->merges)
    view = memref::CollapseShapeOp::create(b, loc, view, plan->collapse);
  if (!plan->expand.empty())
    view =
        memref::ExpandShapeOp::create(b, loc, plan->shape, view, plan->expand);
  return view;
}

} // namespace soap
} // namespace mlir
