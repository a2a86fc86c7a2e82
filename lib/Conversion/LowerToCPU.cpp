//===- LowerToCPU.cpp - Partitioned program -> LLVM for the CPU -----------===//

#include "soap/Conversion/LowerToCPU.h"
#include "soap/Conversion/LoopOrder.h"
#include "soap/Conversion/Passes.h"

#include "soap/Analysis/OpGraphExtraction.h"
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Dialect/SOAP/IR/SOAPOps.h"
#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::soap;

/// Element types libsoaprt knows, for messages.
static constexpr llvm::StringLiteral kSupportedTypes =
    "f32, f64, f16, bf16, i1, i8, i16, i32 or i64";

//===----------------------------------------------------------------------===//
// soap-cpu-prepare
//===----------------------------------------------------------------------===//

namespace {
/// This rank as an index: `soaprt_rank()` (declared if need be).
static Value createRuntimeRank(OpBuilder &b, Location loc, ModuleOp module) {
  func::FuncOp callee = getOrInsertRuntimeFunction(
      b, module, "soaprt_rank", b.getFunctionType({}, {b.getI64Type()}),
      /*cInterface=*/false);
  Value rank = func::CallOp::create(b, loc, callee).getResult(0);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
}

struct CPUPreparePass
    : public PassWrapper<CPUPreparePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CPUPreparePass)

  CPUPreparePass() = default;
  CPUPreparePass(const CPUPreparePass &other) : PassWrapper(other) {}
  CPUPreparePass(std::string entryName, std::string targetName) {
    entry = entryName;
    target = targetName;
  }

  StringRef getArgument() const final { return "soap-cpu-prepare"; }
  StringRef getDescription() const final {
    return "Check a (partitioned) program for the CPU lowering, keep the "
           "entry's arguments read-only and lower soap.rank to libsoaprt";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect,
                    bufferization::BufferizationDialect>();
  }

  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target named in messages"),
                             llvm::cl::init("the CPU")};
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("Entry function (default: the "
                                           "public function no other calls)"),
                            llvm::cl::init("")};

  LogicalResult checkType(func::FuncOp func, Type type, StringRef what,
                          unsigned index) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        failed(getRuntimeDTypeCode(tensor.getElementType())))
      return func.emitError()
             << "cannot lower '" << func.getSymName() << "' for " << target << ": "
             << what << " #" << index << " has type " << type
             << "; entry arguments and results must be statically shaped "
                "tensors of "
             << kSupportedTypes;
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> maybeFunc = findEntryFunction(module, entry);
    if (failed(maybeFunc))
      return signalPassFailure();
    func::FuncOp func = *maybeFunc;
    for (StringRef reserved :
         {"soap_main", "soap_setup", "soap_num_devices", "soap_num_inputs",
          "soap_num_outputs"})
      if (module.lookupSymbol(reserved)) {
        module.emitError() << "cannot lower for " << target
                           << ": the module already "
                              "defines '"
                           << reserved << "', a name libsoaprt reserves";
        return signalPassFailure();
      }
    FunctionType type = func.getFunctionType();
    for (auto [i, t] : llvm::enumerate(type.getInputs()))
      if (failed(checkType(func, t, "argument", i)))
        return signalPassFailure();
    for (auto [i, t] : llvm::enumerate(type.getResults()))
      if (failed(checkType(func, t, "result", i)))
        return signalPassFailure();

    // Every device a communication op names must exist.
    int64_t numDevices = SOAPDialect::getNumDevices(module);
    auto checkDevice = [&](Operation *op, int64_t device) -> LogicalResult {
      if (device >= 0 && device < numDevices)
        return success();
      return op->emitOpError()
             << "uses device " << device << " but the program runs on "
             << numDevices << " device" << (numDevices == 1 ? "" : "s")
             << " (the module's soap.machine)";
    };
    WalkResult walk = module.walk([&](Operation *op) {
      if (auto transfer = dyn_cast<TransferOp>(op)) {
        if (failed(checkDevice(op, transfer.getFrom())) ||
            failed(checkDevice(op, transfer.getTo())))
          return WalkResult::interrupt();
      } else if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(op)) {
        for (int64_t d :
             op->getAttrOfType<DenseI64ArrayAttr>("devices").asArrayRef())
          if (failed(checkDevice(op, d)))
            return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    // The inputs are bound once and reused by every iteration: the program
    // must not write into them, except those it updates in place (a result
    // marked soap.updates_input), which it may write where they are.
    llvm::SmallDenseSet<int64_t> updatedArguments;
    for (unsigned r = 0; r < func.getNumResults(); ++r)
      if (auto index = func.getResultAttrOfType<IntegerAttr>(
              r, SOAPDialect::kUpdatesInputAttrName))
        updatedArguments.insert(index.getInt());
    OpBuilder builder(module.getContext());
    // So must the entry as each rank runs it: soap_main may call it on
    // them directly (soap-cpu-entry).
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f != func && !f->hasAttr(SOAPDialect::kRankFunctionAttrName))
        continue;
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        f.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                     builder.getBoolAttr(updatedArguments.contains(i)));
    }
    func->setAttr(kCPUEntryAttrName, builder.getUnitAttr());

    // The SOAP annotations have done their work; their verifiers expect
    // tensors, so they go before bufferization.
    auto isAnnotation = [](NamedAttribute attr) {
      StringRef name = attr.getName().getValue();
      return name == SOAPDialect::kConfigAttrName ||
             name == SOAPDialect::kNameAttrName ||
             name == SOAPDialect::kParameterAttrName;
    };
    module.walk([&](Operation *op) {
      for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
        if (isAnnotation(attr))
          op->removeDiscardableAttr(attr.getName());
    });
    for (auto f : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        f.removeArgAttr(i, SOAPDialect::kParameterAttrName);

    // soap.rank -> soaprt_rank().
    SmallVector<RankOp> ranks;
    module.walk([&](RankOp op) { ranks.push_back(op); });
    if (ranks.empty())
      return;
    for (RankOp op : ranks) {
      builder.setInsertionPoint(op);
      op.getResult().replaceAllUsesWith(
          createRuntimeRank(builder, op.getLoc(), module));
      op.erase();
    }
  }
};

