//===- CompactTensors.cpp - soap-compact-tensors --------------------------===//
//
// Each full-size tensor of a rank's function shrinks to the bounding box of
// the regions that function touches (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "soap/Dialect/SOAP/IR/SOAPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <limits>

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_COMPACTTENSORS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// A box [lo, hi) per dimension; empty while some lo >= hi.
struct Box {
  SmallVector<int64_t> lo, hi;

  explicit Box(size_t rank)
      : lo(rank, std::numeric_limits<int64_t>::max()), hi(rank, 0) {}
  bool empty() const {
    for (auto [l, h] : llvm::zip_equal(lo, hi))
      if (l >= h)
        return true;
    return false;
  }
  /// Grows to cover `other`; true if it grew.
  bool unite(const Box &other) {
    if (other.empty())
      return false;
    bool grew = false;
    for (size_t d = 0; d < lo.size(); ++d) {
      if (other.lo[d] < lo[d] || other.hi[d] > hi[d])
        grew = true;
      lo[d] = std::min(lo[d], other.lo[d]);
      hi[d] = std::max(hi[d], other.hi[d]);
    }
    return grew;
  }
};

/// The values of one shape in a tensor's versions: the root's and those
/// made from them by region writes, or those of a reshape of them.
struct Space {
  RankedTensorType type;
  SmallVector<Value> values;
  Box box;
  /// The space this one is a reshape of (-1 for the root's), and the
  /// reshape.
  int parent = -1;
  Operation *reshape = nullptr;

  explicit Space(RankedTensorType type) : type(type), box(type.getRank()) {}
};

/// A root (a tensor.empty or a function argument), every value made from it
/// by region writes and reshapes, and every region access to them.
struct TensorVersions {
  SmallVector<Space> spaces;
  /// Region accesses (slices, transfers, all-reduces) and the space whose
  /// coordinates their offsets are in.
  llvm::MapVector<Operation *, int> accesses;
  /// Results of the function that are in-place updates of an argument
  /// (soap.updates_input): they are what the function touches of them.
  SmallVector<std::pair<OpOperand *, int>> updateResults;

  /// Adds the region [offsets, offsets + (sizes - 1) * strides + 1) to the
  /// box of `space`; false if any of them is dynamic.
  bool addRegion(int space, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                 ArrayRef<int64_t> strides) {
    if (ShapedType::isDynamicShape(offsets) ||
        ShapedType::isDynamicShape(sizes) ||
        ShapedType::isDynamicShape(strides))
      return false;
    if (llvm::is_contained(sizes, 0))
      return true;
    Box region(offsets.size());
    for (size_t d = 0; d < offsets.size(); ++d) {
      region.lo[d] = offsets[d];
      region.hi[d] = offsets[d] + (sizes[d] - 1) * strides[d] + 1;
    }
    spaces[space].box.unite(region);
    return true;
  }
};

/// A reshape between a coarse shape and a fine one: each coarse dimension
/// is the row-major flattening of a group of fine dimensions.
struct Reassociation {
  SmallVector<ReassociationIndices> groups;
  ArrayRef<int64_t> fineShape;

  /// The fine dimensions of a group after its first, as one extent.
  int64_t innerExtent(const ReassociationIndices &group) const {
    int64_t extent = 1;
    for (int64_t d : llvm::drop_begin(group))
      extent *= fineShape[d];
    return extent;
  }
  /// The coarse box covering a fine one.
  Box toCoarse(const Box &fine) const {
    Box coarse(groups.size());
    for (auto [c, group] : llvm::enumerate(groups)) {
      int64_t first = 0, last = 0, stride = 1;
      for (int64_t d : llvm::reverse(group)) {
        first += fine.lo[d] * stride;
        last += (fine.hi[d] - 1) * stride;
        stride *= fineShape[d];
      }
      coarse.lo[c] = first;
      coarse.hi[c] = last + 1;
    }
    return coarse;
  }
  /// The fine box covering a coarse one.
  Box toFine(const Box &coarse) const {
    Box fine(fineShape.size());
    for (auto [c, group] : llvm::enumerate(groups)) {
      int64_t inner = innerExtent(group);
      fine.lo[group.front()] = coarse.lo[c] / inner;
      fine.hi[group.front()] = llvm::divideCeil(coarse.hi[c], inner);
      for (int64_t d : llvm::drop_begin(group)) {
        fine.lo[d] = 0;
        fine.hi[d] = fineShape[d];
      }
    }
    return fine;
  }
};

