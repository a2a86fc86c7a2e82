//===- CUDAAsyncCommunication.cpp - Communication beside computation -------===//
//
// See Passes.td (soap-cuda-async-communication).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "CUDAPatterns.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDAASYNCCOMMUNICATION
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {

/// A started communication whose wait is still to be placed.
struct Started {
  Value ticket;
  Value root; ///< the buffer its region belongs to
};

/// What a root buffer (rootBuffer) is, for alias queries.
enum class RootKind {
  Fresh,  ///< an allocation of the function: its own memory
  Opaque, ///< a function argument, global or call result: not a fresh one
  Unknown ///< made by an op from other buffers: may be a view of anything
};

static RootKind getRootKind(Value root) {
  Operation *def = root.getDefiningOp();
  if (!def)
    return RootKind::Opaque;
  if (isa<memref::AllocOp, memref::AllocaOp>(def))
    return RootKind::Fresh;
  if (llvm::any_of(def->getOperandTypes(), llvm::IsaPred<BaseMemRefType>))
    return RootKind::Unknown;
  return RootKind::Opaque;
}

/// Whether two root buffers may share memory.
static bool mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  RootKind x = getRootKind(a), y = getRootKind(b);
  if (x == RootKind::Unknown || y == RootKind::Unknown)
    return true;
  if (isNoAliasArgument(a) && isNoAliasArgument(b))
    return false;
  return x == RootKind::Opaque && y == RootKind::Opaque;
}

/// Ops that touch no buffer themselves: no memory effects, views, casts.
/// (Ops with recursive effects touch what the ops they hold touch.)
static bool touchesNothingItself(Operation *op) {
  if (isa<ViewLikeOpInterface, memref::CastOp>(op) ||
      op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasNoEffect();
}

struct CUDAAsyncCommunication
    : public mlir::soap::impl::CUDAAsyncCommunicationBase<
          CUDAAsyncCommunication> {
  using CUDAAsyncCommunicationBase::CUDAAsyncCommunicationBase;
  void runOnOperation() override;

private:
  /// The root buffers `op` and the ops it holds may read, write or free;
  /// nullopt when it may touch any (a call of a function of the module).
  std::optional<SmallVector<Value>> touchedBuffers(Operation *op);
  void placeWaits(Block &block);
  void groupTransfers(Block &block);
  void bucketAllReduces(Block &block);

  ModuleOp module;
  func::FuncOp waitFn, groupBeginFn, groupEndFn;
  /// The starts made (in module order), and which of them are transfers
  /// and which all-reduces (the collectives buckets may hold).
  SetVector<Operation *> starts;
  DenseSet<Operation *> transferStarts, allReduceStarts;
};

std::optional<SmallVector<Value>>
CUDAAsyncCommunication::touchedBuffers(Operation *op) {
  SmallVector<Value> roots;
  bool any = false;
  op->walk([&](Operation *inner) {
    // Communication runs in the order it starts: a later start needs no
    // wait for an earlier one.
    if (starts.contains(inner) || touchesNothingItself(inner))
      return WalkResult::advance();
    if (auto call = dyn_cast<func::CallOp>(inner)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !callee.isExternal()) {
        any = true;
        return WalkResult::interrupt();
      }
    }
    for (Value operand : inner->getOperands())
      if (isa<BaseMemRefType>(operand.getType()))
        roots.push_back(rootBuffer(operand));
    return WalkResult::advance();
  });
  if (any)
    return std::nullopt;
  return roots;
}

void CUDAAsyncCommunication::placeWaits(Block &block) {
  SmallVector<Started> pending;
  // A wait for pending[index] before `op`: that one and every earlier one
  // are then complete.
  auto waitBefore = [&](Operation *op, size_t index) {
    OpBuilder builder(op);
    func::CallOp::create(builder, op->getLoc(), waitFn,
                         ValueRange{pending[index].ticket});
    pending.erase(pending.begin(), pending.begin() + index + 1);
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (starts.contains(&op)) {
      pending.push_back({op.getResult(0), rootBuffer(op.getOperand(0))});
      continue;
    }
    if (pending.empty())
      continue;
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      waitBefore(&op, pending.size() - 1);
      continue;
    }
    std::optional<SmallVector<Value>> touched = touchedBuffers(&op);
    std::optional<size_t> last;
    for (size_t i = 0; i < pending.size(); ++i)
      if (!touched || llvm::any_of(*touched, [&](Value root) {
            return mayAlias(root, pending[i].root);
          }))
        last = i;
    if (last)
      waitBefore(&op, *last);
  }
}

