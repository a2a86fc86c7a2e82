//===- BufferizableOpInterfaceImpl.cpp - SOAP ops bufferization -----------===//

#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Dialect/SOAP/IR/SOAPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::soap;

FailureOr<int64_t> mlir::soap::getRuntimeDTypeCode(Type type) {
  // Keep in sync with soaprt_dtype_t (include/soap/Runtime/soaprt.h).
  if (type.isF32())
    return 0;
  if (type.isF64())
    return 1;
  if (type.isInteger(32))
    return 2;
  if (type.isInteger(64))
    return 3;
  if (type.isInteger(8))
    return 4;
  if (type.isInteger(16))
    return 5;
  if (type.isInteger(1))
    return 6;
  if (type.isF16())
    return 7;
  if (type.isBF16())
    return 8;
  return failure();
}

/// The suffixes of the per-element-type entries, by dtype code.
static const char *const kDTypeSuffixes[] = {"f32", "f64", "i32", "i64", "i8",
                                             "i16", "i1",  "f16", "bf16"};

std::string mlir::soap::getRuntimeFunctionName(StringRef base, Type type) {
  FailureOr<int64_t> code = getRuntimeDTypeCode(type);
  assert(succeeded(code) && "type without a libsoaprt dtype");
  return (base + "_" + kDTypeSuffixes[*code]).str();
}

std::optional<RuntimeCommunication>
mlir::soap::matchRuntimeCommunication(func::CallOp call) {
  StringRef callee = call.getCallee();
  auto isEntryOf = [&](StringRef base) {
    StringRef suffix = callee;
    if (!suffix.consume_front(base) || !suffix.consume_front("_"))
      return false;
    return llvm::is_contained(kDTypeSuffixes, suffix);
  };
  if (call->getNumOperands() == 0)
    return std::nullopt;
  if (isEntryOf("soaprt_transfer"))
    return RuntimeCommunication::Transfer;
  if (isEntryOf("soaprt_all_reduce"))
    return RuntimeCommunication::AllReduce;
  if (isEntryOf("soaprt_reduce_scatter"))
    return RuntimeCommunication::ReduceScatter;
  if (isEntryOf("soaprt_all_gather"))
    return RuntimeCommunication::AllGather;
  return std::nullopt;
}

func::FuncOp mlir::soap::getOrInsertRuntimeFunction(OpBuilder &builder,
                                                    ModuleOp module,
                                                    StringRef name,
                                                    FunctionType type,
                                                    bool cInterface) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  auto func = func::FuncOp::create(builder, module.getLoc(), name, type);
  func.setPrivate();
  if (cInterface)
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  builder.getUnitAttr());
  return func;
}

namespace {

/// The memref.subview of the op's region in `buffer`, as an unranked memref.
static Value regionAsUnranked(RewriterBase &rewriter, Location loc,
                              Value buffer, ArrayRef<int64_t> offsets,
                              ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(offsets.size(), 1);
  Value region = memref::SubViewOp::create(rewriter, loc, buffer, offsets,
                                           sizes, strides);
  auto type = cast<MemRefType>(region.getType());
  return memref::CastOp::create(
      rewriter, loc,
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
      region);
}

static Value i64Constant(RewriterBase &rewriter, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(rewriter, loc, value, 64);
}

/// A constant global holding the device list, as an unranked i64 memref.
static Value devicesAsUnranked(RewriterBase &rewriter, Location loc,
                               ModuleOp module, ArrayRef<int64_t> devices) {
  std::string name = kDeviceListGlobalPrefix.str();
  for (int64_t d : devices)
    name += "_" + std::to_string(d);
  auto type = MemRefType::get({static_cast<int64_t>(devices.size())},
                              rewriter.getI64Type());
  if (!module.lookupSymbol<memref::GlobalOp>(name)) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    auto tensorType = RankedTensorType::get(type.getShape(),
                                            rewriter.getI64Type());
    memref::GlobalOp::create(
        rewriter, loc, name, rewriter.getStringAttr("private"), type,
        DenseIntElementsAttr::get(tensorType, devices), /*constant=*/true,
        /*alignment=*/IntegerAttr());
  }
  Value global = memref::GetGlobalOp::create(rewriter, loc, type, name);
  return memref::CastOp::create(
      rewriter, loc, UnrankedMemRefType::get(rewriter.getI64Type(), nullptr),
      global);
}

