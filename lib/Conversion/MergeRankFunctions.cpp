//===- MergeRankFunctions.cpp - soap-merge-rank-functions -----------------===//
//
// Rank functions that differ only in constants become one function that
// takes those constants as arguments (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/LowerToCPU.h"
#include "soap/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_MERGERANKFUNCTIONS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// The ops of `func` in pre-order: an op's position is its index here.
static SmallVector<Operation *> opsInOrder(LLVM::LLVMFuncOp func) {
  SmallVector<Operation *> ops;
  func.getBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) { ops.push_back(op); });
  return ops;
}

/// A GEP by one constant offset (`getelementptr %p[4000]`), which may
/// become a GEP by an argument.
static bool isConstantOffsetGEP(Operation *op) {
  auto gep = dyn_cast<LLVM::GEPOp>(op);
  return gep && gep.getDynamicIndices().empty() &&
         gep.getRawConstantIndices().size() == 1;
}

/// The attribute that holds what a parametrizable op stands for (a
/// constant's value, an address's global, a GEP's offset), or null.
static StringRef parameterAttrName(Operation *op) {
  if (isa<LLVM::ConstantOp>(op) && op->getNumResults() == 1 &&
      isa<IntegerType, FloatType, LLVM::LLVMPointerType>(
          op->getResult(0).getType()))
    return "value";
  if (isa<LLVM::AddressOfOp>(op))
    return "global_name";
  if (isConstantOffsetGEP(op))
    return "rawConstantIndices";
  return {};
}

/// A copy of the parametrizable op that defines `operand` (and, in turn,
/// of those that define its operands) right before the operand's owner.
static void copyParameterBeforeUser(OpOperand &operand) {
  Operation *def = operand.get().getDefiningOp();
  if (!def || parameterAttrName(def).empty())
    return;
  OpBuilder b(operand.getOwner());
  Operation *copy = b.clone(*def);
  for (OpOperand &inner : copy->getOpOperands())
    copyParameterBeforeUser(inner);
  operand.set(copy->getResult(cast<OpResult>(operand.get()).getResultNumber()));
}

/// Gives each use of a parametrizable op of `func` (parameterAttrName) its
/// own copy right before the user, in the users' order, and drops the
/// originals. Canonicalization makes equal constants one op, so two rank
/// functions that differ only in values could differ in their ops where
/// values coincide (rank 1's id and an OpenBLAS call's flag, both the i64
/// constant 1, are one op there; rank 2's id is 2, and its two constants
/// stay two). With a copy per use, placed by its user, their ops are the
/// same whatever the values. LLVM makes equal constants one again.
static void copyParametersPerUse(LLVM::LLVMFuncOp func) {
  SmallVector<Operation *> originals, users;
  func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation())
      return;
    (parameterAttrName(op).empty() ? users : originals).push_back(op);
  });
  for (Operation *user : users)
    for (OpOperand &operand : user->getOpOperands())
      copyParameterBeforeUser(operand);
  for (Operation *op : llvm::reverse(originals))
    if (op->use_empty())
      op->erase();
}

/// A hash of `func` that parameters do not change: its type, its ops'
/// names and result types, the attributes of the ops that are no parameter.
static llvm::hash_code shapeHash(LLVM::LLVMFuncOp func) {
  llvm::hash_code hash = hash_value(func.getFunctionType());
  func.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(hash, op->getName(), op->getNumOperands());
    for (Type t : op->getResultTypes())
      hash = llvm::hash_combine(hash, t);
    if (parameterAttrName(op).empty())
      hash = llvm::hash_combine(hash, op->getAttrDictionary());
  });
  return hash;
}