/// What a transfer touches: a box of its root buffer (per dimension the
/// first and last index; none: possibly all of it), and whether this rank
/// receives into it (writes) rather than sends it.
struct TransferAccess {
  Value root;
  std::optional<SmallVector<std::pair<int64_t, int64_t>>> box;
  bool writes = true;
};

static TransferAccess getTransferAccess(func::CallOp start,
                                        std::optional<int64_t> rank) {
  TransferAccess access;
  Value region = start.getOperand(0);
  access.root = rootBuffer(region);
  if (auto cast = region.getDefiningOp<memref::CastOp>())
    region = cast.getSource();
  if (auto view = region.getDefiningOp<memref::SubViewOp>();
      view && view.getSource() == access.root &&
      !ShapedType::isDynamicShape(view.getStaticOffsets()) &&
      !ShapedType::isDynamicShape(view.getStaticSizes()) &&
      !ShapedType::isDynamicShape(view.getStaticStrides()) &&
      view.getStaticSizes().size() == view.getStaticOffsets().size()) {
    SmallVector<std::pair<int64_t, int64_t>> box;
    for (auto [offset, size, stride] :
         llvm::zip(view.getStaticOffsets(), view.getStaticSizes(),
                   view.getStaticStrides()))
      box.push_back({offset, offset + (size - 1) * stride});
    access.box = box;
  }
  // soaprt_transfer_start(region, dtype, from, to): this rank receives
  // unless it is `from`.
  IntegerAttr from;
  if (rank && matchPattern(start.getOperand(2), m_Constant(&from)))
    access.writes = from.getInt() != *rank;
  return access;
}

/// Whether running two transfers at once may differ from running them in
/// order: they touch a common element and one of them writes it.
static bool conflict(const TransferAccess &a, const TransferAccess &b) {
  if (!a.writes && !b.writes)
    return false;
  if (!mayAlias(a.root, b.root))
    return false;
  if (a.root != b.root || !a.box || !b.box || a.box->size() != b.box->size())
    return true;
  for (auto [x, y] : llvm::zip(*a.box, *b.box))
    if (x.second < y.first || y.second < x.first)
      return false;
  return true;
}

void CUDAAsyncCommunication::groupTransfers(Block &block) {
  // Which rank runs this block, if known: it tells sends from receives.
  std::optional<int64_t> rank;
  Operation *parent = block.getParentOp();
  auto func = isa<func::FuncOp>(parent) ? cast<func::FuncOp>(parent)
                                        : parent->getParentOfType<func::FuncOp>();
  if (auto attr = func ? func->getAttrOfType<IntegerAttr>(
                             SOAPDialect::kRankFunctionAttrName)
                       : IntegerAttr())
    rank = attr.getInt();

  // Runs of transfers with only side-effect-free ops between them, each
  // split where a transfer depends on an earlier one of the run (a region
  // received and then sent on, or sent and then overwritten).
  SmallVector<Operation *> run;
  SmallVector<TransferAccess> accesses;
  auto close = [&]() {
    if (run.size() >= 2) {
      OpBuilder builder(run.front());
      func::CallOp::create(builder, run.front()->getLoc(), groupBeginFn,
                           ValueRange{});
      builder.setInsertionPointAfter(run.back());
      func::CallOp::create(builder, run.back()->getLoc(), groupEndFn,
                           ValueRange{});
    }
    run.clear();
    accesses.clear();
  };
  for (Operation &op : block) {
    if (transferStarts.contains(&op)) {
      TransferAccess access =
          getTransferAccess(cast<func::CallOp>(op), rank);
      if (llvm::any_of(accesses, [&](const TransferAccess &earlier) {
            return conflict(earlier, access);
          }))
        close();
      run.push_back(&op);
      accesses.push_back(access);
    } else if (!isMemoryEffectFree(&op)) {
      close();
    }
  }
  close();
}

/// The bytes of a communication start's region (operand 0, a cast of a
/// statically shaped buffer), if known.
static std::optional<int64_t> regionBytes(Operation *start) {
  Value region = start->getOperand(0);
  if (auto cast = region.getDefiningOp<memref::CastOp>())
    region = cast.getSource();
  auto type = dyn_cast<MemRefType>(region.getType());
  if (!type)
    return std::nullopt;
  return cuda::staticByteSize(type);
}

/// The global holding an all-reduce start's device list (operand 3).
static std::optional<StringRef> deviceGroup(Operation *start) {
  Value devices = start->getOperand(3);
  if (auto cast = devices.getDefiningOp<memref::CastOp>())
    devices = cast.getSource();
  if (auto global = devices.getDefiningOp<memref::GetGlobalOp>())
    return global.getName();
  return std::nullopt;
}

