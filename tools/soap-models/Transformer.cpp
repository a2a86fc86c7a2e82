#include "ModelBuilder.h"
using namespace mlir;
using namespace soapmodels;
OwningOpRef<ModuleOp> soapmodels::buildTransformer(MLIRContext *ctx, int64_t batch) { ModelBuilder mb(ctx, "transformer", batch); return mb.finish({}); }
