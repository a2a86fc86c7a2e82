#include "ModelBuilder.h"
using namespace mlir;
using namespace soapmodels;
OwningOpRef<ModuleOp> soapmodels::buildRNNTC(MLIRContext *ctx, int64_t batch) { ModelBuilder mb(ctx, "rnntc", batch); return mb.finish({}); }
OwningOpRef<ModuleOp> soapmodels::buildRNNLM(MLIRContext *ctx, int64_t batch) { ModelBuilder mb(ctx, "rnnlm", batch); return mb.finish({}); }
OwningOpRef<ModuleOp> soapmodels::buildNMT(MLIRContext *ctx, int64_t batch) { ModelBuilder mb(ctx, "nmt", batch); return mb.finish({}); }
