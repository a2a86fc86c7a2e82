//===- PoolGradient.cpp - Input gradient of a 2-D pooling -----------------===//
//
// Along one spatial dimension a pooling with window K and stride S reads
// input element h = S * q + r (0 <= r < S) in window o at offset
// i = h - S * o, for every o in [0, O) with 0 <= i < K. The windows that can
// hold it are o = q - t, t in [0, ceil(K / S)): the input gradient is a
// reduction over those (window mode, t = reach - 1 - e so that the gradient,
// padded by reach - 1 windows before, is read at q + e) or, when there are
// fewer windows than that (a global pooling), over all O windows (window
// mode would read mostly padding). Offsets i >= K (and i < 0 in the second
// form) are masked out; the input rows and columns are split into (q, r) by
// reshaping the result, which gets rid of the zeros a dilated gradient would
// carry (S * S - 1 of every S * S values).
//
//===----------------------------------------------------------------------===//

#include "PoolGradient.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::soap;

namespace {

/// One spatial dimension of the pooling.
struct Axis {
  int64_t in, out, window, stride;

  /// The extent of q: ceil(in / stride).
  int64_t blocks() const { return (in + stride - 1) / stride; }
  /// The most windows an element lies in.
  int64_t reach() const { return (window + stride - 1) / stride; }
  /// e counts windows from the element's first (else e is the window).
  bool byReach() const { return reach() <= out; }
  int64_t extent() const { return byReach() ? reach() : out; }
  /// Windows of padding before and after the gradient.
  int64_t padLow() const { return byReach() ? reach() - 1 : 0; }
  int64_t padHigh() const { return byReach() ? blocks() - out : 0; }
  /// Whether some (q, r, e) lands outside its window.
  bool masked() const {
    if (byReach())
      return window % stride != 0;
    return !(out == 1 && blocks() * stride <= window);
  }
};

} // namespace

/// `v` with `low` / `high` zeros before / after its rows and columns (dims
/// `spatial` and `spatial` + 1).
static Value padSpatial(OpBuilder &b, Location loc, Value v, int64_t spatial,
                        ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lo(type.getRank(), b.getIndexAttr(0)),
      hi(type.getRank(), b.getIndexAttr(0));
  for (int d = 0; d < 2; ++d) {
    shape[spatial + d] += low[d] + high[d];
    lo[spatial + d] = b.getIndexAttr(low[d]);
    hi[spatial + d] = b.getIndexAttr(high[d]);
  }
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  return tensor::PadOp::create(
             b, loc, RankedTensorType::get(shape, type.getElementType()), v,
             lo, hi, zero)
      .getResult();
}

/// Whether loop values (q, r, e) of `axis` put the element inside the
/// window: 0 <= i < K for i = S * q + r - S * e (e the window), or
/// i = S * (reach - 1 - e) + r (e counting windows). `rLoop` < 0: r = 0
/// (stride 1).
static Value insideWindow(OpBuilder &b, Location loc, const Axis &axis,
                          unsigned qLoop, int rLoop, unsigned eLoop) {
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value r = rLoop >= 0 ? linalg::IndexOp::create(b, loc, rLoop).getResult()
                       : constant(0);
  Value e = linalg::IndexOp::create(b, loc, eLoop);
  Value se = arith::MulIOp::create(b, loc, e, constant(axis.stride));
  Value offset;
  if (axis.byReach()) {
    Value first = arith::AddIOp::create(
        b, loc, r, constant(axis.stride * (axis.reach() - 1)));
    offset = arith::SubIOp::create(b, loc, first, se);
  } else {
    Value q = linalg::IndexOp::create(b, loc, qLoop);
    Value sq = arith::MulIOp::create(b, loc, q, constant(axis.stride));
    offset = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, sq, r), se);
  }
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       offset, constant(axis.window));
  if (!axis.byReach())
    inside = arith::AndIOp::create(
        b, loc, inside,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offset,
                              constant(0)));
  return inside;
}