/// The groups and the fine shape of a collapse_shape (fine: its source) or
/// an expand_shape (fine: its result).
static Reassociation getReassociation(Operation *reshape) {
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
    return {collapse.getReassociationIndices(),
            collapse.getSrcType().getShape()};
  auto expand = cast<tensor::ExpandShapeOp>(reshape);
  return {expand.getReassociationIndices(),
          expand.getResultType().getShape()};
}

/// The versions of `root` (a tensor.empty or an argument), or nothing if
/// one of them has a use other than a static region access or a static
/// reshape.
static std::optional<TensorVersions> collectVersions(Value root) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return std::nullopt;
  TensorVersions versions;
  versions.spaces.emplace_back(type);
  versions.spaces.back().values.push_back(root);
  SmallVector<std::pair<Value, int>> work = {{root, 0}};
  for (size_t i = 0; i < work.size(); ++i) {
    auto [value, space] = work[i];
    SmallVector<int64_t> unit(
        cast<RankedTensorType>(value.getType()).getRank(), 1);
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      bool known = false;
      Value next;
      if (auto extract = dyn_cast<tensor::ExtractSliceOp>(user)) {
        known = versions.addRegion(space, extract.getStaticOffsets(),
                                   extract.getStaticSizes(),
                                   extract.getStaticStrides());
      } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(user);
                 insert && &use == &insert.getDestMutable()) {
        known = versions.addRegion(space, insert.getStaticOffsets(),
                                   insert.getStaticSizes(),
                                   insert.getStaticStrides());
        next = insert.getResult();
      } else if (auto transfer = dyn_cast<TransferOp>(user)) {
        known = versions.addRegion(space, transfer.getOffsets(),
                                   transfer.getSizes(), unit);
        next = transfer.getResult();
      } else if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(user)) {
        // Every member reads and writes the whole region.
        auto offsets = user->getAttrOfType<DenseI64ArrayAttr>("offsets");
        auto sizes = user->getAttrOfType<DenseI64ArrayAttr>("sizes");
        known = versions.addRegion(space, offsets.asArrayRef(),
                                   sizes.asArrayRef(), unit);
        next = user->getResult(0);
      } else if (auto ret = dyn_cast<func::ReturnOp>(user)) {
        // Only a rank function's results may become parts (the entry keeps
        // the program's signature).
        auto func = dyn_cast<func::FuncOp>(ret->getParentOp());
        known = func && func->hasAttr(SOAPDialect::kRankFunctionAttrName) &&
                func.getResultAttr(use.getOperandNumber(),
                                   SOAPDialect::kUpdatesInputAttrName);
        if (known)
          versions.updateResults.push_back({&use, space});
      } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user)) {
        auto resultType = cast<RankedTensorType>(user->getResult(0).getType());
        known = resultType.hasStaticShape() && resultType.getRank() > 0;
        if (known) {
          versions.spaces.emplace_back(resultType);
          versions.spaces.back().parent = space;
          versions.spaces.back().reshape = user;
          versions.spaces.back().values.push_back(user->getResult(0));
          work.push_back({user->getResult(0), versions.spaces.size() - 1});
        }
      }
      if (!known)
        return std::nullopt;
      if (next) {
        versions.spaces[space].values.push_back(next);
        work.push_back({next, space});
      }
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
               func::ReturnOp>(user))
        versions.accesses.insert({user, space});
    }
  }
  return versions;
}

/// Grows the boxes of a reshape's two spaces until each is what the other
/// maps to and a shift of coordinates on one side is one on the other: the
/// fine dimensions of a group after its first are whole (so the coarse box
/// of the group is a multiple of their extent). True if a box grew.
static bool reconcile(Space &coarse, Space &fine, const Reassociation &map) {
  bool grew = false;
  if (!fine.box.empty())
    grew |= coarse.box.unite(map.toCoarse(fine.box));
  if (!coarse.box.empty())
    grew |= fine.box.unite(map.toFine(coarse.box));
  if (!fine.box.empty())
    grew |= coarse.box.unite(map.toCoarse(fine.box));
  return grew;
}

