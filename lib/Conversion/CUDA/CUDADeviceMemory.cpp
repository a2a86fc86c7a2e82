//===- CUDADeviceMemory.cpp - Buffers in device memory --------------------===//
//
// soap-cuda-device-memory: after the kernels are outlined, the host code only
// allocates, frees, slices and passes buffers around. Allocations reach
// libsoaprt's device allocator through finalize-memref-to-llvm's generic
// allocation functions; this pass gives the globals device copies and checks
// that no host code touches device data.
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"

#include "CUDAPatterns.h"

#include "soap/Conversion/LowerToCPU.h"
#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDADEVICEMEMORY
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Whether a (transitive, through views and calls of functions of the
/// module) user of `buffer` reads or writes its data on the host.
static bool isAccessedByHost(Value buffer, ModuleOp module) {
  SmallVector<Value> work = {buffer};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::LoadOp, memref::StoreOp>(user))
        return true;
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal())
          work.push_back(callee.getArgument(use.getOperandNumber()));
        continue;
      }
      if (isa<ViewLikeOpInterface, memref::CastOp>(user))
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            work.push_back(r);
    }
  }
  return false;
}

/// Whether a (transitive, through views) user of `buffer` hands it to the
/// GPU: a kernel launch or a libsoaprt call.
static bool isUsedByDevice(Value buffer, ModuleOp module) {
  SmallVector<Value> work = {buffer};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<gpu::LaunchFuncOp>(user))
        return true;
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (callee && callee.isExternal())
          return true;
      }
      if (isa<ViewLikeOpInterface, memref::CastOp>(user))
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            work.push_back(r);
    }
  }
  return false;
}

/// A memref of static shape and identity layout at device address `address`
/// (i64): the LLVM memref descriptor built by hand, cast back to the memref
/// type (the casts cancel when the host code is lowered to LLVM).
static Value memrefAtAddress(OpBuilder &b, Location loc, Value address,
                             MemRefType type) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  int64_t rank = type.getRank();
  SmallVector<Type> fields = {ptrType, ptrType, i64};
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value ptr = LLVM::IntToPtrOp::create(b, loc, ptrType, address);
  Value desc = LLVM::PoisonOp::create(b, loc, structType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, ptr, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, ptr, ArrayRef<int64_t>{1});
  auto constant = [&](int64_t v) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(0),
                                     ArrayRef<int64_t>{2});
  SmallVector<int64_t> strides = type.getStridesAndOffset().first;
  for (int64_t d = 0; d < rank; ++d) {
    desc = LLVM::InsertValueOp::create(b, loc, desc,
                                       constant(type.getDimSize(d)),
                                       ArrayRef<int64_t>{3, d});
    desc = LLVM::InsertValueOp::create(b, loc, desc, constant(strides[d]),
                                       ArrayRef<int64_t>{4, d});
  }
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{type},
                                            ValueRange{desc})
      .getResult(0);
}

