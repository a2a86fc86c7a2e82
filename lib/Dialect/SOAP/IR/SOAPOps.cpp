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

LogicalResult AllReduceOp::verify() {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t device : getDevices()) {
    if (device < 0)
      return emitOpError() << "device ids must not be negative";
    if (!seen.insert(device).second)
      return emitOpError() << "device " << device
                           << " appears more than once in the group";
  }
  if (getDevices().empty())
    return emitOpError() << "needs at least one device";
  return verifyRegion(*this, getInput().getType(), getOffsets(), getSizes());
}

OpFoldResult AllReduceOp::fold(FoldAdaptor) {
  // A group of one, or an empty region, combines nothing.
  if (getDevices().size() == 1 || getRegionVolume() == 0)
    return getInput();
  return {};
}
