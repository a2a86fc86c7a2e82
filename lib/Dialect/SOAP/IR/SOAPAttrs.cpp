//===- SOAPAttrs.cpp - SOAP attributes ------------------------------------===//

#include "soap/Dialect/SOAP/IR/SOAPAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"

#include <charconv>
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::soap;

#define GET_ATTRDEF_CLASSES
#include "soap/Dialect/SOAP/IR/SOAPAttrs.cpp.inc"

void SOAPDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "soap/Dialect/SOAP/IR/SOAPAttrs.cpp.inc"

#include <cmath>
      >();
}

//===----------------------------------------------------------------------===//
// MachineAttr
//===----------------------------------------------------------------------===//

LogicalResult
MachineAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    int64_t nodes, int64_t devicesPerNode,
                    APFloat peakTflops, APFloat memoryGbps,
                    APFloat memoryGib, APFloat intraGbps,
                    APFloat intraLatencyUs, APFloat interGbps,
                    APFloat interLatencyUs) {
  if (nodes < 1)
    return emitError() << "machine must have at least one node, got " << nodes;
  if (devicesPerNode < 1)
    return emitError() << "machine must have at least one device per node, got "
                       << devicesPerNode;
  // The device count (their product) must fit an int32_t.
  if (nodes > (1 << 15) || devicesPerNode > (1 << 15))
    return emitError() << "machine must have at most 32768 nodes and 32768 "
                          "devices per node, got "
                       << nodes << " x " << devicesPerNode;
  auto positive = [&](StringRef name, const APFloat &quantity) -> LogicalResult {
    double value = quantity.convertToDouble();
    if (value > 0 && std::isfinite(value))
      return success();
    return emitError() << "machine '" << name
                       << "' must be positive and finite, got " << value;
  };
  auto nonNegative = [&](StringRef name,
                         const APFloat &quantity) -> LogicalResult {
    double value = quantity.convertToDouble();
    if (value >= 0 && std::isfinite(value))
      return success();
    return emitError() << "machine '" << name
                       << "' must be finite and not negative, got " << value;
  };
  if (failed(positive("peak_tflops", peakTflops)) ||
      failed(positive("memory_gbps", memoryGbps)) ||
      failed(positive("memory_gib", memoryGib)) ||
      failed(positive("intra_gbps", intraGbps)) ||
      failed(positive("inter_gbps", interGbps)) ||
      failed(nonNegative("intra_latency_us", intraLatencyUs)) ||
      failed(nonNegative("inter_latency_us", interLatencyUs)))
    return failure();
  return success();
}

/// machine ::= `<` key `=` number (`,` key `=` number)* `>`, every key of the
/// attribute exactly once, in any order; numbers may be integers or floats.
Attribute MachineAttr::parse(AsmParser &parser, Type) {
  static constexpr StringLiteral kKeys[] = {
      "nodes",      "devices_per_node", "peak_tflops",
      "memory_gbps", "memory_gib",      "intra_gbps",
      "intra_latency_us", "inter_gbps", "inter_latency_us"};
  constexpr size_t kNumKeys = std::size(kKeys);
  double values[kNumKeys] = {};
  bool seen[kNumKeys] = {};
  if (parser.parseLess())
    return {};
  auto parseEntry = [&]() -> ParseResult {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    const auto *it = llvm::find(kKeys, key);
    if (it == std::end(kKeys))
      return parser.emitError(keyLoc) << "unknown machine key '" << key << "'";
    size_t index = it - std::begin(kKeys);
    if (seen[index])
      return parser.emitError(keyLoc) << "machine key '" << key
                                      << "' given twice";
    seen[index] = true;
    bool negative = succeeded(parser.parseOptionalMinus());
    double sign = negative ? -1.0 : 1.0;
    uint64_t integer = 0;
    OptionalParseResult isInteger = parser.parseOptionalInteger(integer);
    if (isInteger.has_value()) {
      if (failed(*isInteger))
        return failure();
      values[index] = sign * static_cast<double>(integer);
      return success();
    }
    if (index < 2)
      return parser.emitError(keyLoc)
             << "machine key '" << key << "' expects an integer";
    if (parser.parseFloat(values[index]))
      return failure();
    values[index] *= sign;
    return success();
  };
  if (parser.parseCommaSeparatedList(parseEntry) || parser.parseGreater())
    return {};
  for (size_t i = 0; i < kNumKeys; ++i)
    if (!seen[i]) {
      parser.emitError(parser.getNameLoc())
          << "machine is missing key '" << kKeys[i] << "'";
      return {};
    }
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), static_cast<int64_t>(values[0]),
                    static_cast<int64_t>(values[1]), APFloat(values[2]),
                    APFloat(values[3]), APFloat(values[4]), APFloat(values[5]),
                    APFloat(values[6]), APFloat(values[7]), APFloat(values[8]));
}