//===----------------------------------------------------------------------===//
// soap-cpu-entry
//===----------------------------------------------------------------------===//

struct CPUEntryPass
    : public PassWrapper<CPUEntryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CPUEntryPass)

  StringRef getArgument() const final { return "soap-cpu-entry"; }
  StringRef getDescription() const final {
    return "Generate the entry points libsoaprt's main() drives (soap_setup, "
           "soap_main, soap_num_devices, soap_num_inputs, soap_num_outputs) "
           "around the bufferized entry function; results marked "
           "soap.updates_input go to soaprt_update_input";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect,
                    memref::MemRefDialect, LLVM::LLVMDialect,
                    scf::SCFDialect>();
  }

  /// `func.func @name() -> i64 { return value }`.
  static void constantFunction(OpBuilder &b, Location loc, StringRef name,
                               int64_t value) {
    auto func = func::FuncOp::create(
        b, loc, name, b.getFunctionType({}, {b.getI64Type()}));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(func.addEntryBlock());
    Value v = arith::ConstantIntOp::create(b, loc, value, 64);
    func::ReturnOp::create(b, loc, v);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp entry;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kCPUEntryAttrName))
        entry = func;
    if (!entry) {
      module.emitError("soap-cpu-entry: no entry function (run "
                       "soap-cpu-prepare first)");
      return signalPassFailure();
    }
    FunctionType type = entry.getFunctionType();
    auto checkBuffer = [&](Type t, StringRef what, unsigned i) -> LogicalResult {
      auto memref = dyn_cast<MemRefType>(t);
      if (memref && memref.hasStaticShape() &&
          memref.getLayout().isIdentity())
        return success();
      return entry.emitError()
             << "soap-cpu-entry: " << what << " #" << i << " has type " << t
             << "; expected a statically shaped memref with the identity "
                "layout (bufferize with identity-layout-map function "
                "boundaries)";
    };
    for (auto [i, t] : llvm::enumerate(type.getInputs()))
      if (failed(checkBuffer(t, "argument", i)))
        return signalPassFailure();
    for (auto [i, t] : llvm::enumerate(type.getResults()))
      if (failed(checkBuffer(t, "result", i)))
        return signalPassFailure();

    Location loc = entry.getLoc();
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    auto i64Constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    // soaprt_bind_input_<t>(index, buffer, dtype) / soaprt_bind_output_<t> /
    // soaprt_update_input_<t>.
    auto bind = [&](StringRef base, int64_t index, Value buffer) {
      auto t = cast<MemRefType>(buffer.getType());
      Type u = UnrankedMemRefType::get(t.getElementType(), t.getMemorySpace());
      func::FuncOp callee = getOrInsertRuntimeFunction(
          b, module, getRuntimeFunctionName(base, t.getElementType()),
          b.getFunctionType({i64, u, i64}, {}), /*cInterface=*/true);
      Value cast = memref::CastOp::create(b, loc, u, buffer);
      func::CallOp::create(
          b, loc, callee,
          ValueRange{i64Constant(index), cast,
                     i64Constant(*getRuntimeDTypeCode(t.getElementType()))});
    };

    // Results marked soap.updates_input are written over their argument
    // (soaprt_update_input); the others are the program's outputs.
    // Where the ranks' valid parts of such an input are (soap.held_parts),
    // where the entry says.
    SmallVector<std::optional<int64_t>> updatedInput;
    SmallVector<DenseI64ArrayAttr> heldParts;
    int64_t numOutputs = 0;
    for (unsigned r = 0; r < type.getNumResults(); ++r) {
      auto index = entry.getResultAttrOfType<IntegerAttr>(
          r, SOAPDialect::kUpdatesInputAttrName);
      updatedInput.push_back(index ? std::optional<int64_t>(index.getInt())
                                   : std::nullopt);
      heldParts.push_back(index ? entry.getResultAttrOfType<DenseI64ArrayAttr>(
                                      r, SOAPDialect::kHeldPartsAttrName)
                                : DenseI64ArrayAttr());
      numOutputs += index ? 0 : 1;
    }

    // The entry as each rank runs it (soap-specialize-ranks), if every rank
    // has one: soap_main calls its rank's directly, which may read only a
    // part of an input (soap-compact-tensors), and binds only that part.
    int64_t numDevices = SOAPDialect::getNumDevices(module);
    // A rank function returns what the entry returns, except that an
    // in-place update may be the rank's part of it (soap-compact-tensors).
    auto sameResults = [&](func::FuncOp f) {
      TypeRange results = f.getFunctionType().getResults();
      if (results.size() != type.getNumResults())
        return false;
      for (auto [i, t] : llvm::enumerate(results)) {
        auto part = dyn_cast<MemRefType>(t);
        auto whole = dyn_cast<MemRefType>(type.getResult(i));
        if (t != type.getResult(i) &&
            (!updatedInput[i] || !part || !whole ||
             part.getRank() != whole.getRank() ||
             part.getElementType() != whole.getElementType()))
          return false;
      }
      return true;
    };
    SmallVector<func::FuncOp> rankFunctions(numDevices);
    for (auto func : module.getOps<func::FuncOp>()) {
      auto rank = func->getAttrOfType<IntegerAttr>(
          SOAPDialect::kRankFunctionAttrName);
      if (rank && rank.getInt() >= 0 && rank.getInt() < numDevices &&
          func.getFunctionType().getNumInputs() == type.getNumInputs() &&
          sameResults(func))
        rankFunctions[rank.getInt()] = func;
    }
    bool perRank = numDevices > 1 && llvm::all_of(rankFunctions, [](auto f) {
      return f && !f.isExternal();
    });
    if (!perRank)
      rankFunctions.assign(1, entry);
    for (func::FuncOp func : rankFunctions)
      for (auto [i, t] : llvm::enumerate(func.getFunctionType().getInputs()))
        if (failed(checkBuffer(t, "argument", i)))
          return signalPassFailure();
    // Initial values of inputs (weights lifted from constants): read before
    // the entry goes, then dropped everywhere (the globals below hold them).
    // So are the ranges of random inputs (soap-random-input-ranges).
    SmallVector<ElementsAttr> initialValues(type.getNumInputs());
    SmallVector<DenseF64ArrayAttr> randomRanges(type.getNumInputs());
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      initialValues[i] = entry.getArgAttrOfType<ElementsAttr>(
          i, SOAPDialect::kInitialValueAttrName);
      randomRanges[i] = entry.getArgAttrOfType<DenseF64ArrayAttr>(
          i, SOAPDialect::kRandomRangeAttrName);
    }
    for (auto f : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < f.getNumArguments(); ++i) {
        f.removeArgAttr(i, SOAPDialect::kInitialValueAttrName);
        f.removeArgAttr(i, SOAPDialect::kRandomRangeAttrName);
      }
    // The entry only dispatched to the ranks' functions.
    if (perRank)
      entry.erase();

    // An in-place update that bufferization wrote into the argument's own
    // buffer comes back as that argument: the function stops returning it
    // (a returned argument would be cloned for the caller to own), and
    // soap_main hands the input itself to soaprt_update_input, which then
    // has nothing to copy.
    SmallVector<llvm::BitVector> inArgument;
    for (func::FuncOp func : rankFunctions) {
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      llvm::BitVector drop(func.getNumResults());
      for (unsigned r = 0; r < func.getNumResults(); ++r) {
        if (!updatedInput[r])
          continue;
        Value v = ret.getOperand(r);
        while (auto cast = v.getDefiningOp<memref::CastOp>())
          v = cast.getSource();
        auto arg = dyn_cast<BlockArgument>(v);
        if (arg && arg.getOwner() == &func.getBody().front() &&
            static_cast<int64_t>(arg.getArgNumber()) == *updatedInput[r])
          drop.set(r);
      }
      inArgument.push_back(drop);
      if (drop.none())
        continue;
      ret->eraseOperands(drop);
      if (failed(func.eraseResults(drop))) {
        func.emitError("soap-cpu-entry: cannot drop the in-place results");
        return signalPassFailure();
      }
    }

    b.setInsertionPointToEnd(module.getBody());
    // The inputs live in globals: bound once, read by every iteration. A
    // rank binds only its own, so ranks whose parts of an input have the
    // same shape share one ("__soap_input_<i>"; another shape of it:
    // "__soap_input_<i>_<k>"): the object holds no more than one whole
    // input's worth per shape, whatever the number of ranks.
    SmallVector<SmallVector<std::string>> globals(rankFunctions.size());
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      SmallVector<MemRefType> shapes;
      for (auto [r, func] : llvm::enumerate(rankFunctions)) {
        auto t = cast<MemRefType>(func.getFunctionType().getInput(i));
        auto it = llvm::find(shapes, t);
        size_t k = it - shapes.begin();
        std::string name = "__soap_input_" + std::to_string(i);
        if (k > 0)
          name += "_" + std::to_string(k);
        if (it == shapes.end()) {
          shapes.push_back(t);
          memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"),
                                   t, b.getUnitAttr(), /*constant=*/false,
                                   /*alignment=*/b.getI64IntegerAttr(64));
        }
        globals[r].push_back(name);
      }
    }
    auto getGlobals = [&](int64_t r) {
      SmallVector<Value> values;
      for (auto [i, t] :
           llvm::enumerate(rankFunctions[r].getFunctionType().getInputs()))
        values.push_back(memref::GetGlobalOp::create(
            b, loc, cast<MemRefType>(t), globals[r][i]));
      return values;
    };
    // `callee`(index, list): `values` from a constant i64 global `name`
    // (host memory on every target: CUDADeviceMemory leaves it there).
    auto callWithList = [&](StringRef callee, int64_t index, StringRef name,
                            ArrayRef<int64_t> values) {
      auto listType =
          MemRefType::get({static_cast<int64_t>(values.size())}, i64);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(module.getBody());
        memref::GlobalOp::create(
            b, loc, name, b.getStringAttr("private"), listType,
            DenseIntElementsAttr::get(
                RankedTensorType::get(listType.getShape(), i64), values),
            /*constant=*/true, /*alignment=*/IntegerAttr());
      }
      Type u = UnrankedMemRefType::get(i64, nullptr);
      func::FuncOp function = getOrInsertRuntimeFunction(
          b, module, callee, b.getFunctionType({i64, u}, {}),
          /*cInterface=*/true);
      Value global = memref::GetGlobalOp::create(b, loc, listType, name);
      func::CallOp::create(
          b, loc, function,
          ValueRange{i64Constant(index),
                     memref::CastOp::create(b, loc, u, global)});
    };
    // Where input i's part on rank r lies in the whole input:
    // soaprt_input_region(i, [whole sizes..., offsets...]).
    auto bindRegion = [&](int64_t r, int64_t i) {
      auto offsets = rankFunctions[r].getArgAttrOfType<DenseI64ArrayAttr>(
          i, SOAPDialect::kRegionOffsetsAttrName);
      if (!offsets)
        return;
      SmallVector<int64_t> region(
          cast<MemRefType>(type.getInput(i)).getShape());
      llvm::append_range(region, offsets.asArrayRef());
      callWithList(
          "soaprt_input_region", i,
          (kInputRegionGlobalPrefix + "_" + Twine(i) + "_rank" + Twine(r))
              .str(),
          region);
    };
    // `body(r)` for this rank r: an scf.index_switch on soaprt_rank().
    auto forThisRank = [&](function_ref<void(int64_t)> body) {
      if (!perRank) {
        body(0);
        return;
      }
      Value rank = createRuntimeRank(b, loc, module);
      SmallVector<int64_t> cases;
      for (int64_t r = 1; r < numDevices; ++r)
        cases.push_back(r);
      auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, rank,
                                                 cases, cases.size());
      OpBuilder::InsertionGuard guard(b);
      for (int64_t r = 0; r < numDevices; ++r) {
        Region &region = r == 0 ? dispatch.getDefaultRegion()
                                : dispatch.getCaseRegions()[r - 1];
        b.setInsertionPointToStart(&region.emplaceBlock());
        body(r);
        scf::YieldOp::create(b, loc);
      }
    };

    constantFunction(b, loc, "soap_num_devices", SOAPDialect::getNumDevices(module));
    constantFunction(b, loc, "soap_num_inputs", type.getNumInputs());
    constantFunction(b, loc, "soap_num_outputs", numOutputs);

    // soap_setup(): make the communicator of every device group the
    // program's all_reduce ops use (in module order, the same on every
    // rank), so that the first step does not; bind every input buffer.
    SmallVector<memref::GlobalOp> deviceLists;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (global.getSymName().starts_with(kDeviceListGlobalPrefix))
        deviceLists.push_back(global);
    auto setup =
        func::FuncOp::create(b, loc, "soap_setup", b.getFunctionType({}, {}));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(setup.addEntryBlock());
      for (memref::GlobalOp list : deviceLists) {
        Type u = UnrankedMemRefType::get(b.getI64Type(), nullptr);
        func::FuncOp prepare = getOrInsertRuntimeFunction(
            b, module, "soaprt_prepare_group", b.getFunctionType({u}, {}),
            /*cInterface=*/true);
        Value devices = memref::GetGlobalOp::create(b, loc, list.getType(),
                                                    list.getSymName());
        func::CallOp::create(b, loc, prepare,
                             ValueRange{memref::CastOp::create(b, loc, u,
                                                               devices)});
      }
      forThisRank([&](int64_t r) {
        for (auto [i, buffer] : llvm::enumerate(getGlobals(r))) {
          bindRegion(r, i);
          bind("soaprt_bind_input", i, buffer);
        }
      });
      // soaprt_input_parts(i, [device, offsets..., sizes...]...): where the
      // ranks' valid parts of input i are once the program updated it
      // (soap.held_parts), the same on every rank.
      for (auto [r, parts] : llvm::enumerate(heldParts))
        if (parts)
          callWithList(
              "soaprt_input_parts", *updatedInput[r],
              (kHeldPartsGlobalPrefix + "_" + Twine(*updatedInput[r])).str(),
              parts.asArrayRef());
      // soaprt_input_initial(i, whole initial value): what main() fills
      // input i with (this rank's part of it) when given no data for it.
      for (auto [i, value] : llvm::enumerate(initialValues)) {
        if (!value)
          continue;
        auto valueType = cast<ShapedType>(value.getType());
        auto globalType = MemRefType::get(valueType.getShape(),
                                          valueType.getElementType());
        std::string name =
            (kInitialValueGlobalPrefix + "_" + Twine(i)).str();
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(module.getBody());
          memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"),
                                   globalType, value, /*constant=*/true,
                                   /*alignment=*/b.getI64IntegerAttr(64));
        }
        bind("soaprt_input_initial", i,
             memref::GetGlobalOp::create(b, loc, globalType, name));
      }
      // soaprt_input_random_range(i, low, high): where --random-inputs
      // draws input i's values from.
      for (auto [i, range] : llvm::enumerate(randomRanges)) {
        if (!range)
          continue;
        Type f64 = b.getF64Type();
        func::FuncOp callee = getOrInsertRuntimeFunction(
            b, module, "soaprt_input_random_range",
            b.getFunctionType({i64, f64, f64}, {}), /*cInterface=*/false);
        func::CallOp::create(
            b, loc, callee,
            ValueRange{i64Constant(i),
                       arith::ConstantFloatOp::create(
                           b, loc, cast<FloatType>(f64), APFloat(range[0])),
                       arith::ConstantFloatOp::create(
                           b, loc, cast<FloatType>(f64), APFloat(range[1]))});
      }
      func::ReturnOp::create(b, loc);
    }

    // soap_main(): run the model once, bind every result.
    auto main =
        func::FuncOp::create(b, loc, "soap_main", b.getFunctionType({}, {}));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(main.addEntryBlock());
      forThisRank([&](int64_t r) {
        auto call = func::CallOp::create(b, loc, rankFunctions[r], getGlobals(r));
        int64_t output = 0;
        unsigned next = 0;
        for (unsigned i = 0; i < type.getNumResults(); ++i) {
          if (inArgument[r].test(i))
            bind("soaprt_update_input", *updatedInput[i],
                 call.getOperand(*updatedInput[i]));
          else if (updatedInput[i])
            bind("soaprt_update_input", *updatedInput[i],
                 call.getResult(next++));
          else
            bind("soaprt_bind_output", output++, call.getResult(next++));
        }
      });
      func::ReturnOp::create(b, loc);
    }
    for (func::FuncOp func : rankFunctions) {
      func->setAttr(kModelFunctionAttrName, b.getUnitAttr());
      // soap_main is the only caller and passes each argument its own
      // global: no two arguments share memory (alias analyses, such as
      // soap-cuda-fuse-parallel-loops', may rely on it).
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (isa<MemRefType>(func.getArgument(i).getType()))
          func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                          UnitAttr::get(func.getContext()));
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        func.removeResultAttr(
            i, StringAttr::get(func.getContext(),
                               SOAPDialect::kUpdatesInputAttrName));
        func.removeResultAttr(
            i, StringAttr::get(func.getContext(),
                               SOAPDialect::kRegionOffsetsAttrName));
        func.removeResultAttr(i,
                              StringAttr::get(func.getContext(),
                                              SOAPDialect::kHeldPartsAttrName));
      }
      if (!perRank)
        continue;
      func->removeAttr(SOAPDialect::kRankFunctionAttrName);
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.removeArgAttr(i, SOAPDialect::kRegionOffsetsAttrName);
    }
    // soap_num_devices() now says what the machine did.
    module->removeAttr(SOAPDialect::kMachineAttrName);
    if (!perRank)
      entry->removeAttr(kCPUEntryAttrName);
  }
};
//===----------------------------------------------------------------------===//
// soap-cpu-loop-order
//===----------------------------------------------------------------------===//

