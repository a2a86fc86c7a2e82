//===- StripAsserts.cpp - Erase cf.assert ---------------------------------===//

#include "soap/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

namespace mlir {
namespace soap {
#define GEN_PASS_DEF_STRIPASSERTS
#include "soap/Transforms/Passes.h.inc"
} // namespace soap
} // namespace mlir

using namespace mlir;

namespace {
struct StripAssertsPass
    : public mlir::soap::impl::StripAssertsBase<StripAssertsPass> {
  void runOnOperation() override {
    getOperation()->walk([](cf::AssertOp op) { op.erase(); });
  }
};
} // namespace
