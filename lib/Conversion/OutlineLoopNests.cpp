//===- OutlineLoopNests.cpp - soap-outline-loop-nests ---------------------===//
//
// Each outermost loop nest becomes a function of its own; nests equal but
// for their locations share one (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "FunctionEquivalence.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_OUTLINELOOPNESTS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Replaces `loop` by a call (`call`) to a new private function `name` that
/// runs it, inserted into `symbols` after `previous`; returns the function.
static func::FuncOp outline(scf::ForOp loop, Operation *previous,
                            StringRef name, SymbolTable &symbols,
                            func::CallOp &call) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(loop->getRegions(), above);
  above.insert(loop->getOperands().begin(), loop->getOperands().end());
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : above) {
    Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>() &&
        def->getNumOperands() == 0 && def->getNumRegions() == 0)
      constants.push_back(def);
    else
      arguments.push_back(value);
  }

  Location loc = loop.getLoc();
  OpBuilder builder(previous);
  builder.setInsertionPointAfter(previous);
  auto type = builder.getFunctionType(ValueRange(arguments).getTypes(),
                                      loop->getResultTypes());
  auto func = func::FuncOp::create(builder, loc, name, type);
  func.setPrivate();
  // LLVM: internal (not exported; free to drop unused arguments) and never
  // inlined back into the caller.
  func->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(builder.getContext(),
                                       LLVM::linkage::Linkage::Internal));
  func->setAttr("passthrough",
                builder.getArrayAttr({builder.getStringAttr("noinline")}));
  symbols.insert(func, builder.getInsertionPoint());

  Block *entry = func.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments, entry->getArguments());
  OpBuilder body = OpBuilder::atBlockEnd(entry);
  for (Operation *constant : constants)
    body.clone(*constant, mapping);
  Operation *clone = body.clone(*loop, mapping);
  func::ReturnOp::create(body, loc, clone->getResults());

  builder.setInsertionPoint(loop);
  call = func::CallOp::create(builder, loc, func, arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
  return func;
}

struct OutlineLoopNestsPass
    : mlir::soap::impl::OutlineLoopNestsBase<OutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    mlir::soap::EquivalentFunctions outlined;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      SmallVector<scf::ForOp> nests;
      func.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
        bool calls = loop->walk([](CallOpInterface) {
                           return WalkResult::interrupt();
                         }).wasInterrupted();
        if (calls)
          return WalkResult::advance(); // look for nests inside it
        nests.push_back(loop);
        return WalkResult::skip();
      });
      Operation *previous = func;
      for (auto [index, loop] : llvm::enumerate(nests)) {
        func::CallOp call;
        func::FuncOp nest = outline(
            loop, previous, (func.getSymName() + "_loop" + Twine(index)).str(),
            symbols, call);
        // A nest outlined before (another rank's copy of a layer, a
        // repeated block): call that one; LLVM compiles each once.
        if (FunctionOpInterface equal = outlined.find(nest)) {
          call.setCallee(equal.getName());
          symbols.erase(nest);
          ++numShared;
          continue;
        }
        outlined.add(nest);
        previous = nest;
      }
    }
  }
};
} // namespace