/// Whether `a` and `b` are the same but for the attributes that make
/// parameters (with `anyConstant` false, only addresses and GEP offsets:
/// a loop nest's bounds stay constants); `differing` gets the positions
/// (opsInOrder) where those differ.
static bool matchModuloConstants(LLVM::LLVMFuncOp a, LLVM::LLVMFuncOp b,
                                 bool anyConstant,
                                 DenseSet<unsigned> &differing) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a.getBody().getBlocks().size() != b.getBody().getBlocks().size())
    return false;
  SmallVector<Operation *> opsA = opsInOrder(a), opsB = opsInOrder(b);
  if (opsA.size() != opsB.size())
    return false;
  IRMapping mapping;
  auto mapBlocks = [&](Region &ra, Region &rb) {
    if (ra.getBlocks().size() != rb.getBlocks().size())
      return false;
    for (auto [ba, bb] : llvm::zip(ra, rb)) {
      if (!llvm::equal(ba.getArgumentTypes(), bb.getArgumentTypes()))
        return false;
      mapping.map(&ba, &bb);
      mapping.map(ba.getArguments(), bb.getArguments());
    }
    return true;
  };
  if (!mapBlocks(a.getBody(), b.getBody()))
    return false;
  for (auto [index, pair] : llvm::enumerate(llvm::zip(opsA, opsB))) {
    auto [opA, opB] = pair;
    if (opA->getName() != opB->getName() ||
        opA->getNumOperands() != opB->getNumOperands() ||
        !llvm::equal(opA->getResultTypes(), opB->getResultTypes()) ||
        opA->getNumSuccessors() != opB->getNumSuccessors() ||
        opA->getNumRegions() != opB->getNumRegions())
      return false;
    for (auto [va, vb] : llvm::zip(opA->getOperands(), opB->getOperands()))
      if (mapping.lookupOrNull(va) != vb)
        return false;
    for (auto [sa, sb] : llvm::zip(opA->getSuccessors(), opB->getSuccessors()))
      if (mapping.lookupOrNull(sa) != sb)
        return false;
    for (auto [ra, rb] : llvm::zip(opA->getRegions(), opB->getRegions()))
      if (!mapBlocks(ra, rb))
        return false;
    if (opA->getAttrDictionary() != opB->getAttrDictionary()) {
      StringRef name = parameterAttrName(opA);
      if (name.empty() || (!anyConstant && isa<LLVM::ConstantOp>(opA)))
        return false;
      NamedAttrList restA(opA->getAttrDictionary()),
          restB(opB->getAttrDictionary());
      restA.erase(name);
      restB.erase(name);
      if (restA.getDictionary(a.getContext()) !=
          restB.getDictionary(a.getContext()))
        return false;
      differing.insert(index);
    }
    mapping.map(opA->getResults(), opB->getResults());
  }
  return true;
}

/// Builds the value that the parametrized `op` stands for.
static Value parameterValue(OpBuilder &b, Location loc, Operation *op) {
  if (auto constant = dyn_cast<LLVM::ConstantOp>(op))
    return LLVM::ConstantOp::create(b, loc, constant.getType(),
                                    constant.getValue());
  if (auto address = dyn_cast<LLVM::AddressOfOp>(op))
    return LLVM::AddressOfOp::create(b, loc, address.getType(),
                                     address.getGlobalName());
  auto gep = cast<LLVM::GEPOp>(op);
  return LLVM::ConstantOp::create(
      b, loc, b.getI64Type(),
      b.getI64IntegerAttr(gep.getRawConstantIndices()[0]));
}

/// Functions of one structure: the first is the template; `differing` the
/// positions where any member differs from it.
struct Group {
  SmallVector<LLVM::LLVMFuncOp> members;
  DenseSet<unsigned> differing;
};