static SmallVector<int64_t> shifted(ArrayRef<int64_t> offsets,
                                    ArrayRef<int64_t> lo) {
  SmallVector<int64_t> result;
  for (auto [offset, low] : llvm::zip_equal(offsets, lo))
    result.push_back(offset - low);
  return result;
}

/// Resizes every space to its box and moves every access with it.
static void compact(TensorVersions &versions) {
  for (Space &space : versions.spaces) {
    SmallVector<int64_t> shape;
    for (auto [low, high] : llvm::zip_equal(space.box.lo, space.box.hi))
      shape.push_back(high - low);
    RankedTensorType compacted = space.type.clone(shape);
    for (Value value : space.values)
      value.setType(compacted);
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(space.reshape))
      expand.setStaticOutputShape(shape);
  }
  for (auto [access, space] : versions.accesses) {
    ArrayRef<int64_t> lo = versions.spaces[space].box.lo;
    if (auto extract = dyn_cast<tensor::ExtractSliceOp>(access))
      extract.setStaticOffsets(shifted(extract.getStaticOffsets(), lo));
    else if (auto insert = dyn_cast<tensor::InsertSliceOp>(access))
      insert.setStaticOffsets(shifted(insert.getStaticOffsets(), lo));
    else if (auto transfer = dyn_cast<TransferOp>(access))
      transfer.setOffsets(shifted(transfer.getOffsets(), lo));
    else if (auto allReduce = dyn_cast<AllReduceOp>(access))
      allReduce.setOffsets(shifted(allReduce.getOffsets(), lo));
    else if (auto scatter = dyn_cast<ReduceScatterOp>(access))
      scatter.setOffsets(shifted(scatter.getOffsets(), lo));
    else
      cast<AllGatherOp>(access).setOffsets(
          shifted(cast<AllGatherOp>(access).getOffsets(), lo));
  }
}

/// Compacts the versions of `root` if they touch less than all of it; the
/// offsets of the part kept in `root`'s coordinates, if it was compacted.
static std::optional<SmallVector<int64_t>> compactVersions(Value root) {
  std::optional<TensorVersions> versions = collectVersions(root);
  if (!versions)
    return std::nullopt;
  // Reshapes: both sides' boxes agree (a fixed point: boxes only grow).
  bool grew = true;
  while (grew) {
    grew = false;
    for (Space &space : versions->spaces) {
      if (space.parent < 0)
        continue;
      Space &parent = versions->spaces[space.parent];
      Reassociation map = getReassociation(space.reshape);
      if (isa<tensor::CollapseShapeOp>(space.reshape))
        grew |= reconcile(space, parent, map);
      else
        grew |= reconcile(parent, space, map);
    }
  }
  // Untouched: dead code for the canonicalizer; or, returned as an in-place
  // update that this function does not compute (another rank does), none
  // of it.
  if (versions->spaces.front().box.empty()) {
    if (versions->updateResults.empty())
      return std::nullopt;
    for (Space &space : versions->spaces) {
      space.box.lo.assign(space.box.lo.size(), 0);
      space.box.hi.assign(space.box.hi.size(), 0);
    }
  }
  bool whole = llvm::all_of(versions->spaces, [](const Space &space) {
    for (auto [l, h, size] :
         llvm::zip_equal(space.box.lo, space.box.hi, space.type.getShape()))
      if (l != 0 || h != size)
        return false;
    return true;
  });
  if (whole)
    return std::nullopt;
  compact(*versions);
  // Where each returned part lies in the whole result.
  for (auto [use, space] : versions->updateResults) {
    auto func = cast<func::FuncOp>(use->getOwner()->getParentOp());
    func.setResultAttr(
        use->getOperandNumber(), SOAPDialect::kRegionOffsetsAttrName,
        DenseI64ArrayAttr::get(func.getContext(),
                               versions->spaces[space].box.lo));
  }
  return versions->spaces.front().box.lo;
}

