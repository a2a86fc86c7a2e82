//===- CUDAPatterns.cpp - What the CUDA lowering's passes ask of ops -----===//
//
// See CUDAPatterns.h.
//
//===----------------------------------------------------------------------===//

#include "CUDAPatterns.h"

#include "soap/Analysis/IterationSpace.h"
#include "soap/Dialect/SOAP/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace mlir {
namespace soap {
namespace cuda {

std::optional<StringRef> libraryFloatSuffix(Type t) {
  if (t.isF32())
    return StringRef("f32");
  if (t.isBF16())
    return StringRef("bf16");
  if (t.isF16())
    return StringRef("f16");
  return std::nullopt;
}

bool isLibraryFloatBuffer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && libraryFloatSuffix(type.getElementType()) &&
         type.hasStaticShape();
}

bool isSplittableReduction(linalg::GenericOp op) {
  if (op.getNumDpsInits() == 0 || op.getNumResults() != op.getNumDpsInits() ||
      op.getNumReductionLoops() == 0 || becomesLibraryCall(op) ||
      failed(getReductionCombiners(op)))
    return false;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  return outMap.isProjectedPermutation(/*allowZeroInResults=*/false) &&
         llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           return op.getMatchingIndexingMap(&init) == outMap;
         });
}

std::optional<int64_t> staticByteSize(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

std::optional<std::string> libraryMatmulVariant(Type a, Type b, Type c) {
  std::optional<StringRef> suffix = libraryFloatSuffix(a);
  if (a != b || !suffix)
    return std::nullopt;
  if (c == a)
    return suffix->str();
  if (c.isF32()) // 16-bit operands summed into f32
    return (*suffix + "_f32").str();
  return std::nullopt;
}

std::optional<int> widenedMatmulOperand(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(op.getDpsInitOperand(0)->get()).isF32() ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  Type types[2] = {getElementTypeOrSelf(op.getDpsInputOperand(0)->get()),
                   getElementTypeOrSelf(op.getDpsInputOperand(1)->get())};
  int narrow = types[0].isF32() ? 1 : 0;
  if (!types[1 - narrow].isF32() ||
      !(types[narrow].isBF16() || types[narrow].isF16()))
    return std::nullopt;
  // A contraction's body (mul, add) whose one other op extends the narrow
  // operand: the product and the sum in f32.
  Block &body = *op.getBlock();
  BlockArgument arg = body.getArgument(narrow);
  if (body.getOperations().size() != 4 || !arg.hasOneUse() ||
      !isa<arith::ExtFOp>(*arg.getUsers().begin()))
    return std::nullopt;
  return narrow;
}

std::optional<linalg::ContractionDimensions>
matchLibraryContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  auto elementType = [&](OpOperand *operand) {
    return getElementTypeOrSelf(operand->get().getType());
  };
  if (!libraryMatmulVariant(elementType(op.getDpsInputOperand(0)),
                            elementType(op.getDpsInputOperand(1)),
                            elementType(op.getDpsInitOperand(0))) &&
      !widenedMatmulOperand(op))
    return std::nullopt;
  return gemmDims(op);
}

std::optional<LibraryConvolution> matchCuDNNConvolution(linalg::LinalgOp op) {
  std::optional<LibraryConvolution> conv = matchLibraryConvolution(op);
  if (!conv || !libraryFloatSuffix(getElementTypeOrSelf(conv->y.getType())))
    return std::nullopt;
  return conv;
}

bool becomesLibraryCall(linalg::LinalgOp op) {
  return matchLibraryContraction(op) || matchCuDNNConvolution(op);
}

} // namespace cuda
} // namespace soap
} // namespace mlir
