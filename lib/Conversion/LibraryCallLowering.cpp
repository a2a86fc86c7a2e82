//===- LibraryCallLowering.cpp - What both library-call passes do --------===//
//
// See LibraryCallLowering.h.
//
//===----------------------------------------------------------------------===//

#include "LibraryCallLowering.h"

#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::soap;

namespace {
/// A zero-padded input that only convolutions and filter gradients read
/// (a forward convolution, and in a training step also its filter
/// gradient, whole or a leading part of it: a strided window that does
/// not reach the last rows). The library pads by itself, the same amount on
/// both sides, so each call can take the unpadded input with the low padding
/// instead when that gives the op's output size (a smaller high padding
/// only cuts rows no output reads): the padded buffer is never made. The
/// unpadded input must hold its values until the last reader; its
/// deallocations in between move after it.
struct PaddedInput {
  Value source;
  int64_t padH = 0, padW = 0;
  SmallVector<Operation *> readers;
  SmallVector<Operation *> ops;   // to erase, users first
  SmallVector<Operation *> frees; // of the source, to move
};
/// The input gradient of a convolution as soap-training-step writes it,
/// bufferized: a stride-1 convolution of the same kind and dilations over
/// dY, spread by the forward strides and zero-padded by the window's span
/// less one on each side, with the filter flipped in its window and its
/// channel roles swapped (shown for NCHW; any layout the library views, the
/// rows and columns dims from the convolution):
///
///   Wf = alloc; linalg.generic ins(W) outs(Wf), W[f, c, i, j] at
///        Wf[c, f, KH-1-i, KW-1-j]
///   (strides > 1) D6 = alloc N x F x OH x SH x OW x SW, zero fill,
///        copy of dY (expanded to N x F x OH x 1 x OW x 1) into
///        D6[:, :, :, 0:1, :, 0:1]; D = a leading part of D6 collapsed
///   P = alloc, zero fill, copy of D (or dY) into
///        P[:, :, SH-1-PH:, SW-1-PW:]
///        (S the window's span, (K - 1) D + 1; P the forward's padding:
///        dX the gradient of the unpadded input)
///   dX += conv(P, Wf)
///
/// which is the library's input gradient of the forward convolution (stride
/// SH x SW, the same dilations and groups, padding PH x PW) from W and dY:
/// no flipped filter, no spread or padded copy, and none of the products
/// with the spread's zeros.
struct InputGradient {
  LibraryConvolution conv; // the stride-1 convolution
  Value w, dy;
  /// The part of dY the gradient reads: all of it but in dims a crop of the
  /// spread dY cuts (a rank that needs only some images).
  SmallVector<int64_t> dyOffsets, dyShape;
  ConvolutionDims wDims; // W's view (the forward filter's)
  int64_t strideH = 1, strideW = 1;
  int64_t padH = 0, padW = 0;     // the forward's (both sides alike)
  SmallVector<Operation *> ops;   // to erase, users first
  SmallVector<Operation *> frees; // of dY before the call, to move
};
/// The part of the gradient of a padded input that anyone reads: dX =
/// alloc, zero-filled right before the gradient, read only through one
/// view at offset 0 but in its rows and columns (padH, padW: the pad's
/// gradient) whose users take any layout (linalg ops, copies) and run
/// after the gradient. With that padding the library computes just this
/// interior, into a buffer of its own; the border rows and columns, which
/// the stride-1 convolution would have computed, are never made.
struct InteriorOutput {
  memref::AllocOp alloc;
  memref::SubViewOp interior;
  int64_t padH = 0, padW = 0;
};
} // namespace

std::string LibraryCallLowering::convolutionFunction(ConvolutionCall kind,
                                                     Type type) const {
  StringRef infix = kind == ConvolutionCall::Forward          ? ""
                    : kind == ConvolutionCall::FilterGradient ? "_filter_grad"
                                                              : "_input_grad";
  return getRuntimeFunctionName((convolutionPrefix + infix).str(), type);
}