void CUDAAsyncCommunication::bucketAllReduces(Block &block) {
  SmallVector<Operation *> bucket;
  int64_t bytes = 0;
  std::optional<StringRef> group;
  // Members start together at the last one, in one NCCL group.
  auto close = [&]() {
    if (bucket.size() >= 2) {
      Operation *last = bucket.back();
      for (Operation *member : ArrayRef(bucket).drop_back())
        member->moveBefore(last);
      OpBuilder builder(bucket.front());
      func::CallOp::create(builder, bucket.front()->getLoc(), groupBeginFn,
                           ValueRange{});
      builder.setInsertionPointAfter(last);
      func::CallOp::create(builder, last->getLoc(), groupEndFn, ValueRange{});
    }
    bucket.clear();
    bytes = 0;
    group.reset();
  };
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (allReduceStarts.contains(op)) {
      std::optional<int64_t> size = regionBytes(op);
      std::optional<StringRef> devices = deviceGroup(op);
      if (!bucket.empty() &&
          (!size || !devices || devices != group || bytes + *size > bucketBytes))
        close();
      if (!size || !devices || *size >= bucketBytes)
        continue; // a bucket of its own
      bucket.push_back(op);
      bytes += *size;
      group = devices;
      continue;
    }
    if (bucket.empty())
      continue;
    // Other communication keeps its place among the collectives; an op
    // that may touch a member's buffer must see it reduced.
    if (starts.contains(op)) {
      close();
      continue;
    }
    std::optional<SmallVector<Value>> touched = touchedBuffers(op);
    if (!touched || llvm::any_of(bucket, [&](Operation *member) {
          Value root = rootBuffer(member->getOperand(0));
          return llvm::any_of(*touched, [&](Value other) {
            return mayAlias(root, other);
          });
        }))
      close();
  }
  close();
}

void CUDAAsyncCommunication::runOnOperation() {
  module = getOperation();
  if (bucketBytes < 0) {
    module.emitError() << "soap-cuda-async-communication: bucket-bytes must "
                          "not be negative (0 turns buckets off)";
    return signalPassFailure();
  }
  MLIRContext *ctx = &getContext();
  OpBuilder builder(ctx);
  Type i64 = builder.getI64Type();

  // Each communication call becomes its start, which returns a ticket.
  SmallVector<func::CallOp> calls;
  llvm::SetVector<StringRef> replaced;
  module.walk([&](func::CallOp call) {
    if (matchRuntimeCommunication(call))
      calls.push_back(call);
  });
  if (calls.empty())
    return;
  for (func::CallOp call : calls) {
    RuntimeCommunication kind = *matchRuntimeCommunication(call);
    bool transfer = kind == RuntimeCommunication::Transfer;
    StringRef base =
        transfer                                      ? "soaprt_transfer"
        : kind == RuntimeCommunication::AllReduce     ? "soaprt_all_reduce"
        : kind == RuntimeCommunication::ReduceScatter ? "soaprt_reduce_scatter"
                                                      : "soaprt_all_gather";
    std::string name =
        (base + "_start" + call.getCallee().drop_front(base.size())).str();
    func::FuncOp startFn = getOrInsertRuntimeFunction(
        builder, module, name,
        builder.getFunctionType(call.getOperandTypes(), {i64}),
        /*cInterface=*/true);
    builder.setInsertionPoint(call);
    auto start = func::CallOp::create(builder, call.getLoc(), startFn,
                                      call.getOperands());
    starts.insert(start);
    if (transfer)
      transferStarts.insert(start);
    if (kind == RuntimeCommunication::AllReduce)
      allReduceStarts.insert(start);
    replaced.insert(call.getCallee());
    call.erase();
  }
  // The blocking entries' declarations, now unused.
  for (StringRef name : replaced) {
    auto decl = module.lookupSymbol<func::FuncOp>(name);
    if (decl && decl.isExternal() &&
        SymbolTable::symbolKnownUseEmpty(decl, module))
      decl.erase();
  }
  waitFn = getOrInsertRuntimeFunction(builder, module, "soaprt_comm_wait",
                                      builder.getFunctionType({i64}, {}),
                                      /*cInterface=*/false);
  groupBeginFn = getOrInsertRuntimeFunction(
      builder, module, "soaprt_comm_group_begin",
      builder.getFunctionType({}, {}), /*cInterface=*/false);
  groupEndFn = getOrInsertRuntimeFunction(
      builder, module, "soaprt_comm_group_end",
      builder.getFunctionType({}, {}), /*cInterface=*/false);

  // Every block that starts communication (its function's body or a loop's).
  SetVector<Block *> blocks;
  for (Operation *start : starts)
    blocks.insert(start->getBlock());
  for (Block *block : blocks) {
    if (bucketBytes > 0)
      bucketAllReduces(*block);
    placeWaits(*block);
    groupTransfers(*block);
  }
}

} // namespace