struct CUDADeviceMemory
    : public soap::impl::CUDADeviceMemoryBase<CUDADeviceMemory> {

  /// i64 result of `name(args)`, declared as a plain C function.
  Value callI64(OpBuilder &b, Location loc, StringRef name,
                ArrayRef<Value> args) {
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    func::FuncOp callee = soap::getOrInsertRuntimeFunction(
        b, getOperation(), name,
        b.getFunctionType(types, {b.getI64Type()}), /*cInterface=*/false);
    return func::CallOp::create(b, loc, callee, args).getResult(0);
  }

  /// Replaces `get` (a host global) with its device copy.
  void toDevice(memref::GetGlobalOp get) {
    OpBuilder b(get->getContext());
    b.setInsertionPointAfter(get);
    Location loc = get.getLoc();
    auto type = cast<MemRefType>(get.getType());
    StringRef name = get.getName();
    Value address;
    Operation *hostRead = nullptr;
    int64_t index;
    // soap-cpu-entry's "__soap_input_<i>", or "__soap_input_<i>_<k>" (another
    // shape of input i's part that some ranks bind): the device copy of
    // input i's binding.
    if (name.consume_front("__soap_input_") &&
        !name.take_until([](char c) { return c == '_'; })
             .getAsInteger(10, index)) {
      address = callI64(b, loc, "soaprt_cuda_input",
                        {arith::ConstantIntOp::create(b, loc, index, 64)});
    } else {
      hostRead = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, get);
      Value host = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                              hostRead->getResult(0));
      std::optional<int64_t> bytes = soap::cuda::staticByteSize(type);
      if (!bytes) {
        get.emitError() << "soap-cuda-device-memory: cannot copy a constant "
                           "of type "
                        << type << " to the GPU (integers and floats only)";
        return signalPassFailure();
      }
      address = callI64(b, loc, "soaprt_cuda_constant",
                        {host, arith::ConstantIntOp::create(b, loc, *bytes, 64)});
    }
    Value device = memrefAtAddress(b, loc, address, type);
    get.getResult().replaceUsesWithIf(device, [&](OpOperand &use) {
      return use.getOwner() != hostRead;
    });
    if (get->use_empty())
      get.erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::GetGlobalOp> globals;
    SmallVector<memref::AllocOp> hostAllocs;
    SmallVector<Operation *> hostAccesses;
    for (auto func : module.getOps<func::FuncOp>()) {
      func.walk([&](Operation *op) {
        if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
          StringRef name = get.getName();
          // Device lists of collectives, input regions, initial values and
          // held parts are read by the runtime on the host; soap_setup binds
          // the inputs' host buffers.
          if (name.starts_with(soap::kDeviceListGlobalPrefix) ||
              name.starts_with(soap::kInputRegionGlobalPrefix) ||
              name.starts_with(soap::kInitialValueGlobalPrefix) ||
              name.starts_with(soap::kHeldPartsGlobalPrefix) ||
              (name.starts_with("__soap_input_") &&
               func.getSymName() == "soap_setup"))
            return;
          globals.push_back(get);
        } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
          if (isAccessedByHost(alloc.getResult(), module))
            hostAllocs.push_back(alloc);
        } else if (isa<memref::LoadOp, memref::StoreOp>(op)) {
          hostAccesses.push_back(op);
        }
      });
    }

    // Bookkeeping buffers of the host (the deallocation helpers' lists):
    // on the stack, freed with their frame.
    DenseSet<Value> hostBuffers;
    for (memref::AllocOp alloc : hostAllocs) {
      if (isUsedByDevice(alloc.getResult(), module)) {
        alloc.emitError("cannot lower for CUDA: this buffer is used by the "
                        "GPU and read or written by host code");
        return signalPassFailure();
      }
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user) &&
            user->getBlock() != alloc->getBlock()) {
          alloc.emitError("cannot place this host buffer on the stack: it is "
                          "freed in another block");
          return signalPassFailure();
        }
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(
          b, alloc.getLoc(), alloc.getType(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), alloc.getAlignmentAttr());
      for (Operation *user : llvm::to_vector(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.getResult().replaceAllUsesWith(alloca.getResult());
      alloc.erase();
      hostBuffers.insert(alloca.getResult());
    }

    for (Operation *op : hostAccesses) {
      Value buffer = isa<memref::LoadOp>(op)
                         ? cast<memref::LoadOp>(op).getMemRef()
                         : cast<memref::StoreOp>(op).getMemRef();
      Value root = soap::rootBuffer(buffer);
      // Host buffers, and the arguments of private helpers (the
      // deallocation helper's lists); the arguments of the functions
      // soap_main calls (the entry, each rank's) are on the GPU.
      if (hostBuffers.contains(root))
        continue;
      if (auto arg = dyn_cast<BlockArgument>(root)) {
        auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
        if (func && func.isPrivate() &&
            !func->hasAttr(soap::kModelFunctionAttrName))
          continue;
      }
      op->emitError() << "cannot lower for CUDA: the host reads or writes a "
                         "buffer that lives in device memory";
      return signalPassFailure();
    }

    for (memref::GetGlobalOp get : globals)
      toDevice(get);
  }
};

} // namespace
