//===- SOAPDialect.cpp - SOAP dialect and its attribute verifiers ---------===//

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "soap/Analysis/IterationSpace.h"
#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"
#include "soap/Dialect/SOAP/IR/SOAPOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace mlir::soap;

#include "soap/Dialect/SOAP/IR/SOAPDialect.cpp.inc"

void SOAPDialect::initialize() {
  registerAttributes();
  registerOps();
}

/// The machine in effect for `op`: the `soap.machine` of the nearest ancestor
/// (or of `op` itself) that has one.
static MachineAttr findMachine(Operation *op) {
  for (Operation *cur = op; cur; cur = cur->getParentOp())
    if (auto machine = cur->getAttrOfType<MachineAttr>(
            SOAPDialect::kMachineAttrName))
      return machine;
  return {};
}

int64_t SOAPDialect::getNumDevices(Operation *op) {
  MachineAttr machine = findMachine(op);
  return machine ? machine.getNumDevices() : 1;
}

/// Checks a `soap.config` against the op it annotates and the machine.
static LogicalResult verifyConfig(Operation *op, ParallelConfigAttr config) {
  FailureOr<IterationSpace> space = getIterationSpace(op);
  if (failed(space))
    return op->emitOpError()
           << "carries '" << SOAPDialect::kConfigAttrName
           << "' but has no iteration space (needs a linalg op or "
              "TilingInterface)";
  ArrayRef<int64_t> degrees = config.getDegrees();
  if (static_cast<int64_t>(degrees.size()) != space->getNumLoops())
    return op->emitOpError() << "has " << space->getNumLoops()
                             << " loops but its config gives "
                             << degrees.size() << " partition degrees";
  for (auto [loop, degree] : llvm::enumerate(degrees)) {
    int64_t extent = space->extents[loop];
    if (ShapedType::isDynamic(extent)) {
      if (degree != 1)
        return op->emitOpError() << "loop #" << loop
                                 << " has a dynamic extent and cannot be "
                                    "partitioned (degree "
                                 << degree << ")";
      continue;
    }
    if (extent % degree != 0)
      return op->emitOpError()
             << "partition degree " << degree << " of loop #" << loop << " ("
             << loopKindName(space->kinds[loop])
             << ") does not divide its extent " << extent;
  }
  if (MachineAttr machine = findMachine(op)) {
    int64_t numDevices = machine.getNumDevices();
    if (config.getNumTiles() > numDevices)
      return op->emitOpError()
             << "config has " << config.getNumTiles()
             << " tiles but the machine has only " << numDevices << " devices";
    for (auto [tile, device] : llvm::enumerate(config.getTileDevices()))
      if (device >= numDevices)
        return op->emitOpError()
               << "tile #" << tile << " is placed on device " << device
               << ", beyond the machine's " << numDevices << " devices";
  }
  return success();
}

LogicalResult SOAPDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == kConfigAttrName) {
    auto config = dyn_cast<ParallelConfigAttr>(attr.getValue());
    if (!config)
      return op->emitOpError() << "'" << kConfigAttrName
                               << "' must be a #soap.config attribute";
    return verifyConfig(op, config);
  }
  if (attr.getName() == kMachineAttrName) {
    if (!isa<MachineAttr>(attr.getValue()))
      return op->emitOpError() << "'" << kMachineAttrName
                               << "' must be a #soap.machine attribute";
    return success();
  }
  if (attr.getName() == kNameAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << kNameAttrName
                               << "' must be a string attribute";
    return success();
  }
  if (attr.getName() == kRecomputeAttrName ||
      attr.getName() == kRecomputedAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << attr.getName().getValue()
                               << "' must be a unit attribute";
    // On tensors (before bufferization, which leaves the attribute on
    // ops without results) a recomputed op has no memory effects.
    if (op->getNumResults() != 0 && !isMemoryEffectFree(op))
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' needs an op without memory effects (it is computed "
                "again)";
    return success();
  }
  if (attr.getName() == kRankFunctionAttrName) {
    if (!isa<IntegerAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitOpError() << "'" << kRankFunctionAttrName
                               << "' must be an integer attribute on a "
                                  "function";
    return success();
  }
  return op->emitOpError() << "has unknown SOAP attribute '" << attr.getName().getValue()
                           << "'";
}

