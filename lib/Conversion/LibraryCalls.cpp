//===- LibraryCalls.cpp - Calls of libsoaprt's library ops ----------------===//
//
// See LibraryCalls.h.
//
//===----------------------------------------------------------------------===//

#include "LibraryCalls.h"

#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mlir {
namespace soap {

std::string runtimeOpName(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName();
  if (auto name = op->getAttrOfType<StringAttr>("soap.name"))
    os << " '" << name.getValue() << "'";
  os << " at ";
  if (auto file = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    op->getLoc().print(os);
  return text;
}

Value RuntimeOpNames::get(OpBuilder &b, Operation *op) {
  std::string text = runtimeOpName(op);
  Location loc = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  if (module != owner) { // a new module: its own globals
    owner = module;
    globals.clear();
  }
  auto [it, inserted] = globals.try_emplace(text);
  if (inserted) {
    it->second = prefix + std::to_string(globals.size() - 1);
    return LLVM::createGlobalString(loc, b, it->second, text,
                                    LLVM::Linkage::Internal);
  }
  auto global = module.lookupSymbol<LLVM::GlobalOp>(it->second);
  Value address = LLVM::AddressOfOp::create(b, loc, global);
  return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()),
                             global.getType(), address,
                             ArrayRef<LLVM::GEPArg>{0, 0});
}

func::CallOp createLibraryCall(OpBuilder &b, Location loc, ModuleOp module,
                               StringRef name, ArrayRef<Value> views,
                               ArrayRef<int64_t> scalars, int64_t flags,
                               Value opName) {
  SmallVector<Value> args;
  for (Value view : views) {
    auto type = cast<MemRefType>(view.getType());
    args.push_back(memref::CastOp::create(
        b, loc,
        UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
        view));
  }
  for (int64_t scalar : scalars)
    args.push_back(arith::ConstantIntOp::create(b, loc, scalar, 64));
  args.push_back(arith::ConstantIntOp::create(b, loc, flags, 64));
  args.push_back(opName);
  SmallVector<Type> types;
  for (Value arg : args)
    types.push_back(arg.getType());
  func::FuncOp callee = getOrInsertRuntimeFunction(
      b, module, name, b.getFunctionType(types, {}), /*cInterface=*/true);
  return func::CallOp::create(b, loc, callee, args);
}

MemRefType permutedType(MemRefType type, ArrayRef<unsigned> perm) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return {};
  SmallVector<int64_t> newSizes, newStrides;
  for (unsigned d : perm) {
    newSizes.push_back(type.getDimSize(d));
    newStrides.push_back(strides[d]);
  }
  auto layout = StridedLayoutAttr::get(type.getContext(), offset, newStrides);
  return MemRefType::get(newSizes, type.getElementType(), layout,
                         type.getMemorySpace());
}

linalg::FillOp zeroFillBefore(Operation *op, Value output,
                              ArrayRef<Operation *> replaced) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (llvm::is_contained(replaced, prev))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (!fill.hasPureBufferSemantics() ||
          fill.getDpsInitOperand(0)->get() != output)
        return {};
      auto value = fill.getDpsInputOperand(0)->get();
      FloatAttr constant;
      if (!matchPattern(value, m_Constant(&constant)) ||
          !constant.getValue().isPosZero())
        return {};
      return fill;
    }
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

/// A view of `value` whose dims are `order` (loop dims) given that dim r of
/// `value` is loop dim `map.getResult(r)` (a memref.transpose, or `value`
/// itself when the order is the map's); null if the map does not allow it.
static Value orderedView(OpBuilder &b, Location loc, Value value, AffineMap map,
                         ArrayRef<unsigned> order) {
  if (map.getNumResults() != order.size())
    return {};
  SmallVector<unsigned> perm;
  for (unsigned loopDim : order) {
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(loopDim, b.getContext()));
    if (!pos)
      return {};
    perm.push_back(*pos);
  }
  if (llvm::equal(perm, llvm::seq<unsigned>(0, perm.size())))
    return value;
  MemRefType type = permutedType(cast<MemRefType>(value.getType()), perm);
  if (!type)
    return {};
  SmallVector<unsigned> permCopy(perm);
  AffineMap permutation =
      AffineMap::getPermutationMap(permCopy, b.getContext());
  return memref::TransposeOp::create(b, loc, type, value,
                                     AffineMapAttr::get(permutation));
}

std::optional<linalg::ContractionDimensions> gemmDims(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return std::nullopt;
  return *dims;
}

/// The loop dims of contraction operand `operand` in GEMM order, one group
/// per GEMM dim: (batch, M, K), (batch, K, N) or (batch, M, N), the batch
/// group left out where there is none.
static SmallVector<SmallVector<unsigned>>
matmulOperandGroups(const linalg::ContractionDimensions &dims, int operand) {
  SmallVector<SmallVector<unsigned>> groups;
  if (!dims.batch.empty())
    groups.emplace_back(dims.batch.begin(), dims.batch.end());
  ArrayRef<unsigned> rows = operand == 1 ? dims.k : dims.m;
  ArrayRef<unsigned> columns = operand == 0 ? dims.k : dims.n;
  groups.emplace_back(rows.begin(), rows.end());
  groups.emplace_back(columns.begin(), columns.end());
  return groups;
}

void eraseView(Value view, Value value) {
  while (view && view != value) {
    Operation *op = view.getDefiningOp();
    view = op->getOperand(0);
    op->erase();
  }
}

Value gemmView(OpBuilder &b, Location loc, Value value, AffineMap map,
               const linalg::ContractionDimensions &dims, int operand) {
  SmallVector<unsigned> order;
  SmallVector<ReassociationIndices> reassociation;
  for (const SmallVector<unsigned> &group :
       matmulOperandGroups(dims, operand)) {
    ReassociationIndices &indices = reassociation.emplace_back();
    for (unsigned loop : group) {
      indices.push_back(order.size());
      order.push_back(loop);
    }
  }
  Value view = orderedView(b, loc, value, map, order);
  if (!view || reassociation.size() == order.size())
    return view;
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
          cast<MemRefType>(view.getType()), reassociation)) {
    eraseView(view, value);
    return {};
  }
  return memref::CollapseShapeOp::create(b, loc, view, reassociation);
}

std::optional<std::array<Value, 3>>
buildMatmulViews(OpBuilder &b, linalg::LinalgOp op,
                 const linalg::ContractionDimensions &dims) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value operands[3] = {op.getDpsInputOperand(0)->get(),
                       op.getDpsInputOperand(1)->get(),
                       op.getDpsInitOperand(0)->get()};
  std::array<Value, 3> views;
  for (int i = 0; i < 3; ++i)
    views[i] = gemmView(b, op.getLoc(), operands[i], maps[i], dims, i);
  if (views[0] && views[1] && views[2])
    return views;
  for (int i = 0; i < 3; ++i)
    eraseView(views[i], operands[i]);
  return std::nullopt;
}

} // namespace soap
} // namespace mlir