/// Makes the loop that runs along the output's last (contiguous) dimension
/// the innermost one, keeping the other loops in order: a matmul's loops go
/// from (i, j, k) to (i, k, j), so the inner loop streams through rows of B
/// and C. Each output element still accumulates its reduction in the same
/// order, so results are bit-for-bit those of the original loop order.
struct CPULoopOrderPass
    : public PassWrapper<CPULoopOrderPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CPULoopOrderPass)

  StringRef getArgument() const final { return "soap-cpu-loop-order"; }
  StringRef getDescription() const final {
    return "Make the loop along the output's contiguous dimension the "
           "innermost loop of every linalg op (bitwise-identical results)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }

  /// The new loop order for `op`, or empty when it is fine as it is.
  static SmallVector<unsigned> desiredOrder(linalg::LinalgOp op) {
    if (op.getNumDpsInits() != 1 || op.getNumLoops() < 2)
      return {};
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (map.getNumResults() == 0)
      return {};
    auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
    unsigned last = op.getNumLoops() - 1;
    if (!dim || dim.getPosition() == last ||
        op.getIteratorTypesArray()[dim.getPosition()] !=
            utils::IteratorType::parallel)
      return {};
    SmallVector<unsigned> order;
    for (unsigned i = 0; i <= last; ++i)
      if (i != dim.getPosition())
        order.push_back(i);
    order.push_back(dim.getPosition());
    return order;
  }

  void runOnOperation() override {
    reorderLinalgLoops(getOperation(), desiredOrder);
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// The pipeline
//===----------------------------------------------------------------------===//

std::unique_ptr<Pass> mlir::soap::createCPUPreparePass(std::string entry,
                                                      std::string target) {
  return std::make_unique<CPUPreparePass>(std::move(entry), std::move(target));
}

std::unique_ptr<Pass> mlir::soap::createCPUEntryPass() {
  return std::make_unique<CPUEntryPass>();
}

void mlir::soap::buildRankFunctionsPipeline(OpPassManager &pm,
                                            const std::string &entry,
                                            const std::string &target) {
  SpecializeRanksOptions ranks;
  ranks.entry = entry;
  pm.addPass(createSpecializeRanks(ranks));
  pm.addPass(createCPUPreparePass(entry, target));
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createBubbleUpSlices());
  pm.addPass(createCompactTensors());
  // Embedding lookups read one row, not the whole table.
  pm.addNestedPass<func::FuncOp>(createGatherLookups());
}

void mlir::soap::buildHostToLLVMPipeline(OpPassManager &pm,
                                         bool genericAllocation) {
  // One function per loop nest: LLVM's time grows faster than a function.
  pm.addPass(createOutlineLoopNests());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // bf16 (and f16 math) in f32, the conversions as integer bit operations:
  // LLVM would call compiler-rt's __truncsfbf2 for the rounding to bf16 on
  // x86 CPUs without AVX512-BF16 (--mcpu=x86-64-v3 and up), which libgcc
  // before GCC 13 does not have. The same arithmetic: LLVM computes bf16
  // and f16 ops in f32 and rounds each result too.
  pm.addPass(math::createMathExtendToSupportedTypes());
  pm.addPass(arith::createArithEmulateUnsupportedFloats(
      arith::ArithEmulateUnsupportedFloatsOptions{{"bf16"}, "f32"}));
  pm.addPass(arith::createArithExpandOpsPass(
      arith::ArithExpandOpsPassOptions{/*includeBf16=*/true}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // LLVM: math where LLVM has intrinsics, libm for the rest (tanh, erf, ...).
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = genericAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  // One body for the ranks that differ only in constants.
  pm.addPass(createMergeRankFunctions());
}

void mlir::soap::buildLowerToCPUPipeline(OpPassManager &pm,
                                         const LowerToCPUOptions &options) {
  // One function per rank (each tensor the size of what its rank touches),
  // then the checks and entry handling.
  buildRankFunctionsPipeline(pm, options.entry, "the CPU");

  // Tensors to buffers. Function boundaries get identity layouts, so that
  // the entry takes and returns plain contiguous buffers.
  pm.addPass(createBufferize());
  pm.addPass(createCPUEntryPass());
  buildDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createDeallocAfterLastUse());
  // Embedding gradients: atomic adds into the ids' rows.
  pm.addNestedPass<func::FuncOp>(createScatterLookupGradients());
  // Matmuls and convolutions as OpenBLAS calls.
  if (options.blas)
    pm.addPass(createCPULibraryCalls());

  // Loops.
  pm.addNestedPass<func::FuncOp>(std::make_unique<CPULoopOrderPass>());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createScalarAccumulators());
  buildHostToLLVMPipeline(pm, /*genericAllocation=*/false);
}

void mlir::soap::registerLowerToCPUPasses() {
  PassRegistration<CPUPreparePass>();
  PassRegistration<CPUEntryPass>();
  PassRegistration<CPULoopOrderPass>();
  PassPipelineRegistration<LowerToCPUOptions>(
      "soap-lower-to-cpu",
      "Lower a (partitioned) SOAP program to the LLVM dialect for the CPU "
      "(bufferize, libsoaprt calls, entry points, loops, LLVM)",
      buildLowerToCPUPipeline);
}

void mlir::soap::registerLowerToCPUDependencies(DialectRegistry &registry) {
  registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}
