//===- CUDAEmulateKernels.cpp - Kernel launches as host loops -------------===//
//
// soap-cuda-emulate-kernels: for testing the CUDA lowering on a machine
// without a GPU. Every gpu.launch_func becomes
//
//   scf.for %bz, %by, %bx (blocks) { scf.for %tz, %ty, %tx (threads) {
//     <the kernel's body, ids and sizes replaced> } }
//
// on the host. The kernels the CUDA lowering generates are one block of
// straight-line code with scf.if / scf.for inside, no barriers and no
// shared memory, and every thread writes its own elements: running the
// threads one after another computes what the GPU computes.
//
// With profile-accesses, the copy also calls libsoaprt_cuda_emu's access
// profiler: once per launch (the kernel's name and source location), once
// per thread (its block and thread), and before every load and store (the
// access's site and byte address).
//
//===----------------------------------------------------------------------===//

#include "soap/Conversion/Passes.h"
#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_CUDAEMULATEKERNELS
#include "soap/Conversion/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {

/// Why `kernel` cannot run as sequential host loops, or success.
static LogicalResult checkEmulatable(gpu::LaunchFuncOp launch,
                                     gpu::GPUFuncOp kernel) {
  auto reject = [&](const Twine &why) {
    InFlightDiagnostic diag = launch.emitOpError()
                              << "cannot be emulated on the host: " << why;
    diag.attachNote(kernel.getLoc()) << "kernel defined here";
    return diag;
  };
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return reject("asynchronous launch");
  if (launch.hasClusterSize())
    return reject("thread block clusters");
  if (launch.getDynamicSharedMemorySize())
    return reject("dynamic shared memory");
  if (kernel.getNumWorkgroupAttributions() ||
      kernel.getNumPrivateAttributions())
    return reject("memory attributions");
  if (!kernel.getBody().hasOneBlock())
    return reject("the kernel's body has several blocks");
  WalkResult walk = kernel.getBody().walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::ReturnOp>(op) ||
        !isa<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::advance();
    (void)reject("'" + op->getName().getStringRef() +
                 "' has no sequential meaning");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// The access profiler's calls
//===----------------------------------------------------------------------===//

/// The profiler's entry points (lib/Runtime/emulation/kernel_profile.c).
constexpr StringLiteral kProfileLaunch = "soaprt_emu_profile_launch";
constexpr StringLiteral kProfileThread = "soaprt_emu_profile_thread";
constexpr StringLiteral kProfileAccess = "soaprt_emu_profile_access";
constexpr StringLiteral kProfileLaunchEnd = "soaprt_emu_profile_launch_end";

/// Declares the profiler's functions in `module` (all arguments i64 but the
/// launch's name).
static void declareProfiler(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  OpBuilder builder(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto declare = [&](StringRef name, ArrayRef<Type> inputs) {
    soap::getOrInsertRuntimeFunction(builder, module, name,
                                     builder.getFunctionType(inputs, {}),
                                     /*cInterface=*/false);
  };
  declare(kProfileLaunch, {ptr, i64});
  declare(kProfileThread, {i64, i64});
  declare(kProfileAccess, {i64, i64, i64, i64});
  declare(kProfileLaunchEnd, {});
}

/// "kernel_module::kernel name... file:line:col": what the profile calls a
/// launch (the names and the first file position in its location).
static std::string launchName(gpu::LaunchFuncOp launch) {
  std::string name = (launch.getKernelModuleName().getValue() +
                      "::" + launch.getKernelName().getValue())
                         .str();
  llvm::SetVector<StringRef> names;
  std::optional<FileLineColLoc> position;
  launch.getLoc()->walk([&](Location loc) {
    if (auto named = dyn_cast<NameLoc>(loc))
      names.insert(named.getName().getValue());
    else if (auto file = dyn_cast<FileLineColLoc>(loc); file && !position)
      position = file;
    return WalkResult::advance();
  });
  for (StringRef n : names)
    name += (" " + n).str();
  if (position)
    name += (" " + position->getFilename().getValue() + ":" +
             Twine(position->getLine()) + ":" + Twine(position->getColumn()))
                .str();
  return name;
}

/// `(i0 * n1 + i1) * n2 + i2`: the linear id of (z, y, x) ids in sizes.
static Value linearId(OpBuilder &b, Location loc, ValueRange zyx,
                      ValueRange sizesZYX) {
  Value id = zyx[0];
  for (unsigned i = 1; i < 3; ++i)
    id = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, id, sizesZYX[i]), zyx[i]);
  return id;
}

/// Before `access` (a memref.load or store): reports its byte address.
static void profileAccess(OpBuilder &b, Operation *access, int64_t site,
                          const DataLayout &layout) {
  Location loc = access->getLoc();
  b.setInsertionPoint(access);
  Value memref;
  ValueRange indices;
  bool isStore = false;
  if (auto load = dyn_cast<memref::LoadOp>(access)) {
    memref = load.getMemRef();
    indices = load.getIndices();
  } else {
    auto store = cast<memref::StoreOp>(access);
    memref = store.getMemRef();
    indices = store.getIndices();
    isStore = true;
  }
  auto type = cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value element = meta.getOffset();
  for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
    element = arith::AddIOp::create(
        b, loc, element, arith::MulIOp::create(b, loc, index, stride));
  int64_t bytes = layout.getTypeSize(type.getElementType()).getFixedValue();
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value size = arith::ConstantIndexOp::create(b, loc, bytes);
  Value address = arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, element, size));
  Type i64 = b.getI64Type();
  auto asI64 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i64, index).getResult();
  };
  auto constant = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v).getResult();
  };
  func::CallOp::create(b, loc, kProfileAccess, TypeRange{},
                       ValueRange{constant(site), asI64(address),
                                  constant(bytes), constant(isStore)});
}