/// Whether `v` is a statically shaped memref of `element`.
static bool isStaticBufferOf(Value v, Type element) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getElementType() == element;
}

/// Whether the library's views of `conv`'s operands (X replaced by `x` if
/// given) can be made.
static bool viewsExist(const LibraryConvolution &conv, Value x = {}) {
  return hasConvolutionView(x ? x : conv.x, conv.xDims) &&
         hasConvolutionView(conv.w, conv.wDims) &&
         hasConvolutionView(conv.y, conv.yDims);
}

std::optional<LibraryConvolution>
LibraryCallLowering::convolutionOf(Operation *op) const {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics())
    return std::nullopt;
  return matchConvolution(linalgOp);
}

static std::optional<PaddedInput>
matchPaddedInput(const LibraryCallLowering &lowering, memref::AllocOp alloc) {
  std::optional<ZeroPadded> padded =
      matchZeroPadded(alloc, [&](Operation *op, Value read) {
        std::optional<LibraryConvolution> conv = lowering.convolutionOf(op);
        return conv && conv->x == read;
      });
  if (!padded)
    return std::nullopt;
  // The interior: at offset 0 but in the rows and columns every reader
  // reads through its windows, of a buffer as large elsewhere; no reader
  // reads a row or column beyond the symmetric padding, and the library's
  // output size is each reader's.
  memref::SubViewOp interior = padded->interior;
  auto inner = cast<MemRefType>(interior.getType());
  ArrayRef<int64_t> offsets = interior.getStaticOffsets();
  std::optional<LibraryConvolution> first =
      lowering.convolutionOf(padded->readers[0]);
  int64_t rows = first->xRows(), cols = first->xCols();
  if (ShapedType::isDynamicShape(offsets) || !inner.hasStaticShape() ||
      !isStaticBufferOf(padded->source, inner.getElementType()))
    return std::nullopt;
  for (auto [d, offset] : llvm::enumerate(offsets))
    if (offset != 0 && static_cast<int64_t>(d) != rows &&
        static_cast<int64_t>(d) != cols)
      return std::nullopt;
  for (Operation *reader : padded->readers) {
    std::optional<LibraryConvolution> conv = lowering.convolutionOf(reader);
    auto read = cast<MemRefType>(conv->x.getType());
    if (!read.hasStaticShape() || conv->xRows() != rows ||
        conv->xCols() != cols || read.getRank() != inner.getRank())
      return std::nullopt;
    for (int64_t d = 0; d < inner.getRank(); ++d)
      if (d != rows && d != cols && inner.getDimSize(d) != read.getDimSize(d))
        return std::nullopt;
    for (int d = 0; d < 2; ++d) {
      int64_t dim = d == 0 ? rows : cols;
      int64_t size = inner.getDimSize(dim), pad = offsets[dim];
      if (read.getDimSize(dim) > size + 2 * pad ||
          conv->windows(d, size + 2 * pad, conv->strides[d]) != conv->out[d])
        return std::nullopt;
    }
  }
  PaddedInput result;
  // The source must still hold its values when the last reader runs.
  if (!lowering.getWrites().unchangedBetween(
          padded->source, padded->ops.front(), padded->readers.back(),
          &result.frees))
    return std::nullopt;
  result.source = padded->source;
  result.padH = offsets[rows];
  result.padW = offsets[cols];
  result.readers = std::move(padded->readers);
  result.ops = std::move(padded->ops);
  return result;
}