/// Prints a quantity in its shortest form that reads back exactly ("9.3",
/// "16").
static void printQuantity(AsmPrinter &printer, const APFloat &value) {
  char buffer[64];
  auto [end, error] =
      std::to_chars(buffer, buffer + sizeof(buffer), value.convertToDouble());
  StringRef str(buffer, error == std::errc() ? end - buffer : 0);
  // MLIR float literals need a '.' before any exponent.
  size_t exponent = str.find_first_of("eE");
  if (exponent != StringRef::npos && !str.take_front(exponent).contains('.'))
    printer << str.take_front(exponent) << ".0" << str.drop_front(exponent);
  else
    printer << str;
}

void MachineAttr::print(AsmPrinter &printer) const {
  printer << "<nodes = " << getNodes()
          << ", devices_per_node = " << getDevicesPerNode();
  auto entry = [&](StringRef key, const APFloat &value) {
    printer << ", " << key << " = ";
    printQuantity(printer, value);
  };
  entry("peak_tflops", getPeakTflops());
  entry("memory_gbps", getMemoryGbps());
  entry("memory_gib", getMemoryGib());
  entry("intra_gbps", getIntraGbps());
  entry("intra_latency_us", getIntraLatencyUs());
  entry("inter_gbps", getInterGbps());
  entry("inter_latency_us", getInterLatencyUs());
  printer << ">";
}

//===----------------------------------------------------------------------===//
// ParallelConfigAttr
//===----------------------------------------------------------------------===//

int64_t ParallelConfigAttr::getNumTiles() const {
  int64_t tiles = 1;
  for (int64_t degree : getDegrees())
    tiles *= degree;
  return tiles;
}

int64_t ParallelConfigAttr::getDeviceOfTile(int64_t tile) const {
  if (hasExplicitDevices())
    return getDevices()[tile];
  return getStart() + tile * getStride();
}

SmallVector<int64_t> ParallelConfigAttr::getTileDevices() const {
  SmallVector<int64_t> devices;
  int64_t tiles = getNumTiles();
  devices.reserve(tiles);
  for (int64_t tile = 0; tile < tiles; ++tile)
    devices.push_back(getDeviceOfTile(tile));
  return devices;
}

LogicalResult
ParallelConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           ArrayRef<int64_t> degrees, int64_t start,
                           int64_t stride, ArrayRef<int64_t> devices) {
  if (degrees.empty())
    return emitError() << "config needs at least one partition degree";
  int64_t tiles = 1;
  for (auto [loop, degree] : llvm::enumerate(degrees)) {
    if (degree < 1)
      return emitError() << "partition degree of loop #" << loop
                         << " must be positive, got " << degree;
    tiles *= degree;
  }
  if (start < 0)
    return emitError() << "first device of the view must not be negative, got "
                       << start;
  if (stride < 1)
    return emitError() << "device stride of the view must be positive, got "
                       << stride;
  if (devices.empty())
    return success();
  if (start != 0 || stride != 1)
    return emitError() << "a config gives either a view (start, stride) or an "
                          "explicit device list, not both";
  if (static_cast<int64_t>(devices.size()) != tiles)
    return emitError() << "expected " << tiles
                       << " devices (one per tile: the product of the "
                          "degrees), got "
                       << devices.size();
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t device : devices) {
    if (device < 0)
      return emitError() << "device ids must not be negative, got " << device;
    if (!seen.insert(device).second)
      return emitError() << "device " << device
                         << " appears more than once in the device list";
  }
  return success();
}

/// config ::= `<` `degrees` `=` int-list (`,` `start` `=` int)?
///            (`,` `stride` `=` int)? (`,` `devices` `=` int-list)? `>`
Attribute ParallelConfigAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> degrees, devices;
  int64_t start = 0, stride = 1;
  auto parseIntList = [&](SmallVectorImpl<int64_t> &list) {
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square,
        [&]() { return parser.parseInteger(list.emplace_back()); });
  };
  if (parser.parseLess() || parser.parseKeyword("degrees") ||
      parser.parseEqual() || parseIntList(degrees))
    return {};
  bool seenStart = false, seenStride = false, seenDevices = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    auto duplicate = [&](bool &seen) {
      if (seen) {
        parser.emitError(keyLoc) << "'" << key << "' given twice";
        return true;
      }
      seen = true;
      return false;
    };
    if (key == "start") {
      if (duplicate(seenStart) || parser.parseInteger(start))
        return {};
    } else if (key == "stride") {
      if (duplicate(seenStride) || parser.parseInteger(stride))
        return {};
    } else if (key == "devices") {
      if (duplicate(seenDevices) || parseIntList(devices))
        return {};
    } else {
      parser.emitError(keyLoc)
          << "unknown config key '" << key
          << "' (expected 'start', 'stride' or 'devices')";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), degrees, start, stride, devices);
}

void ParallelConfigAttr::print(AsmPrinter &printer) const {
  printer << "<degrees = [";
  llvm::interleaveComma(getDegrees(), printer);
  printer << "]";
  if (hasExplicitDevices()) {
    printer << ", devices = [";
    llvm::interleaveComma(getDevices(), printer);
    printer << "]";
  } else {
    if (getStart() != 0)
      printer << ", start = " << getStart();
    if (getStride() != 1)
      printer << ", stride = " << getStride();
  }
  printer << ">";
}