//===----------------------------------------------------------------------===//
// Emulation
//===----------------------------------------------------------------------===//

/// Replaces `launch` with loops over its grid and blocks around a copy of
/// the kernel's body (reporting to the access profiler when `profile`; the
/// launch's name is global string number `launchIndex`).
static void emulate(RewriterBase &rewriter, gpu::LaunchFuncOp launch,
                    gpu::GPUFuncOp kernel, bool profile,
                    unsigned launchIndex) {
  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  // The launch's name, and the number of access sites filled in below.
  func::CallOp launchCall;
  if (profile) {
    std::string name = launchName(launch);
    Value namePtr = LLVM::createGlobalString(
        loc, rewriter, ("soaprt_emu_profile_name_" + Twine(launchIndex)).str(),
        StringRef(name.c_str(), name.size() + 1), LLVM::Linkage::Internal);
    Value sites =
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(), 0);
    launchCall = func::CallOp::create(rewriter, loc, kProfileLaunch,
                                      TypeRange{}, ValueRange{namePtr, sites});
  }
  // Outermost first: block z, y, x, then thread z, y, x.
  SmallVector<Value> upper = {grid.z, grid.y, grid.x,
                              block.z, block.y, block.x};
  SmallVector<Value> ids;
  for (Value bound : upper) {
    auto loop = scf::ForOp::create(rewriter, loc, zero, bound, one);
    ids.push_back(loop.getInductionVar());
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  if (profile) {
    Value blockId = linearId(rewriter, loc, ValueRange(ids).take_front(3),
                             {grid.z, grid.y, grid.x});
    Value threadId = linearId(rewriter, loc, ValueRange(ids).drop_front(3),
                              {block.z, block.y, block.x});
    Type i64 = rewriter.getI64Type();
    func::CallOp::create(
        rewriter, loc, kProfileThread, TypeRange{},
        ValueRange{arith::IndexCastOp::create(rewriter, loc, i64, blockId),
                   arith::IndexCastOp::create(rewriter, loc, i64, threadId)});
  }
  auto pick = [](gpu::Dimension dim, Value x, Value y, Value z) {
    return dim == gpu::Dimension::x ? x : dim == gpu::Dimension::y ? y : z;
  };

  IRMapping mapping;
  Block &body = kernel.getBody().front();
  mapping.map(body.getArguments(), launch.getKernelOperands());
  for (Operation &op : body.without_terminator())
    rewriter.clone(op, mapping);
  // Ids and sizes, wherever they are in the copy.
  Block *inner = rewriter.getInsertionBlock();
  SmallVector<Operation *> gpuOps;
  inner->walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp,
            gpu::GridDimOp>(op))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    Value value;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      value = pick(id.getDimension(), ids[2], ids[1], ids[0]);
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      value = pick(id.getDimension(), ids[5], ids[4], ids[3]);
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      value = pick(dim.getDimension(), block.x, block.y, block.z);
    else
      value = pick(cast<gpu::GridDimOp>(op).getDimension(), grid.x, grid.y,
                   grid.z);
    rewriter.replaceOp(op, value);
  }
  if (profile) {
    SmallVector<Operation *> accesses;
    inner->walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp>(op))
        accesses.push_back(op);
    });
    DataLayout layout = DataLayout::closest(launch);
    for (auto [site, access] : llvm::enumerate(accesses))
      profileAccess(rewriter, access, site, layout);
    rewriter.setInsertionPoint(launchCall);
    launchCall->setOperand(1, arith::ConstantIntOp::create(
                                  rewriter, loc, rewriter.getI64Type(),
                                  accesses.size()));
    rewriter.setInsertionPoint(launch);
    func::CallOp::create(rewriter, loc, kProfileLaunchEnd, TypeRange{},
                         ValueRange{});
  }
  rewriter.eraseOp(launch);
}

struct CUDAEmulateKernels
    : public soap::impl::CUDAEmulateKernelsBase<CUDAEmulateKernels> {
  using CUDAEmulateKernelsBase::CUDAEmulateKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    if (profileAccesses && !launches.empty())
      declareProfiler(module);
    for (auto [index, launch] : llvm::enumerate(launches)) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel) {
        launch.emitOpError()
            << "cannot be emulated on the host: " << launch.getKernel()
            << " is not a gpu.func (run soap-cuda-emulate-kernels before "
               "the kernels are lowered to NVVM)";
        return signalPassFailure();
      }
      if (failed(checkEmulatable(launch, kernel)))
        return signalPassFailure();
      emulate(rewriter, launch, kernel, profileAccesses, index);
    }
    for (Operation &op : llvm::make_early_inc_range(module.getOps())) {
      if (isa<gpu::BinaryOp>(op)) {
        op.emitOpError() << "is compiled code: run soap-cuda-emulate-kernels "
                            "before gpu-module-to-binary";
        return signalPassFailure();
      }
      if (isa<gpu::GPUModuleOp>(op))
        op.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