static std::optional<InputGradient>
matchInputGradient(const LibraryCallLowering &lowering, linalg::LinalgOp op) {
  std::optional<LibraryConvolution> conv = lowering.convolutionOf(op);
  if (!conv || conv->filterGradient || conv->strides[0] != 1 ||
      conv->strides[1] != 1)
    return std::nullopt;
  InputGradient result;
  result.conv = *conv;
  int64_t span[2] = {conv->span(0), conv->span(1)};

  // The flipped filter: Wf dim d is W dim `wOf[d]`, the window reversed.
  Value wf = conv->w;
  auto wfAlloc = wf.getDefiningOp<memref::AllocOp>();
  if (!wfAlloc || wfAlloc->getBlock() != op->getBlock())
    return std::nullopt;
  linalg::GenericOp flip;
  SmallVector<Operation *> wfDeallocs;
  for (Operation *user : wfAlloc->getUsers()) {
    if (user == op.getOperation())
      continue;
    if (isa<memref::DeallocOp>(user)) {
      wfDeallocs.push_back(user);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (flip || !generic || generic.getNumDpsInputs() != 1 ||
        generic.getNumDpsInits() != 1 ||
        generic.getDpsInitOperand(0)->get() != wf)
      return std::nullopt;
    flip = generic;
  }
  auto wfType = cast<MemRefType>(wf.getType());
  int64_t rank = wfType.getRank();
  if (!flip || flip->getBlock() != op->getBlock() ||
      !flip->isBeforeInBlock(op) || flip.getNumParallelLoops() != rank ||
      flip.getNumLoops() != rank)
    return std::nullopt;
  Block &body = *flip.getBlock();
  if (body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return std::nullopt;
  Value w = flip.getDpsInputOperand(0)->get();
  auto wType = cast<MemRefType>(w.getType());
  if (!isStaticBufferOf(w, wfType.getElementType()) || wType.getRank() != rank)
    return std::nullopt;
  SmallVector<AffineMap> maps = flip.getIndexingMapsArray();
  if (!maps[1].isIdentity() ||
      !lowering.getWrites().unchangedBetween(w, flip, op))
    return std::nullopt;
  int64_t windowDims[2] = {conv->wDims[2][0], conv->wDims[3][0]};
  SmallVector<int64_t> wOf(rank, -1);
  for (auto [j, e] : llvm::enumerate(maps[0].getResults())) {
    // W dim j read at Wf dim d (plain) or at K - 1 - d (window).
    AffineExpr expr = simplifyAffineExpr(e, rank, 0);
    int64_t d = -1;
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      d = dim.getPosition();
      if (d == windowDims[0] || d == windowDims[1])
        return std::nullopt;
    } else {
      for (int64_t k = 0; k < 2 && d < 0; ++k) {
        AffineExpr reversed = wfType.getDimSize(windowDims[k]) - 1 -
                              getAffineDimExpr(windowDims[k], op.getContext());
        if (simplifyAffineExpr(reversed, rank, 0) == expr)
          d = windowDims[k];
      }
      if (d < 0)
        return std::nullopt;
    }
    if (wOf[d] >= 0 || wType.getDimSize(j) != wfType.getDimSize(d))
      return std::nullopt;
    wOf[d] = static_cast<int64_t>(j);
  }
  // The forward filter's view: [group, its filters | channels | rows |
  // columns]; in the stride-1 convolution's roles its filters are the
  // channels and its channels the filters.
  const SmallVector<int64_t, 2> &gf = conv->wDims[0], &c = conv->wDims[1];
  SmallVector<int64_t, 2> group, filters, channels;
  size_t at = 0;
  if (conv->grouped)
    group.push_back(wOf[gf[at++]]);
  for (; at < gf.size(); ++at)
    channels.push_back(wOf[gf[at]]);
  for (int64_t d : c)
    filters.push_back(wOf[d]);
  result.wDims = {llvm::to_vector<2>(llvm::concat<int64_t>(group, filters)),
                  channels, SmallVector<int64_t, 2>{wOf[windowDims[0]]},
                  SmallVector<int64_t, 2>{wOf[windowDims[1]]}};
  result.w = w;

  // The padded (and spread) dY; a window spanning one row and column
  // pads nothing.
  int64_t rows = conv->xRows(), cols = conv->xCols();
  Value spread = conv->x;
  SmallVector<Operation *> padOps;
  if (span[0] > 1 || span[1] > 1) {
    std::optional<ZeroPadded> padded = matchZeroPadded(
        allocOf(spread), [&](Operation *user, Value) { return user == op; });
    if (!padded || padded->readers.size() != 1)
      return std::nullopt;
    ArrayRef<int64_t> offsets = padded->interior.getStaticOffsets();
    for (auto [d, offset] : llvm::enumerate(offsets)) {
      int64_t k = static_cast<int64_t>(d) == rows   ? 0
                  : static_cast<int64_t>(d) == cols ? 1
                                                    : -1;
      if (k < 0 ? offset != 0 : offset < 0 || offset > span[k] - 1)
        return std::nullopt;
      if (k >= 0)
        (k == 0 ? result.padH : result.padW) = span[k] - 1 - offset;
    }
    spread = padded->source;
    padOps = std::move(padded->ops);
  }
  auto spreadType = cast<MemRefType>(spread.getType());
  SmallVector<Operation *> spreadOps;
  // A part of the spread dY (a rank's images), leading in the rows and
  // columns.
  memref::SubViewOp crop;
  if (auto view = spread.getDefiningOp<memref::SubViewOp>()) {
    ArrayRef<int64_t> offsets = view.getStaticOffsets();
    if (!view->hasOneUse() || !view.hasUnitStride() ||
        view.getType().getRank() != view.getSourceType().getRank() ||
        ShapedType::isDynamicShape(offsets) || offsets[rows] != 0 ||
        offsets[cols] != 0)
      return std::nullopt;
    crop = view;
    spread = view.getSource();
  }
  Value dy = spread;
  // D6 = alloc with rows and columns each split into (dY's, stride), dY
  // at offset 0 of each stride, collapsed. Anything else (another
  // reshape) is dY itself, at stride 1.
  auto matchSpread = [&](memref::CollapseShapeOp collapse) {
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> unitDims;
    int64_t next = 0;
    for (int64_t d = 0; d < spreadType.getRank(); ++d) {
      if (d == rows || d == cols) {
        groups.push_back({next, next + 1});
        unitDims.push_back(next + 1);
        next += 2;
      } else {
        groups.push_back({next++});
      }
    }
    if (!collapse->hasOneUse() || collapse.getReassociationIndices() != groups)
      return false;
    std::optional<ZeroPadded> spreadBuffer =
        matchZeroPadded(collapse.getSrc().getDefiningOp<memref::AllocOp>(),
                        [&](Operation *user, Value read) {
                          return user == collapse && read == collapse.getSrc();
                        });
    if (!spreadBuffer || spreadBuffer->readers.size() != 1)
      return false;
    auto d6 = cast<MemRefType>(collapse.getSrcType());
    memref::SubViewOp interior = spreadBuffer->interior;
    SmallVector<int64_t> interiorShape(d6.getShape());
    for (int64_t u : unitDims)
      interiorShape[u] = 1;
    auto expand = spreadBuffer->source.getDefiningOp<memref::ExpandShapeOp>();
    SmallVector<Operation *> frees;
    if (!llvm::all_of(interior.getStaticOffsets(),
                      [](int64_t o) { return o == 0; }) ||
        interior.getType().getShape() != ArrayRef<int64_t>(interiorShape) ||
        !expand || !expand->hasOneUse() ||
        expand.getReassociationIndices() != groups ||
        !spreadBuffer->ops.front()->isBeforeInBlock(
            padOps.empty() ? op.getOperation() : padOps.front()) ||
        !lowering.getWrites().unchangedBetween(
            expand.getSrc(), spreadBuffer->ops.front(), op, &frees))
      return false;
    dy = expand.getSrc();
    result.frees.append(frees);
    result.strideH = d6.getDimSize(unitDims[0]);
    result.strideW = d6.getDimSize(unitDims[1]);
    spreadOps = {collapse};
    spreadOps.append(spreadBuffer->ops);
    spreadOps.push_back(expand);
    return true;
  };
  auto collapse = spread.getDefiningOp<memref::CollapseShapeOp>();
  if (!collapse || !matchSpread(collapse)) {
    if (crop) { // dY is the part itself
      dy = crop.getResult();
      crop = nullptr;
    }
    if (!padOps.empty() && !lowering.getWrites().unchangedBetween(
                               dy, padOps.front(), op, &result.frees))
      return std::nullopt;
  }
  if (crop)
    spreadOps.insert(spreadOps.begin(), crop);
  auto dyType = cast<MemRefType>(dy.getType());
  auto dxType = cast<MemRefType>(conv->y.getType());
  if (!isStaticBufferOf(dy, dxType.getElementType()) ||
      dyType.getRank() != spreadType.getRank())
    return std::nullopt;
  // Shapes: dY at least as large as the (cropped) spread dY but in the
  // rows and columns, the call reading its leading part of that size; the
  // copied part of the spread dY holds every row dY has (more than
  // (OH - 1) * SH) and no more than the spread; dX's rows H with
  // OH = (H - span) / SH + 1.
  result.dyShape.assign(dyType.getShape().begin(), dyType.getShape().end());
  result.dyOffsets.assign(dyType.getRank(), 0);
  for (int64_t d = 0; d < dyType.getRank(); ++d) {
    if (d == rows || d == cols)
      continue;
    int64_t offset = crop ? crop.getStaticOffsets()[d] : 0;
    if (dyType.getDimSize(d) < offset + spreadType.getDimSize(d))
      return std::nullopt;
    result.dyShape[d] = spreadType.getDimSize(d);
    result.dyOffsets[d] = offset;
  }
  int64_t strides[2] = {result.strideH, result.strideW};
  int64_t pads[2] = {result.padH, result.padW};
  int64_t dyDims[2] = {rows, cols};
  int64_t dxDims[2] = {conv->yDims[2][0], conv->yDims[3][0]};
  for (int d = 0; d < 2; ++d) {
    int64_t oh = dyType.getDimSize(dyDims[d]);
    int64_t h = dxType.getDimSize(dxDims[d]) + 2 * pads[d];
    int64_t copied = spreadType.getDimSize(dyDims[d]);
    if (strides[d] < 1 || oh < 1 || copied <= (oh - 1) * strides[d] ||
        copied > oh * strides[d] || conv->windows(d, h, strides[d]) != oh)
      return std::nullopt;
  }
  result.dy = dy;
  result.ops = std::move(padOps);
  result.ops.append(spreadOps);
  result.ops.push_back(flip);
  result.ops.append(wfDeallocs);
  result.ops.push_back(wfAlloc);
  return result;
}

static std::optional<InteriorOutput>
matchInteriorOutput(linalg::LinalgOp op, const InputGradient &grad) {
  const LibraryConvolution &conv = grad.conv;
  Value dx = conv.y;
  auto alloc = dx.getDefiningOp<memref::AllocOp>();
  linalg::FillOp fill = zeroFillBefore(op, dx, grad.ops);
  if (!alloc || !fill || alloc->getBlock() != op->getBlock())
    return std::nullopt;
  InteriorOutput result;
  result.alloc = alloc;
  for (Operation *user : alloc->getUsers()) {
    if (user == op.getOperation() || user == fill ||
        isa<memref::DeallocOp>(user))
      continue;
    auto view = dyn_cast<memref::SubViewOp>(user);
    if (!view || result.interior)
      return std::nullopt;
    result.interior = view;
  }
  memref::SubViewOp interior = result.interior;
  if (!interior || !interior.hasUnitStride() ||
      !interior.getType().hasStaticShape())
    return std::nullopt;
  for (Operation *user : interior->getUsers())
    if (!isa<linalg::LinalgOp, memref::CopyOp>(user) ||
        user->getBlock() != op->getBlock() || !op->isBeforeInBlock(user))
      return std::nullopt;
  ArrayRef<int64_t> offsets = interior.getStaticOffsets();
  ArrayRef<int64_t> sizes = interior.getType().getShape();
  auto dxType = cast<MemRefType>(dx.getType());
  int64_t rows = conv.yDims[2][0], cols = conv.yDims[3][0];
  if (ShapedType::isDynamicShape(offsets) ||
      static_cast<int64_t>(sizes.size()) != dxType.getRank())
    return std::nullopt;
  for (int64_t d = 0; d < dxType.getRank(); ++d)
    if (d != rows && d != cols &&
        (offsets[d] != 0 || sizes[d] != dxType.getDimSize(d)))
      return std::nullopt;
  // The library pads both sides alike: the interior with that padding must give
  // dY's size (a smaller high padding cuts only rows dX does not have).
  auto dyType = cast<MemRefType>(grad.dy.getType());
  int64_t strides[2] = {grad.strideH, grad.strideW};
  int64_t dims[2] = {rows, cols};
  int64_t dyDims[2] = {conv.xRows(), conv.xCols()};
  for (int d = 0; d < 2; ++d) {
    int64_t padded = sizes[dims[d]] + 2 * offsets[dims[d]];
    if (conv.windows(d, padded, strides[d]) != dyType.getDimSize(dyDims[d]))
      return std::nullopt;
  }
  result.padH = offsets[rows];
  result.padW = offsets[cols];
  return result;
}

void LibraryCallLowering::erase(Operation *op) {
  erased.insert(op);
  op->erase();
}

func::CallOp LibraryCallLowering::call(OpBuilder &b, Operation *op,
                                       StringRef name, ArrayRef<Value> buffers,
                                       ArrayRef<int64_t> scalars, Value output,
                                       ArrayRef<Operation *> replaced) {
  linalg::FillOp fill = zeroFillBefore(op, output, replaced);
  if (fill)
    erase(fill);
  func::CallOp callOp = createLibraryCall(
      b, op->getLoc(), op->getParentOfType<ModuleOp>(), name, buffers, scalars,
      callFlags(/*overwrite=*/fill != nullptr), names.get(b, op));
  writes.recordCall(callOp, buffers.back());
  return callOp;
}

/// The readers of a padded input as calls on the unpadded input.
LogicalResult LibraryCallLowering::lowerPaddedInput(memref::AllocOp alloc) {
  std::optional<PaddedInput> padded = matchPaddedInput(*this, alloc);
  if (!padded)
    return failure();
  // Every reader's views must be possible before any becomes a call.
  for (Operation *reader : padded->readers)
    if (!viewsExist(*convolutionOf(reader), padded->source))
      return failure();
  Operation *last = nullptr;
  for (Operation *reader : padded->readers)
    last = lowerConvolution(cast<linalg::LinalgOp>(reader), padded->source,
                            padded->padH, padded->padW, padded->ops);
  assert(last && "the readers' views were checked");
  for (Operation *dead : padded->ops)
    erase(dead);
  for (Operation *free : padded->frees)
    free->moveAfter(last);
  return success();
}

/// dX += the input gradient of a convolution as a library call.
LogicalResult LibraryCallLowering::lowerInputGradient(linalg::LinalgOp op) {
  std::optional<InputGradient> grad = matchInputGradient(*this, op);
  if (!grad)
    return failure();
  const LibraryConvolution &conv = grad->conv;
  Value dx = conv.y;
  Value dy = grad->dy;
  auto dyType = cast<MemRefType>(dy.getType());
  OpBuilder builder(op);
  Location loc = op.getLoc();
  // The part of dY read.
  memref::SubViewOp dyPart;
  if (dyType.getShape() != ArrayRef<int64_t>(grad->dyShape) ||
      llvm::any_of(grad->dyOffsets, [](int64_t o) { return o != 0; })) {
    dyPart = memref::SubViewOp::create(
        builder, loc, dy, grad->dyOffsets, grad->dyShape,
        SmallVector<int64_t>(dyType.getRank(), 1));
    dy = dyPart;
  }
  // (The gradient of an unpadded input has no interior to take.)
  std::optional<InteriorOutput> interior;
  if (grad->padH == 0 && grad->padW == 0)
    interior = matchInteriorOutput(op, *grad);
  // The views of W, dY and dX must exist before anything changes.
  LibraryConvolution check = conv;
  check.x = dy;
  check.w = grad->w;
  check.wDims = grad->wDims;
  if (!viewsExist(check)) {
    if (dyPart)
      dyPart->erase();
    return failure();
  }
  Value target = dx;
  if (interior) {
    // A buffer of the interior's size where dX was allocated.
    OpBuilder at(interior->alloc);
    auto type = MemRefType::get(interior->interior.getType().getShape(),
                                dyType.getElementType());
    auto alloc = memref::AllocOp::create(at, interior->alloc.getLoc(), type,
                                         interior->alloc.getAlignmentAttr());
    target = alloc;
  }
  Value vw = convolutionView(builder, loc, grad->w, grad->wDims);
  Value vdy = convolutionView(builder, loc, dy, conv.xDims);
  Value vdx = convolutionView(builder, loc, target, conv.yDims);
  assert(vw && vdy && vdx && "checked by viewsExist");
  func::CallOp callOp =
      call(builder, op,
           convolutionFunction(ConvolutionCall::InputGradient,
                               dyType.getElementType()),
           {vw, vdy, vdx},
           {grad->strideH, grad->strideW, conv.dilations[0], conv.dilations[1],
            interior ? interior->padH : grad->padH,
            interior ? interior->padW : grad->padW, conv.groups},
           dx, grad->ops);
  // dY, freed once copied, now lives until the call reads it.
  for (Operation *free : grad->frees)
    free->moveAfter(callOp);
  erase(op);
  for (Operation *dead : grad->ops)
    erase(dead);
  if (interior) {
    // The interior's readers read the new buffer; it is freed where dX
    // was.
    interior->interior.getResult().replaceAllUsesWith(target);
    erase(interior->interior);
    for (Operation *user :
         llvm::make_early_inc_range(interior->alloc->getUsers()))
      cast<memref::DeallocOp>(user).getMemrefMutable().assign(target);
    erase(interior->alloc);
  }
  return success();
}

Operation *
LibraryCallLowering::lowerConvolution(linalg::LinalgOp op, Value x,
                                      int64_t padH, int64_t padW,
                                      ArrayRef<Operation *> replaced) {
  std::optional<LibraryConvolution> conv = convolutionOf(op);
  if (!conv || !viewsExist(*conv, x))
    return nullptr;
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value vx = convolutionView(builder, loc, x ? x : conv->x, conv->xDims);
  Value vw = convolutionView(builder, loc, conv->w, conv->wDims);
  Value vy = convolutionView(builder, loc, conv->y, conv->yDims);
  assert(vx && vw && vy && "checked by viewsExist");
  Type element = getElementTypeOrSelf(conv->y.getType());
  SmallVector<int64_t> scalars = {conv->strides[0],
                                  conv->strides[1],
                                  conv->dilations[0],
                                  conv->dilations[1],
                                  padH,
                                  padW,
                                  conv->groups};
  Operation *callOp =
      conv->filterGradient
          ? call(builder, op,
                 convolutionFunction(ConvolutionCall::FilterGradient, element),
                 {vx, vy, vw}, scalars, conv->w, replaced)
          : call(builder, op,
                 convolutionFunction(ConvolutionCall::Forward, element),
                 {vx, vw, vy}, scalars, conv->y, replaced);
  erase(op);
  return callOp;
}

void LibraryCallLowering::run(
    Operation *root, function_ref<LogicalResult(linalg::LinalgOp)> lowerOther) {
  // Collected before anything is erased (an erased op's address may be
  // reused by a new one).
  SmallVector<linalg::LinalgOp> ops;
  root->walk([&](linalg::LinalgOp op) {
    if (op.hasPureBufferSemantics())
      ops.push_back(op);
  });
  SmallVector<memref::AllocOp> allocs;
  root->walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (linalg::LinalgOp op : ops)
    if (!isErased(op))
      (void)lowerInputGradient(op);
  for (memref::AllocOp alloc : allocs)
    if (!isErased(alloc))
      (void)lowerPaddedInput(alloc);
  for (linalg::LinalgOp op : ops)
    if (!isErased(op) && !lowerConvolution(op))
      (void)lowerOther(op);
}
