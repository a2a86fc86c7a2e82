//===- Recompute.cpp - Activation recomputation in a training step --------===//

#include "Recompute.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::soap;

unsigned mlir::soap::recomputeForBackward(ArrayRef<Operation *> forward) {
  if (forward.empty())
    return 0;
  llvm::DenseSet<Operation *> inForward(forward.begin(), forward.end());
  Block *block = forward.front()->getBlock();
  Operation *terminator = block->getTerminator();
  // An op whose result the step returns keeps it anyway: not copied.
  auto isMarked = [&](Operation *op) {
    return op && inForward.contains(op) &&
           op->hasAttr(SOAPDialect::kRecomputeAttrName) &&
           llvm::none_of(op->getUsers(),
                         [&](Operation *user) { return user == terminator; });
  };
  // What a copy computes again along with it: marked ops and the values
  // that only start one (a destination).
  auto isCopied = [&](Operation *op) {
    return isMarked(op) || (op && inForward.contains(op) &&
                            isa<tensor::EmptyOp, linalg::FillOp>(op));
  };
  OpBuilder b(forward.front()->getContext());
  llvm::DenseMap<Operation *, Operation *> copyOf;
  unsigned copies = 0;
  // The copy of `op`, made before `before` (with the copies it reads) the
  // first time.
  std::function<Operation *(Operation *, Operation *)> copy =
      [&](Operation *op, Operation *before) -> Operation * {
    if (Operation *c = copyOf.lookup(op))
      return c;
    IRMapping map;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (isCopied(def))
        map.map(operand,
                copy(def, before)
                    ->getResult(cast<OpResult>(operand).getResultNumber()));
    }
    b.setInsertionPoint(before);
    Operation *c = b.clone(*op, map);
    c->removeAttr(SOAPDialect::kRecomputeAttrName);
    c->setAttr(SOAPDialect::kRecomputedAttrName, b.getUnitAttr());
    if (auto name = op->getAttrOfType<StringAttr>(SOAPDialect::kNameAttrName))
      c->setAttr(SOAPDialect::kNameAttrName,
                 b.getStringAttr(name.getValue() + ".recompute"));
    copyOf[op] = c;
    ++copies;
    return c;
  };
  for (Operation *op = forward.back()->getNextNode(); op && op != terminator;
       op = op->getNextNode()) {
    op->walk([&](Operation *inner) {
      for (OpOperand &use : inner->getOpOperands()) {
        Operation *def = use.get().getDefiningOp();
        if (!isMarked(def))
          continue;
        use.set(copy(def, op)->getResult(
            cast<OpResult>(use.get()).getResultNumber()));
      }
    });
  }
  return copies;
}
