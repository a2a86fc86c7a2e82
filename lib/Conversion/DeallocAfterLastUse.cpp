//===- DeallocAfterLastUse.cpp - soap-dealloc-after-last-use --------------===//
//
// Moves each memref.dealloc of a block's own allocation up to just after the
// last use of the buffer or of a view of it (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_DEALLOCAFTERLASTUSE
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Whether handing a buffer to `user` may keep it alive past `user`: a
/// return or yield, a store of it or of its address, an op that makes a
/// memref of it other than a view, or a call of a function of the module
/// (which may return it). Calls of declarations (libsoaprt, the
/// CUDA libraries' wrappers) use a buffer only while they run.
static bool mayRetain(Operation *user, ModuleOp module) {
  if (user->hasTrait<OpTrait::IsTerminator>())
    return true;
  if (auto call = dyn_cast<CallOpInterface>(user)) {
    auto callee = dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    auto func =
        callee ? module.lookupSymbol<func::FuncOp>(callee) : func::FuncOp();
    return !func || !func.isExternal();
  }
  return isa<memref::StoreOp, memref::ExtractAlignedPointerAsIndexOp>(user) ||
         (user->getNumResults() > 0 && !isa<ViewLikeOpInterface>(user) &&
          llvm::any_of(user->getResultTypes(),
                       [](Type t) { return isa<BaseMemRefType>(t); }) &&
          !isa<memref::CastOp>(user));
}

/// The last op of `block` that uses `buffer` or a view of it (the op of the
/// block that holds the use, for uses in nested regions); null if some use
/// may keep it alive, or is outside `block`.
static Operation *lastUse(Value buffer, Operation *dealloc, Block *block,
                          ModuleOp module) {
  Operation *last = nullptr;
  SmallVector<Value> work = {buffer};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == dealloc)
        continue;
      if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
        for (Value result : user->getResults())
          work.push_back(result);
      } else if (mayRetain(user, module)) {
        return nullptr;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return nullptr;
      if (!last || last->isBeforeInBlock(inBlock))
        last = inBlock;
    }
  }
  return last;
}

struct DeallocAfterLastUse
    : public mlir::soap::impl::DeallocAfterLastUseBase<DeallocAfterLastUse> {
  void runOnOperation() override {
    auto module = getOperation()->getParentOfType<ModuleOp>();
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp op) { deallocs.push_back(op); });
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      Operation *last = lastUse(buffer, dealloc, block, module);
      if (last && last->isBeforeInBlock(dealloc))
        dealloc->moveAfter(last);
    }
  }
};

} // namespace
