//===- BufferPatterns.cpp - Buffer patterns of the library-call lowerings ===//
//
// See BufferPatterns.h.
//
//===----------------------------------------------------------------------===//

#include "BufferPatterns.h"

#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace mlir {
namespace soap {

Value rootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else if (auto transpose = dyn_cast<memref::TransposeOp>(def))
      v = transpose.getIn();
    else
      break;
  }
  return v;
}

bool isNoAliasArgument(Value root) {
  auto arg = dyn_cast<BlockArgument>(root);
  if (!arg || !arg.getOwner()->isEntryBlock())
    return false;
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return func && func.getArgAttr(arg.getArgNumber(),
                                 LLVM::LLVMDialect::getNoAliasAttrName());
}

bool isZeroFill(Operation *op, Value target) {
  Value value;
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (fill.getDpsInitOperand(0)->get() != target)
      return false;
    value = fill.getDpsInputOperand(0)->get();
  } else if (auto map = dyn_cast<linalg::MapOp>(op)) {
    if (map.getNumDpsInputs() != 0 || map.getInit() != target)
      return false;
    auto yield = cast<linalg::YieldOp>(map.getMapper().front().back());
    if (yield.getNumOperands() != 1)
      return false;
    value = yield.getOperand(0);
  } else {
    return false;
  }
  FloatAttr zero;
  return matchPattern(value, m_Constant(&zero)) && zero.getValue().isPosZero();
}

memref::SubViewOp leadingView(Operation *op) {
  auto view = dyn_cast<memref::SubViewOp>(op);
  if (!view || !view->hasOneUse() || !view.hasUnitStride() ||
      !llvm::all_of(view.getStaticOffsets(), [](int64_t o) { return o == 0; }))
    return {};
  return view;
}

memref::AllocOp allocOf(Value x) {
  if (auto view = x.getDefiningOp<memref::SubViewOp>();
      view && leadingView(view))
    x = view.getSource();
  return x.getDefiningOp<memref::AllocOp>();
}

std::optional<ZeroPadded>
matchZeroPadded(memref::AllocOp alloc,
                function_ref<bool(Operation *, Value)> isReader) {
  if (!alloc)
    return std::nullopt;
  Value x = alloc.getResult();
  Operation *fill = nullptr;
  memref::SubViewOp interior;
  SmallVector<Operation *> views, deallocs;
  ZeroPadded result;
  auto readsOnce = [](Operation *op, Value v) {
    return llvm::count(op->getOperands(), v) == 1;
  };
  for (Operation *user : alloc->getUsers()) {
    if (isReader(user, x) && readsOnce(user, x)) {
      result.readers.push_back(user);
    } else if (memref::SubViewOp view = leadingView(user);
               view && isReader(*view->getUsers().begin(), view) &&
               readsOnce(*view->getUsers().begin(), view)) {
      result.readers.push_back(*view->getUsers().begin());
      views.push_back(view);
    } else if (!fill && isZeroFill(user, x)) {
      fill = user;
    } else if (auto v = dyn_cast<memref::SubViewOp>(user); v && !interior) {
      interior = v;
    } else if (isa<memref::DeallocOp>(user)) {
      deallocs.push_back(user);
    } else {
      return std::nullopt;
    }
  }
  if (!fill || !interior || !interior->hasOneUse() ||
      !interior.hasUnitStride() || result.readers.empty())
    return std::nullopt;
  auto copy = dyn_cast<memref::CopyOp>(*interior->getUsers().begin());
  Block *block = alloc->getBlock();
  if (!copy || copy.getTarget() != interior.getResult() ||
      fill->getBlock() != block || copy->getBlock() != block ||
      !fill->isBeforeInBlock(copy))
    return std::nullopt;
  for (Operation *reader : result.readers)
    if (reader->getBlock() != block || !copy->isBeforeInBlock(reader))
      return std::nullopt;
  llvm::sort(result.readers,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  result.source = copy.getSource();
  result.interior = interior;
  result.ops = {copy, interior, fill};
  result.ops.append(views);
  result.ops.append(deallocs);
  result.ops.push_back(alloc);
  return result;
}

bool BufferWrites::unchangedBetween(Value buffer, Operation *from,
                                    Operation *to,
                                    SmallVectorImpl<Operation *> *frees) const {
  Value root = rootBuffer(buffer);
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (auto it = calls.find(op); it != calls.end()) {
      if (rootBuffer(it->second) == root)
        return false;
      continue;
    }
    // libsoaprt's communication (a data-parallel step all-reduces each
    // weight gradient between the backward ops) writes only the region it
    // is given, its first operand.
    if (auto call = dyn_cast<func::CallOp>(op);
        call && matchRuntimeCommunication(call)) {
      if (rootBuffer(call->getOperand(0)) == root)
        return false;
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && frees && rootBuffer(dealloc.getMemref()) == root) {
      frees->push_back(op);
      continue;
    }
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (!effects)
      return false;
    for (const MemoryEffects::EffectInstance &effect : *effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value written = effect.getValue();
      if (!written || rootBuffer(written) == root)
        return false;
    }
  }
  return true;
}

} // namespace soap
} // namespace mlir