/// A `soap.region_offsets` value for a value of type `type`: one
/// non-negative offset per dimension of a ranked shaped type.
static bool isRegionOffsets(Attribute value, Type type) {
  auto offsets = dyn_cast<DenseI64ArrayAttr>(value);
  auto shaped = dyn_cast_or_null<ShapedType>(type);
  return offsets && shaped && shaped.hasRank() &&
         offsets.size() == shaped.getRank() &&
         llvm::none_of(offsets.asArrayRef(), [](int64_t o) { return o < 0; });
}

LogicalResult SOAPDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() == kParameterAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "argument #" << argIndex << ": '"
                               << kParameterAttrName
                               << "' must be a unit attribute";
    Region &region = op->getRegion(regionIndex);
    if (!region.empty()) {
      Type type = region.getArgument(argIndex).getType();
      if (!isa<RankedTensorType>(type))
        return op->emitOpError()
               << "argument #" << argIndex << " is marked '"
               << kParameterAttrName << "' but is not a ranked tensor ("
               << type << ")";
    }
    return success();
  }
  if (attr.getName() == kInitialValueAttrName) {
    auto value = dyn_cast<ElementsAttr>(attr.getValue());
    if (!value)
      return op->emitOpError() << "argument #" << argIndex << ": '"
                               << kInitialValueAttrName
                               << "' must be an elements attribute";
    Region &region = op->getRegion(regionIndex);
    if (region.empty())
      return success();
    auto shaped = dyn_cast<ShapedType>(region.getArgument(argIndex).getType());
    ShapedType valueType = value.getShapedType();
    // A region of the whole argument (soap-compact-tensors) is no larger.
    bool isRegion = false;
    if (auto func = dyn_cast<FunctionOpInterface>(op))
      isRegion = static_cast<bool>(
          func.getArgAttr(argIndex, kRegionOffsetsAttrName));
    bool fits = shaped && shaped.hasRank() &&
                shaped.getElementType() == valueType.getElementType() &&
                shaped.getRank() == valueType.getRank();
    for (int64_t d = 0; fits && d < valueType.getRank(); ++d)
      fits = isRegion ? shaped.getDimSize(d) <= valueType.getDimSize(d)
                      : shaped.getDimSize(d) == valueType.getDimSize(d);
    if (!fits)
      return op->emitOpError()
             << "argument #" << argIndex << ": '" << kInitialValueAttrName
             << "' of type " << valueType << " does not fit the argument ("
             << region.getArgument(argIndex).getType() << ")";
    return success();
  }
  if (attr.getName() == kRegionOffsetsAttrName) {
    Region &region = op->getRegion(regionIndex);
    if (!isRegionOffsets(attr.getValue(),
                         region.empty() ? Type()
                                        : region.getArgument(argIndex).getType()))
      return op->emitOpError()
             << "argument #" << argIndex << ": '" << kRegionOffsetsAttrName
             << "' must be an array of one non-negative offset per dimension "
                "of a shaped argument";
    return success();
  }
  if (attr.getName() == kRandomRangeAttrName) {
    auto range = dyn_cast<DenseF64ArrayAttr>(attr.getValue());
    if (!range || range.size() != 2 || !std::isfinite(range[0]) ||
        !std::isfinite(range[1]) || !(range[0] < range[1]))
      return op->emitOpError()
             << "argument #" << argIndex << ": '" << kRandomRangeAttrName
             << "' must be array<f64: low, high> with finite low < high";
    Region &region = op->getRegion(regionIndex);
    if (region.empty())
      return success();
    Type type = region.getArgument(argIndex).getType();
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.getElementType().isIntOrFloat())
      return op->emitOpError()
             << "argument #" << argIndex << " has a '" << kRandomRangeAttrName
             << "' but is not a tensor or memref of numbers (" << type << ")";
    return success();
  }
  return op->emitOpError() << "argument #" << argIndex
                           << " has unknown SOAP attribute '"
                           << attr.getName().getValue()
                           << "'";
}