PoolGradient mlir::soap::buildPoolInputGradient(OpBuilder &b,
                                                linalg::LinalgOp pool,
                                                bool isMax, Value grad) {
  Location loc = pool.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = pool.getDpsInputOperand(0)->get();
  Value y = pool->getResult(0);
  auto xType = cast<RankedTensorType>(x.getType());
  auto yType = cast<RankedTensorType>(y.getType());
  auto windowType =
      cast<RankedTensorType>(pool.getDpsInputOperand(1)->get().getType());
  SmallVector<int64_t> strides(
      pool->getAttrOfType<DenseIntElementsAttr>("strides")
          .getValues<int64_t>());
  Type elem = xType.getElementType();
  // Rows and columns: dims 2 and 3 (NCHW) or 1 and 2 (NHWC). The pooling's
  // loops are the tensor's dims in order, then the window's.
  int64_t spatial =
      isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(pool) ? 1 : 2;
  std::array<Axis, 2> axes;
  for (int d = 0; d < 2; ++d)
    axes[d] = {xType.getDimSize(spatial + d), yType.getDimSize(spatial + d),
               windowType.getDimSize(d), strides[d]};
  SmallVector<int64_t> low = {axes[0].padLow(), axes[1].padLow()};
  SmallVector<int64_t> high = {axes[0].padHigh(), axes[1].padHigh()};

  // Loops over the tensor's dims in order, each row or column dim as
  // (q, [r]) (r only where the stride is not 1: else q is the row or column
  // itself), then (eh, ew): (n, c, qh, [rh], qw, [rw], eh, ew) for NCHW.
  SmallVector<int32_t> forwardLoops;
  SmallVector<int64_t> blockedShape;
  SmallVector<ReassociationIndices> groups;
  unsigned qLoop[2];
  int rLoop[2] = {-1, -1};
  for (int64_t dim = 0; dim < xType.getRank(); ++dim) {
    int64_t d = dim - spatial;
    if (d < 0 || d > 1) {
      groups.push_back({static_cast<int64_t>(forwardLoops.size())});
      forwardLoops.push_back(dim);
      blockedShape.push_back(xType.getDimSize(dim));
      continue;
    }
    qLoop[d] = forwardLoops.size();
    forwardLoops.push_back(dim);
    blockedShape.push_back(axes[d].blocks());
    groups.push_back({static_cast<int64_t>(qLoop[d])});
    if (strides[d] == 1)
      continue;
    rLoop[d] = forwardLoops.size();
    forwardLoops.push_back(-1);
    blockedShape.push_back(strides[d]);
    groups.back().push_back(rLoop[d]);
  }
  unsigned eLoop[2] = {static_cast<unsigned>(forwardLoops.size()),
                       static_cast<unsigned>(forwardLoops.size() + 1)};
  forwardLoops.append({-1, -1});
  unsigned numLoops = forwardLoops.size();
  auto dim = [&](unsigned loop) { return getAffineDimExpr(loop, ctx); };
  SmallVector<AffineExpr> blockedExprs;
  for (unsigned loop = 0; loop < eLoop[0]; ++loop)
    blockedExprs.push_back(dim(loop));
  AffineMap blocked = AffineMap::get(numLoops, 0, blockedExprs, ctx);
  SmallVector<AffineExpr> windowExprs;
  for (auto [tensorDim, group] : llvm::enumerate(groups)) {
    int64_t d = static_cast<int64_t>(tensorDim) - spatial;
    if (d < 0 || d > 1)
      windowExprs.push_back(dim(group.front()));
    else
      windowExprs.push_back(axes[d].byReach() ? dim(qLoop[d]) + dim(eLoop[d])
                                              : dim(eLoop[d]));
  }
  AffineMap windows = AffineMap::get(numLoops, 0, windowExprs, ctx);
  bool reshaped = blockedShape.size() != groups.size();
  auto toBlocks = [&](Value v) -> Value {
    if (!reshaped)
      return v;
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(blockedShape, elem), v, groups);
  };

  // The reduction loops' extents (data-free, like the pooling's window).
  SmallVector<Value> inputs = {tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{axes[0].extent(), axes[1].extent()}, elem)};
  SmallVector<AffineMap> maps = {
      AffineMap::get(numLoops, 0, {dim(eLoop[0]), dim(eLoop[1])}, ctx)};
  if (isMax) {
    // x in blocks, padded to whole ones.
    inputs.push_back(
        toBlocks(padSpatial(b, loc, x, spatial, {0, 0},
                            {axes[0].blocks() * strides[0] - axes[0].in,
                             axes[1].blocks() * strides[1] - axes[1].in})));
    maps.push_back(blocked);
  }
  inputs.push_back(padSpatial(b, loc, grad, spatial, low, high));
  maps.push_back(windows);
  if (isMax) {
    inputs.push_back(padSpatial(b, loc, y, spatial, low, high));
    maps.push_back(windows);
  }
  maps.push_back(blocked);
  Value empty = tensor::EmptyOp::create(b, loc, blockedShape, elem);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 0.0));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);

  SmallVector<utils::IteratorType> iterators(eLoop[0],
                                             utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value g = args[isMax ? 2 : 1];
        Value keep;
        if (isMax)
          // The window's maximum takes the gradient (every equal one).
          keep = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                       args[1], args[3]);
        for (int d = 0; d < 2; ++d) {
          if (!axes[d].masked())
            continue;
          Value inside =
              insideWindow(nb, l, axes[d], qLoop[d], rLoop[d], eLoop[d]);
          keep = keep ? arith::AndIOp::create(nb, l, keep, inside).getResult()
                      : inside;
        }
        if (keep)
          g = arith::SelectOp::create(
              nb, l, keep, g,
              arith::ConstantOp::create(nb, l, nb.getFloatAttr(elem, 0.0)));
        linalg::YieldOp::create(
            nb, l, arith::AddFOp::create(nb, l, args.back(), g).getResult());
      });

  // (q, r) back into rows and columns, without the padding blocks.
  Value result = generic.getResult(0);
  if (reshaped)
    result = tensor::CollapseShapeOp::create(b, loc, result, groups);
  auto resultType = cast<RankedTensorType>(result.getType());
  if (resultType != xType) {
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)), sizes,
        unit(4, b.getIndexAttr(1));
    for (int64_t s : xType.getShape())
      sizes.push_back(b.getIndexAttr(s));
    result = tensor::ExtractSliceOp::create(b, loc, xType, result, offsets,
                                            sizes, unit);
  }
  return {result, generic, forwardLoops};
}