/// After compaction, a function returning a part of an in-place update:
/// its result types follow the returned values, and each caller gets the
/// part and puts it back into a whole value at its offsets for the old
/// uses.
static void updateResultTypes(func::FuncOp func, ArrayRef<func::CallOp> calls) {
  if (func.isExternal())
    return;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (TypeRange(ret.getOperandTypes()) == func.getResultTypes())
    return;
  TypeRange old = func.getResultTypes();
  SmallVector<Type> oldTypes(old.begin(), old.end());
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ret.getOperandTypes()));
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    auto part = func::CallOp::create(b, call.getLoc(), func, call.getOperands());
    for (auto [i, result] : llvm::enumerate(call.getResults())) {
      Value value = part.getResult(i);
      if (value.getType() != oldTypes[i]) {
        auto whole = cast<RankedTensorType>(oldTypes[i]);
        auto offsets = func.getResultAttrOfType<DenseI64ArrayAttr>(
            i, SOAPDialect::kRegionOffsetsAttrName);
        SmallVector<int64_t> at(whole.getRank(), 0);
        if (offsets)
          at.assign(offsets.asArrayRef().begin(), offsets.asArrayRef().end());
        auto type = cast<RankedTensorType>(value.getType());
        Value empty = tensor::EmptyOp::create(b, call.getLoc(), whole.getShape(),
                                              whole.getElementType());
        value = tensor::InsertSliceOp::create(
            b, call.getLoc(), value, empty, ValueRange{}, ValueRange{},
            ValueRange{}, b.getDenseI64ArrayAttr(at),
            b.getDenseI64ArrayAttr(type.getShape()),
            b.getDenseI64ArrayAttr(SmallVector<int64_t>(type.getRank(), 1)));
      }
      result.replaceAllUsesWith(value);
    }
    call.erase();
  }
}

/// A rank function reads only parts of the entry's arguments (data
/// parallelism: its samples of the input; model parallelism: its slice of
/// a weight). Each such argument becomes that part, placed by
/// `soap.region_offsets`, and its callers pass the part.
static void compactArguments(func::FuncOp func, ArrayRef<func::CallOp> calls) {
  MLIRContext *ctx = func.getContext();
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<SmallVector<int64_t>> offsets;
    if (type && type.hasStaticShape() && type.getRank() > 0 &&
        arg.use_empty()) {
      // Not read on this rank: none of it.
      arg.setType(type.clone(SmallVector<int64_t>(type.getRank(), 0)));
      offsets.emplace(type.getRank(), 0);
    } else {
      offsets = compactVersions(arg);
    }
    if (!offsets)
      continue;
    auto part = cast<RankedTensorType>(arg.getType());
    func.setArgAttr(arg.getArgNumber(), SOAPDialect::kRegionOffsetsAttrName,
                    DenseI64ArrayAttr::get(ctx, *offsets));
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      OpOperand &operand = call->getOpOperand(arg.getArgNumber());
      SmallVector<int64_t> strides(part.getRank(), 1);
      operand.set(tensor::ExtractSliceOp::create(
          b, call.getLoc(), part, operand.get(), ValueRange{}, ValueRange{},
          ValueRange{}, b.getDenseI64ArrayAttr(*offsets),
          b.getDenseI64ArrayAttr(part.getShape()),
          b.getDenseI64ArrayAttr(strides)));
    }
  }
  func.setType(FunctionType::get(ctx, func.getBody().getArgumentTypes(),
                                 func.getResultTypes()));
}

struct CompactTensors
    : public mlir::soap::impl::CompactTensorsBase<CompactTensors> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<tensor::EmptyOp> empties;
    module.walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    for (tensor::EmptyOp empty : empties)
      (void)compactVersions(empty.getResult());
    // Rank functions are private and only called (their callers then pass
    // the parts); anything else naming one keeps its arguments whole.
    llvm::DenseMap<StringAttr, SmallVector<func::CallOp>> calls;
    llvm::DenseSet<StringAttr> otherUses;
    module.walk([&](Operation *op) {
      auto call = dyn_cast<func::CallOp>(op);
      if (call) {
        calls[call.getCalleeAttr().getAttr()].push_back(call);
        return;
      }
      op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
        otherUses.insert(ref.getRootReference());
      });
    });
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(SOAPDialect::kRankFunctionAttrName) &&
          !func.isExternal() && func.isPrivate() &&
          !otherUses.contains(func.getSymNameAttr()))
        compactArguments(func, calls.lookup(func.getSymNameAttr()));
    for (auto func : module.getOps<func::FuncOp>())
      if (!otherUses.contains(func.getSymNameAttr()))
        updateResultTypes(func, calls.lookup(func.getSymNameAttr()));
  }
};

} // namespace