LogicalResult SOAPDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() == kRegionOffsetsAttrName) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!isRegionOffsets(attr.getValue(),
                         func ? func.getResultTypes()[resultIndex] : Type()))
      return op->emitOpError()
             << "result #" << resultIndex << ": '" << kRegionOffsetsAttrName
             << "' must be an array of one non-negative offset per dimension "
                "of a shaped result";
    return success();
  }
  if (attr.getName() == kHeldPartsAttrName) {
    auto parts = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto shaped = func
                      ? dyn_cast<ShapedType>(func.getResultTypes()[resultIndex])
                      : ShapedType();
    auto bad = [&]() {
      return op->emitOpError()
             << "result #" << resultIndex << ": '" << kHeldPartsAttrName
             << "' must list parts of the result (per part a device, then "
                "an offset and a size per dimension, within the result) "
                "beside '"
             << kUpdatesInputAttrName << "'";
    };
    if (!parts || !shaped || !shaped.hasStaticShape() ||
        !func.getResultAttr(resultIndex, kUpdatesInputAttrName))
      return bad();
    int64_t rank = shaped.getRank();
    ArrayRef<int64_t> values = parts.asArrayRef();
    if (values.empty() || values.size() % (1 + 2 * rank) != 0)
      return bad();
    // A rank function's result may be a part: the parts are in the
    // entry's coordinates.
    bool part = op->hasAttr(kRankFunctionAttrName);
    for (size_t at = 0; at < values.size(); at += 1 + 2 * rank) {
      if (values[at] < 0)
        return bad();
      for (int64_t d = 0; d < rank; ++d) {
        int64_t offset = values[at + 1 + d], size = values[at + 1 + rank + d];
        if (offset < 0 || size < 0 ||
            (!part && offset + size > shaped.getDimSize(d)))
          return bad();
      }
    }
    return success();
  }
  if (attr.getName() != kUpdatesInputAttrName)
    return op->emitOpError() << "result #" << resultIndex
                             << " has unknown SOAP attribute '"
                             << attr.getName().getValue() << "'";
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!index || !func)
    return op->emitOpError() << "result #" << resultIndex << ": '"
                             << kUpdatesInputAttrName
                             << "' must be an integer attribute on a "
                                "function result";
  ArrayRef<Type> args = func.getArgumentTypes();
  int64_t i = index.getInt();
  if (i < 0 || i >= static_cast<int64_t>(args.size()))
    return op->emitOpError() << "result #" << resultIndex << ": '"
                             << kUpdatesInputAttrName << "' names argument #"
                             << i << " but the function has " << args.size()
                             << " arguments";
  // A rank function's argument and result may each be a part of the
  // entry's (soap-compact-tensors): same rank and element type only.
  Type result = func.getResultTypes()[resultIndex];
  auto argShaped = dyn_cast<ShapedType>(args[i]);
  auto resultShaped = dyn_cast<ShapedType>(result);
  bool part = op->hasAttr(kRankFunctionAttrName);
  if (!argShaped || !resultShaped || !argShaped.hasRank() ||
      !resultShaped.hasRank() ||
      argShaped.getRank() != resultShaped.getRank() ||
      (!part && argShaped.getShape() != resultShaped.getShape()) ||
      argShaped.getElementType() != resultShaped.getElementType())
    return op->emitOpError() << "result #" << resultIndex << " (" << result
                             << ") updates argument #" << i << " ("
                             << args[i] << ") but their shapes or element "
                                          "types differ";
  return success();
}
