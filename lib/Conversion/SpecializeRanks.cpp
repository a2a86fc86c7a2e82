//===- SpecializeRanks.cpp - soap-specialize-ranks ------------------------===//
//
// One clone of the SPMD entry per rank, holding only what that rank runs
// (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_SPECIALIZERANKS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// The device `d` if `condition` is `arith.cmpi eq` of soap.rank and the
/// constant d (either order): the test soap-partition puts on each tile.
/// Only saves cloning the branch a rank does not take: any other use of
/// the rank sees the constant, and canonicalization folds what remains.
static std::optional<int64_t> testedDevice(Value condition) {
  auto cmp = condition.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  if (!lhs.getDefiningOp<RankOp>())
    std::swap(lhs, rhs);
  APInt device;
  if (!lhs.getDefiningOp<RankOp>() || !matchPattern(rhs, m_ConstantInt(&device)))
    return std::nullopt;
  return device.getSExtValue();
}

/// Whether `op` is a communication op that `rank` takes no part in (on
/// that rank its result is its input).
static bool bypasses(Operation *op, int64_t rank) {
  if (auto transfer = dyn_cast<TransferOp>(op))
    return static_cast<int64_t>(transfer.getFrom()) != rank &&
           static_cast<int64_t>(transfer.getTo()) != rank;
  if (auto allReduce = dyn_cast<AllReduceOp>(op))
    return !llvm::is_contained(allReduce.getDevices(), rank);
  if (auto scatter = dyn_cast<ReduceScatterOp>(op))
    return !llvm::is_contained(scatter.getDevices(), rank);
  if (auto gather = dyn_cast<AllGatherOp>(op))
    return !llvm::is_contained(gather.getDevices(), rank);
  return false;
}

/// The body of `entry` as rank `rank` runs it, into `clone`'s entry block.
static void cloneForRank(func::FuncOp entry, func::FuncOp clone,
                         int64_t rank) {
  Block *block = clone.addEntryBlock();
  IRMapping mapping;
  for (auto [from, to] :
       llvm::zip(entry.getArguments(), block->getArguments()))
    mapping.map(from, to);
  OpBuilder b = OpBuilder::atBlockBegin(block);
  for (Operation &op : entry.getBody().front()) {
    if (auto rankOp = dyn_cast<RankOp>(op)) {
      mapping.map(rankOp.getResult(),
                  arith::ConstantIndexOp::create(b, op.getLoc(), rank));
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      if (std::optional<int64_t> device = testedDevice(ifOp.getCondition())) {
        Block *taken = *device == rank ? ifOp.thenBlock() : ifOp.elseBlock();
        if (!taken)
          continue; // no else branch, no results
        for (Operation &inner : taken->without_terminator())
          b.clone(inner, mapping);
        for (auto [result, yielded] : llvm::zip(
                 ifOp.getResults(), taken->getTerminator()->getOperands()))
          mapping.map(result, mapping.lookupOrDefault(yielded));
        continue;
      }
    }
    if (bypasses(&op, rank)) {
      mapping.map(op.getResult(0), mapping.lookupOrDefault(op.getOperand(0)));
      continue;
    }
    b.clone(op, mapping);
  }
  // The rank tests and the other ranks' values left unused.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

struct SpecializeRanks
    : public mlir::soap::impl::SpecializeRanksBase<SpecializeRanks> {
  using SpecializeRanksBase::SpecializeRanksBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> maybeEntry = findEntryFunction(module, entry);
    if (failed(maybeEntry))
      return signalPassFailure();
    func::FuncOp entryFunc = *maybeEntry;
    if (entryFunc.isExternal())
      return;
    SmallVector<RankOp> ranks;
    entryFunc.walk([&](RankOp op) { ranks.push_back(op); });
    if (ranks.empty())
      return; // not an SPMD program
    // The same count the runtime checks its ranks against
    // (soap_num_devices).
    int64_t numDevices = SOAPDialect::getNumDevices(module);
    OpBuilder b(module.getContext());
    if (numDevices == 1) {
      for (RankOp op : ranks) {
        b.setInsertionPoint(op);
        op.getResult().replaceAllUsesWith(
            arith::ConstantIndexOp::create(b, op.getLoc(), 0));
        op.erase();
      }
      return;
    }

    // The clones, after the entry.
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> clones;
    Operation *previous = entryFunc;
    for (int64_t rank = 0; rank < numDevices; ++rank) {
      auto clone = func::FuncOp::create(
          entryFunc.getLoc(),
          (entryFunc.getSymName() + "__rank" + Twine(rank)).str(),
          entryFunc.getFunctionType());
      clone.setPrivate();
      clone->setAttr(SOAPDialect::kRankFunctionAttrName,
                     b.getI64IntegerAttr(rank));
      // Which results update which argument in place.
      if (ArrayAttr resultAttrs = entryFunc.getAllResultAttrs())
        clone.setAllResultAttrs(resultAttrs);
      cloneForRank(entryFunc, clone, rank);
      // Renamed if the name is taken.
      symbols.insert(clone, std::next(Block::iterator(previous)));
      previous = clone;
      clones.push_back(clone);
    }

    // The entry: its rank's clone (rank 0's for any other rank; the
    // runtime refuses to run on a different number of ranks).
    Block &body = entryFunc.getBody().front();
    for (Operation &op : body)
      op.dropAllReferences();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      op.erase();
    Location loc = entryFunc.getLoc();
    b.setInsertionPointToStart(&body);
    Value rank = RankOp::create(b, loc, b.getIndexType());
    SmallVector<int64_t> cases;
    for (int64_t r = 1; r < numDevices; ++r)
      cases.push_back(r);
    TypeRange results = entryFunc.getFunctionType().getResults();
    auto dispatch = scf::IndexSwitchOp::create(b, loc, results, rank, cases,
                                               cases.size());
    auto callClone = [&](Region &region, func::FuncOp clone) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&region.emplaceBlock());
      auto call = func::CallOp::create(b, loc, clone, body.getArguments());
      scf::YieldOp::create(b, loc, call.getResults());
    };
    callClone(dispatch.getDefaultRegion(), clones[0]);
    for (int64_t r = 1; r < numDevices; ++r)
      callClone(dispatch.getCaseRegions()[r - 1], clones[r]);
    func::ReturnOp::create(b, loc, dispatch.getResults());
  }
};

} // namespace