/// Groups `funcs` by structure (matchModuloConstants).
static SmallVector<Group> groupByStructure(ArrayRef<LLVM::LLVMFuncOp> funcs,
                                           bool anyConstant) {
  SmallVector<Group> groups;
  DenseMap<llvm::hash_code, SmallVector<unsigned, 1>> byHash;
  for (LLVM::LLVMFuncOp func : funcs) {
    SmallVector<unsigned, 1> &candidates = byHash[shapeHash(func)];
    bool found = false;
    for (unsigned g : candidates) {
      DenseSet<unsigned> differing;
      if (matchModuloConstants(groups[g].members.front(), func, anyConstant,
                               differing)) {
        groups[g].members.push_back(func);
        groups[g].differing.insert(differing.begin(), differing.end());
        found = true;
        break;
      }
    }
    if (!found) {
      candidates.push_back(groups.size());
      groups.push_back({{func}, {}});
    }
  }
  return groups;
}

/// The differing positions of `group`, in order.
static SmallVector<unsigned> positionsOf(const Group &group) {
  SmallVector<unsigned> positions(group.differing.begin(),
                                  group.differing.end());
  llvm::sort(positions);
  return positions;
}

/// `member`'s values at `positions`, built at `b`'s insertion point.
static SmallVector<Value> valuesOf(OpBuilder &b, Location loc,
                                   LLVM::LLVMFuncOp member,
                                   ArrayRef<unsigned> positions) {
  SmallVector<Operation *> ops = opsInOrder(member);
  SmallVector<Value> values;
  for (unsigned p : positions)
    values.push_back(parameterValue(b, loc, ops[p]));
  return values;
}

/// A new internal function `<first>_merged`: the first member's body with
/// an argument after its own for each of `positions` (a GEP's offset
/// becomes a dynamic index).
static LLVM::LLVMFuncOp buildMerged(const Group &group,
                                    ArrayRef<unsigned> positions,
                                    SymbolTable &symbols) {
  LLVM::LLVMFuncOp first = group.members.front();
  OpBuilder b(first);
  auto merged = cast<LLVM::LLVMFuncOp>(b.clone(*first));
  merged.setSymName((first.getSymName() + "_merged").str());
  symbols.insert(merged);
  merged->removeAttr(soap::kModelFunctionAttrName);
  merged.setLinkage(LLVM::Linkage::Internal);
  merged.setVisibility(SymbolTable::Visibility::Private);
  SmallVector<Operation *> ops = opsInOrder(merged);
  SmallVector<Type> inputs(first.getFunctionType().getParams());
  Block &entry = merged.getBody().front();
  for (unsigned p : positions) {
    Operation *op = ops[p];
    Type type =
        isa<LLVM::GEPOp>(op) ? b.getI64Type() : op->getResult(0).getType();
    inputs.push_back(type);
    Value argument = entry.addArgument(type, op->getLoc());
    if (auto gep = dyn_cast<LLVM::GEPOp>(op)) {
      OpBuilder at(gep);
      auto dynamic = LLVM::GEPOp::create(
          at, gep.getLoc(), gep.getType(), gep.getElemType(), gep.getBase(),
          ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(argument)}, gep.getNoWrapFlags());
      gep.replaceAllUsesWith(dynamic.getResult());
    } else {
      op->replaceAllUsesWith(ValueRange{argument});
    }
    op->erase();
  }
  LLVM::LLVMFunctionType type = first.getFunctionType();
  merged.setFunctionType(LLVM::LLVMFunctionType::get(type.getReturnType(),
                                                     inputs, type.isVarArg()));
  merged.setArgAttrsAttr(nullptr);
  return merged;
}

/// The ops that refer to each symbol in `module` (one walk: asking
/// SymbolTable per function walks the module each time).
static DenseMap<StringAttr, SmallVector<Operation *>>
usersBySymbol(ModuleOp module) {
  DenseMap<StringAttr, SmallVector<Operation *>> users;
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(&module.getBodyRegion()))
    for (const SymbolTable::SymbolUse &use : *uses)
      users[use.getSymbolRef().getRootReference()].push_back(use.getUser());
  return users;
}

