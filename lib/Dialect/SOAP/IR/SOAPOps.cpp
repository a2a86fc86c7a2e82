//===- SOAPOps.cpp - SOAP communication operations ------------------------===//

#include "soap/Dialect/SOAP/IR/SOAPOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::soap;

#include "soap/Dialect/SOAP/IR/SOAPEnums.cpp.inc"

#define GET_OP_CLASSES
#include "soap/Dialect/SOAP/IR/SOAPOps.cpp.inc"

void SOAPDialect::registerOps() {
  addOperations<
#define GET_OP_LIST
#include "soap/Dialect/SOAP/IR/SOAPOps.cpp.inc"
      >();
}

/// The region must have one offset and size per dimension and lie inside the
/// tensor.
static LogicalResult verifyRegion(Operation *op, RankedTensorType type,
                                  ArrayRef<int64_t> offsets,
                                  ArrayRef<int64_t> sizes) {
  if (!type.hasStaticShape())
    return op->emitOpError() << "needs a statically shaped tensor, got "
                             << type;
  if (static_cast<int64_t>(offsets.size()) != type.getRank() ||
      static_cast<int64_t>(sizes.size()) != type.getRank())
    return op->emitOpError()
           << "region has " << offsets.size() << " offsets and "
           << sizes.size() << " sizes for a tensor of rank " << type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (offsets[d] < 0 || sizes[d] < 0 ||
        offsets[d] + sizes[d] > type.getDimSize(d))
      return op->emitOpError()
             << "region [" << offsets[d] << ", " << offsets[d] + sizes[d]
             << ") of dimension " << d << " is outside the tensor's extent "
             << type.getDimSize(d);
  return success();
}

static int64_t volume(ArrayRef<int64_t> sizes) {
  int64_t v = 1;
  for (int64_t s : sizes)
    v *= s;
  return v;
}

int64_t TransferOp::getRegionVolume() { return volume(getSizes()); }
int64_t AllReduceOp::getRegionVolume() { return volume(getSizes()); }
int64_t ReduceScatterOp::getRegionVolume() { return volume(getSizes()); }
int64_t AllGatherOp::getRegionVolume() { return volume(getSizes()); }

LogicalResult TransferOp::verify() {
  int64_t from = static_cast<int64_t>(getFrom());
  int64_t to = static_cast<int64_t>(getTo());
  if (from < 0 || to < 0)
    return emitOpError() << "device ids must not be negative";
  if (from == to)
    return emitOpError() << "sends from device " << from << " to itself";
  return verifyRegion(*this, getInput().getType(), getOffsets(), getSizes());
}

OpFoldResult TransferOp::fold(FoldAdaptor) {
  // Moving nothing changes nothing.
  if (getRegionVolume() == 0)
    return getInput();
  return {};
}

/// A group: at least one device, none negative, none twice.
static LogicalResult verifyGroup(Operation *op, ArrayRef<int64_t> devices) {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t device : devices) {
    if (device < 0)
      return op->emitOpError() << "device ids must not be negative";
    if (!seen.insert(device).second)
      return op->emitOpError()
             << "device " << device << " appears more than once in the group";
  }
  if (devices.empty())
    return op->emitOpError() << "needs at least one device";
  return success();
}

/// The region is cut along `dim` into one equal chunk per device.
static LogicalResult verifyChunks(Operation *op, RankedTensorType type,
                                  ArrayRef<int64_t> offsets,
                                  ArrayRef<int64_t> sizes, int64_t dim,
                                  ArrayRef<int64_t> devices) {
  if (failed(verifyGroup(op, devices)) ||
      failed(verifyRegion(op, type, offsets, sizes)))
    return failure();
  if (dim < 0 || dim >= type.getRank())
    return op->emitOpError()
           << "dimension " << dim << " is not one of the tensor's "
           << type.getRank();
  int64_t parts = static_cast<int64_t>(devices.size());
  if (sizes[dim] % parts != 0)
    return op->emitOpError()
           << "region size " << sizes[dim] << " along dimension " << dim
           << " does not split into " << parts << " equal chunks";
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroup(*this, getDevices())))
    return failure();
  return verifyRegion(*this, getInput().getType(), getOffsets(), getSizes());
}

OpFoldResult AllReduceOp::fold(FoldAdaptor) {
  // A group of one, or an empty region, combines nothing.
  if (getDevices().size() == 1 || getRegionVolume() == 0)
    return getInput();
  return {};
}

LogicalResult ReduceScatterOp::verify() {
  return verifyChunks(*this, getInput().getType(), getOffsets(), getSizes(),
                      static_cast<int64_t>(getDim()), getDevices());
}

OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  // A group of one keeps its own values; an empty region has none.
  if (getDevices().size() == 1 || getRegionVolume() == 0)
    return getInput();
  return {};
}

LogicalResult AllGatherOp::verify() {
  return verifyChunks(*this, getInput().getType(), getOffsets(), getSizes(),
                      static_cast<int64_t>(getDim()), getDevices());
}

OpFoldResult AllGatherOp::fold(FoldAdaptor) {
  // A group of one already holds its chunk, the whole region.
  if (getDevices().size() == 1 || getRegionVolume() == 0)
    return getInput();
  return {};
}