/// Shared by the communication ops: in place, operand read and written.
template <typename ConcreteModel, typename ConcreteOp>
struct InPlaceCommModel
    : public BufferizableOpInterface::ExternalModel<ConcreteModel,
                                                    ConcreteOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }
  bool resultBufferizesToMemoryWrite(Operation *, OpResult,
                                     const AnalysisState &) const {
    return true;
  }

  /// Replaces `op` by the call `base`_<T>(region, dtype, scalars...,
  /// [devices]) on its buffer (libsoaprt works in place).
  static LogicalResult lower(Operation *op, RewriterBase &rewriter,
                             const BufferizationOptions &options,
                             BufferizationState &state, StringRef base,
                             ArrayRef<int64_t> scalars,
                             std::optional<ArrayRef<int64_t>> devices) {
    ConcreteOp comm = cast<ConcreteOp>(op);
    auto module = op->getParentOfType<ModuleOp>();
    if (!module)
      return op->emitOpError("must be inside a module to be bufferized");
    Type elementType = comm.getInput().getType().getElementType();
    FailureOr<int64_t> code = getRuntimeDTypeCode(elementType);
    if (failed(code))
      return op->emitOpError("cannot be lowered to libsoaprt: element type ")
             << elementType << " is not supported";
    FailureOr<Value> buffer =
        getBuffer(rewriter, comm.getInput(), options, state);
    if (failed(buffer))
      return failure();
    Location loc = op->getLoc();
    SmallVector<Value> args{regionAsUnranked(rewriter, loc, *buffer,
                                             comm.getOffsets(),
                                             comm.getSizes()),
                            i64Constant(rewriter, loc, *code)};
    for (int64_t scalar : scalars)
      args.push_back(i64Constant(rewriter, loc, scalar));
    if (devices)
      args.push_back(devicesAsUnranked(rewriter, loc, module, *devices));
    func::FuncOp callee = getOrInsertRuntimeFunction(
        rewriter, module, getRuntimeFunctionName(base, elementType),
        rewriter.getFunctionType(ValueRange(args).getTypes(), {}),
        /*cInterface=*/true);
    func::CallOp::create(rewriter, loc, callee, args);
    replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};

/// soaprt_transfer_<T>(region, dtype, from, to).
struct TransferOpModel : public InPlaceCommModel<TransferOpModel, TransferOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto transfer = cast<TransferOp>(op);
    return lower(op, rewriter, options, state, "soaprt_transfer",
                 {static_cast<int64_t>(transfer.getFrom()),
                  static_cast<int64_t>(transfer.getTo())},
                 std::nullopt);
  }
};

/// soaprt_all_reduce_<T>(region, dtype, kind, devices); soaprt_reduction_t
/// has the values of soap::ReductionKind.
struct AllReduceOpModel
    : public InPlaceCommModel<AllReduceOpModel, AllReduceOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto allReduce = cast<AllReduceOp>(op);
    return lower(op, rewriter, options, state, "soaprt_all_reduce",
                 {static_cast<int64_t>(allReduce.getKind())},
                 allReduce.getDevices());
  }
};

/// soaprt_reduce_scatter_<T>(region, dtype, kind, dim, devices).
struct ReduceScatterOpModel
    : public InPlaceCommModel<ReduceScatterOpModel, ReduceScatterOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto scatter = cast<ReduceScatterOp>(op);
    return lower(op, rewriter, options, state, "soaprt_reduce_scatter",
                 {static_cast<int64_t>(scatter.getKind()),
                  static_cast<int64_t>(scatter.getDim())},
                 scatter.getDevices());
  }
};

/// soaprt_all_gather_<T>(region, dtype, dim, devices).
struct AllGatherOpModel
    : public InPlaceCommModel<AllGatherOpModel, AllGatherOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto gather = cast<AllGatherOp>(op);
    return lower(op, rewriter, options, state, "soaprt_all_gather",
                 {static_cast<int64_t>(gather.getDim())}, gather.getDevices());
  }
};

} // namespace

void mlir::soap::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, SOAPDialect *) {
    TransferOp::attachInterface<TransferOpModel>(*ctx);
    AllReduceOp::attachInterface<AllReduceOpModel>(*ctx);
    ReduceScatterOp::attachInterface<ReduceScatterOpModel>(*ctx);
    AllGatherOp::attachInterface<AllGatherOpModel>(*ctx);
    ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                     memref::MemRefDialect>();
  });
}