struct MergeRankFunctionsPass
    : mlir::soap::impl::MergeRankFunctionsBase<MergeRankFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // First the internal functions that call nothing (loop nests that
    // differ only in their offsets into a rank's part): their calls go to
    // one function with the offsets as arguments, so that the rank
    // functions that call them differ only in constants too.
    DenseMap<StringAttr, SmallVector<Operation *>> users =
        usersBySymbol(module);
    auto onlyCalled = [&](LLVM::LLVMFuncOp func) {
      return llvm::all_of(users[func.getSymNameAttr()], [](Operation *user) {
        return isa<LLVM::CallOp>(user);
      });
    };
    // Leaves only: a merged function's calls are not in `users`.
    auto callsNothing = [](LLVM::LLVMFuncOp func) {
      return !func.getBody()
                  .walk([](CallOpInterface) { return WalkResult::interrupt(); })
                  .wasInterrupted();
    };
    SmallVector<LLVM::LLVMFuncOp> internal;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (!func.isExternal() && func.getLinkage() == LLVM::Linkage::Internal &&
          !func->hasAttr(soap::kModelFunctionAttrName) && onlyCalled(func) &&
          callsNothing(func))
        internal.push_back(func);
    for (const Group &group :
         groupByStructure(internal, /*anyConstant=*/false)) {
      if (group.members.size() < 2)
        continue;
      SmallVector<unsigned> positions = positionsOf(group);
      LLVM::LLVMFuncOp merged = buildMerged(group, positions, symbols);
      for (LLVM::LLVMFuncOp member : group.members) {
        for (Operation *user : users[member.getSymNameAttr()]) {
          auto call = cast<LLVM::CallOp>(user);
          OpBuilder at(call);
          SmallVector<Value> operands(call.getArgOperands());
          llvm::append_range(operands,
                             valuesOf(at, call.getLoc(), member, positions));
          auto replacement =
              LLVM::CallOp::create(at, call.getLoc(), merged, operands);
          call.replaceAllUsesWith(replacement.getResults());
          call.erase();
        }
        symbols.erase(member);
        ++numMergedNests;
      }
    }

    // Then the rank functions: each keeps its name (soap_main calls it)
    // and calls the merged body with its own values.
    SmallVector<LLVM::LLVMFuncOp> ranks;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (!func.isExternal() && func->hasAttr(soap::kModelFunctionAttrName))
        ranks.push_back(func);
    if (ranks.size() > 1)
      for (LLVM::LLVMFuncOp func : ranks)
        copyParametersPerUse(func);
    for (const Group &group : groupByStructure(ranks, /*anyConstant=*/true)) {
      if (group.members.size() < 2)
        continue;
      SmallVector<unsigned> positions = positionsOf(group);
      LLVM::LLVMFuncOp merged = buildMerged(group, positions, symbols);
      for (LLVM::LLVMFuncOp member : group.members)
        callMerged(member, merged, positions);
    }
  }

  /// Replaces `member`'s body by a call of `merged` with its values.
  void callMerged(LLVM::LLVMFuncOp member, LLVM::LLVMFuncOp merged,
                  ArrayRef<unsigned> positions) {
    Region &region = member.getBody();
    Block *body = new Block();
    region.push_front(body);
    body->addArguments(
        member.getFunctionType().getParams(),
        SmallVector<Location>(member.getNumArguments(), member.getLoc()));
    OpBuilder at = OpBuilder::atBlockEnd(body);
    // The new block is empty: the values are the old body's.
    SmallVector<Value> operands(body->getArguments());
    llvm::append_range(operands,
                       valuesOf(at, member.getLoc(), member, positions));
    auto call = LLVM::CallOp::create(at, member.getLoc(), merged, operands);
    LLVM::ReturnOp::create(at, member.getLoc(), call.getResults());
    for (Block &old : llvm::drop_begin(region))
      old.dropAllReferences();
    while (region.getBlocks().size() > 1)
      region.back().erase();
    ++numMerged;
  }
};

} // namespace
