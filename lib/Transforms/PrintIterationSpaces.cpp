//===- PrintIterationSpaces.cpp - Print loops and their SOAP kinds --------===//

#include "soap/Transforms/Passes.h"

#include "soap/Analysis/IterationSpace.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_PRINTITERATIONSPACES
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;
using namespace mlir::soap;

namespace {
struct PrintIterationSpacesPass
    : public mlir::soap::impl::PrintIterationSpacesBase<PrintIterationSpacesPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    getOperation()->walk([&](Operation *op) {
      FailureOr<IterationSpace> space = getIterationSpace(op);
      if (failed(space))
        return;
      os << op->getName() << " " << op->getLoc() << " loops="
         << space->getNumLoops() << " [";
      for (int64_t loop = 0; loop < space->getNumLoops(); ++loop) {
        if (loop)
          os << ", ";
        os << loopKindLetter(space->kinds[loop]) << ":";
        if (ShapedType::isDynamic(space->extents[loop]))
          os << "?";
        else
          os << space->extents[loop];
      }
      os << "]\n";
    });
    os.flush();
    markAllAnalysesPreserved();
  }
};
} // namespace
