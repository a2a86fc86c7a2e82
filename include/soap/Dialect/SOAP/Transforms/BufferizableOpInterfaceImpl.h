//===- BufferizableOpInterfaceImpl.h - SOAP ops bufferization ---*- C++ -*-===//
//
// soap.transfer and soap.all_reduce bufferize in place: the operand is read
// and written, the result is the operand's buffer. Bufferization emits the
// libsoaprt calls (include/soap/Runtime/soaprt.h) on a memref.subview of the
// region, cast to an unranked memref:
//
//   func.call @soaprt_transfer_f32(%region, %dtype, %from, %to)
//   func.call @soaprt_all_reduce_f32(%region, %dtype, %kind, %devices)
//
// (one entry per element type, see getRuntimeFunctionName).
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_DIALECT_SOAP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define SOAP_DIALECT_SOAP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir {
class DialectRegistry;
class OpBuilder;

namespace soap {

void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

/// soap.all_reduce's device list is a constant i64 memref.global whose name
/// starts with this prefix (one per distinct list: "__soap_devices_0_1").
/// It stays in host memory on every target: libsoaprt reads it.
inline constexpr llvm::StringLiteral kDeviceListGlobalPrefix =
    "__soap_devices";

/// Where an input's part on a rank lies in the whole input: a constant i64
/// memref.global (whole sizes, then offsets) per input and rank
/// ("__soap_region_3_rank1") that soap_setup passes to soaprt_input_region.
/// Host memory on every target, like the device lists.
inline constexpr llvm::StringLiteral kInputRegionGlobalPrefix =
    "__soap_region";

/// An input's initial value (a weight lifted from a constant): a constant
/// memref.global of the whole input ("__soap_initial_3") that soap_setup
/// passes to soaprt_input_initial. Host memory on every target: libsoaprt
/// copies each rank's part into the input once.
inline constexpr llvm::StringLiteral kInitialValueGlobalPrefix =
    "__soap_initial";

/// Where the valid parts of an input updated in place are on each rank
/// (soap.held_parts): a constant i64 memref.global per input
/// ("__soap_held_parts_3") that soap_setup passes to soaprt_input_parts.
/// Host memory on every target.
inline constexpr llvm::StringLiteral kHeldPartsGlobalPrefix =
    "__soap_held_parts";

/// The libsoaprt element type code (soaprt_dtype_t) of `type`, or failure.
FailureOr<int64_t> getRuntimeDTypeCode(Type type);

/// The name of a libsoaprt entry for `type`: `base` + "_" + f32 | f64 | i32 |
/// i64 | i8 | i16 | i1 | f16 | bf16. An unranked memref's type includes its
/// element type, so every tensor-taking entry exists once per element type
/// (soaprt_transfer_f32, ...). `type` must have a dtype code.
std::string getRuntimeFunctionName(StringRef base, Type type);

/// The libsoaprt communication calls bufferization emits.
enum class RuntimeCommunication {
  Transfer,
  AllReduce,
  ReduceScatter,
  AllGather
};

/// Which libsoaprt communication `call` is (soaprt_transfer_<T>,
/// soaprt_all_reduce_<T>, soaprt_reduce_scatter_<T>, soaprt_all_gather_<T>),
/// if it is one. Its first operand is the region
/// (an unranked cast of a memref.subview): the only memory it reads and
/// writes.
std::optional<RuntimeCommunication> matchRuntimeCommunication(func::CallOp call);

/// Declares (once) the private runtime function `name` in `module`; with
/// `cInterface` it gets `llvm.emit_c_interface` (memref arguments reach C as
/// descriptor pointers, `_mlir_ciface_<name>`).
func::FuncOp getOrInsertRuntimeFunction(OpBuilder &builder, ModuleOp module,
                                        StringRef name, FunctionType type,
                                        bool cInterface);

} // namespace soap
} // namespace mlir

#endif // SOAP_DIALECT_SOAP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
