//===- soap-models.cpp - The SOAP benchmark model zoo ---------------------===//
//
// Writes the paper's benchmarks (AlexNet, Inception-v3, ResNet-101, RNNTC,
// RNNLM, NMT) and three modern workloads (MobileNetV2, a GPT-2-medium-like
// Transformer, an MLP) at their real sizes, in linalg on tensors, built with
// MLIR's C++ builders:
//
//   soap-models NAME [--batch=N] [--small] [--dtype=f32|bf16|f16] [-o FILE]
//               [--stats]
//   soap-models --list
//
// Weights are function arguments marked {soap.parameter}; every op carries a
// NameLoc (printed with the module) so op names are stable.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "soap/Transforms/ChangeFloatType.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace soapmodels;

static const ModelInfo kModels[] = {
    {"alexnet", "AlexNet (torchvision), 224x224 ImageNet, batch 256", 256,
     buildAlexNet},
    {"inception_v3",
     "Inception-v3 (torchvision, no aux head), 299x299 ImageNet, batch 64", 64,
     buildInceptionV3},
    {"resnet101", "ResNet-101 (torchvision v1.5), 224x224 ImageNet, batch 64",
     64, buildResNet101},
    {"mobilenet_v2",
     "MobileNetV2 (torchvision: depthwise convolutions), 224x224 ImageNet, "
     "batch 64",
     64, buildMobileNetV2},
    {"rnntc",
     "RNNTC: 4-layer LSTM text classifier, hidden 1024, vocab 20k, 40 steps, "
     "batch 64",
     64, [](MLIRContext *c, int64_t b) { return buildRNNTC(c, b); },
     [](MLIRContext *c, int64_t b) {
       return buildRNNTC(c, b, /*small=*/true);
     }},
    {"rnnlm",
     "RNNLM: 2-layer LSTM language model, hidden 2048, vocab 10k, 40 steps, "
     "batch 64",
     64, [](MLIRContext *c, int64_t b) { return buildRNNLM(c, b); },
     [](MLIRContext *c, int64_t b) {
       return buildRNNLM(c, b, /*small=*/true);
     }},
    {"nmt",
     "NMT: 2+2-layer LSTM encoder-decoder with attention, hidden 1024, vocab "
     "32k, 40 steps, batch 64",
     64, [](MLIRContext *c, int64_t b) { return buildNMT(c, b); },
     [](MLIRContext *c, int64_t b) { return buildNMT(c, b, /*small=*/true); }},
    {"transformer",
     "GPT-2-medium-like decoder: 24 layers, hidden 1024, 16 heads, sequence "
     "1024, vocab 50257, batch 64",
     64, [](MLIRContext *c, int64_t b) { return buildTransformer(c, b); },
     [](MLIRContext *c, int64_t b) {
       return buildTransformer(c, b, /*small=*/true);
     }},
    {"mlp", "MLP: 2048 -> 3 x 8192 (relu) -> 1000, batch 64", 64, buildMLP},
};

static const ModelInfo *findModel(llvm::StringRef name) {
  for (const ModelInfo &info : kModels)
    if (name == info.name)
      return &info;
  return nullptr;
}

static void printStatistics(ModuleOp module, const ModelInfo &info,
                            int64_t batch, llvm::raw_ostream &os) {
  auto func = cast<func::FuncOp>(module.getBody()->front());
  int64_t inputs = 0, paramTensors = 0, params = 0;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (func.getArgAttr(i, mlir::soap::SOAPDialect::kParameterAttrName)) {
      ++paramTensors;
      params += type.getNumElements();
    } else {
      ++inputs;
    }
  }
  int64_t ops = 0, linalgOps = 0, convs = 0, matmuls = 0, generics = 0;
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    ++ops;
    if (isa<linalg::LinalgOp>(op))
      ++linalgOps;
    if (isa<linalg::ConvolutionOpInterface>(op) &&
        !isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op))
      ++convs;
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
      ++matmuls;
    if (isa<linalg::GenericOp>(op))
      ++generics;
  }
  os << "model: " << info.name << "\n"
     << "batch: " << batch << "\n"
     << "inputs: " << inputs << "\n"
     << "parameter-tensors: " << paramTensors << "\n"
     << "parameters: " << params << "\n"
     << "ops: " << ops << "\n"
     << "linalg-ops: " << linalgOps << "\n"
     << "convolutions: " << convs << "\n"
     << "matmuls: " << matmuls << "\n"
     << "generics: " << generics << "\n";
}

static void printUsage(llvm::raw_ostream &os) {
  os << "usage: soap-models NAME [--batch=N] [--small] [--dtype=T] [-o FILE] "
        "[--stats]\n"
        "       soap-models --list\n"
        "Writes a benchmark model in linalg on tensors (MLIR).\n"
        "  --batch=N   batch size (default: the model's)\n"
        "  --small     the recurrent models (rnntc, rnnlm, nmt) at test size:\n"
        "              4 steps, hidden and embeddings 16, vocabularies 50;\n"
        "              the transformer: 2 layers, hidden 32, 4 heads,\n"
        "              sequence 8, vocabulary 64\n"
        "  --dtype=T   the float type of every tensor and constant: f32\n"
        "              (default), bf16 or f16\n"
        "  -o FILE     output file (default: stdout)\n"
        "  --stats     print op and parameter counts instead of the module\n"
        "              (the module is still written when -o is given)\n"
        "  --list      list the models\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // A small hand-written parser: LLVM's command-line library already owns
  // `-stats` (statistics), which this tool's interface needs.
  std::string modelName, batchOption, dtypeOption = "f32", outputFilename = "-";
  bool listModels = false, printStats = false, haveBatch = false,
       haveOutput = false, small = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    auto valueOf = [&](llvm::StringRef flag, std::string &value) -> int {
      // Returns 1 when `arg` is `flag` (value taken), 0 when not, -1 on error.
      llvm::StringRef rest;
      for (llvm::StringRef dashes : {"--", "-"}) {
        if (!arg.starts_with(dashes) ||
            !arg.drop_front(dashes.size()).starts_with(flag))
          continue;
        rest = arg.drop_front(dashes.size() + flag.size());
        if (rest.empty()) {
          if (i + 1 >= argc) {
            llvm::errs() << "soap-models: option '" << arg
                         << "' needs a value\n";
            return -1;
          }
          value = argv[++i];
          return 1;
        }
        if (rest.consume_front("=")) {
          value = rest.str();
          return 1;
        }
      }
      return 0;
    };
    if (arg == "--list" || arg == "-list") {
      listModels = true;
    } else if (arg == "--stats" || arg == "-stats") {
      printStats = true;
    } else if (arg == "--small" || arg == "-small") {
      small = true;
    } else if (arg == "--help" || arg == "-help" || arg == "-h") {
      printUsage(llvm::outs());
      return 0;
    } else if (int r = valueOf("batch", batchOption)) {
      if (r < 0)
        return 1;
      haveBatch = true;
    } else if (int r = valueOf("dtype", dtypeOption)) {
      if (r < 0)
        return 1;
    } else if (int r = valueOf("o", outputFilename)) {
      if (r < 0)
        return 1;
      haveOutput = true;
    } else if (arg.starts_with("-") && arg != "-") {
      llvm::errs() << "soap-models: unknown option '" << arg << "'\n";
      printUsage(llvm::errs());
      return 1;
    } else if (modelName.empty()) {
      modelName = arg.str();
    } else {
      llvm::errs() << "soap-models: more than one model given ('" << modelName
                   << "', '" << arg << "')\n";
      return 1;
    }
  }

  if (listModels) {
    for (const ModelInfo &info : kModels)
      llvm::outs() << llvm::left_justify(info.name, 14) << info.description
                   << "\n";
    return 0;
  }
  if (modelName.empty()) {
    llvm::errs() << "soap-models: no model given (soap-models --list lists "
                    "them)\n";
    printUsage(llvm::errs());
    return 1;
  }
  const ModelInfo *info = findModel(modelName);
  if (!info) {
    llvm::errs() << "soap-models: unknown model '" << modelName
                 << "'; known models:";
    for (const ModelInfo &m : kModels)
      llvm::errs() << " " << m.name;
    llvm::errs() << "\n";
    return 1;
  }

  int64_t batch = info->defaultBatch;
  if (haveBatch) {
    long long value = 0;
    if (llvm::StringRef(batchOption).getAsInteger(10, value) || value < 1 ||
        value > (1 << 20)) {
      llvm::errs() << "soap-models: invalid batch size '" << batchOption
                   << "': expected an integer in [1, 1048576]\n";
      return 1;
    }
    batch = value;
  }

  MLIRContext context;
  FloatType floatType = mlir::soap::parseFloatType(&context, dtypeOption);
  if (!floatType) {
    llvm::errs() << "soap-models: invalid --dtype '" << dtypeOption
                 << "': expected f32, bf16 or f16\n";
    return 1;
  }
  context.loadDialect<func::FuncDialect, arith::ArithDialect,
                      math::MathDialect, tensor::TensorDialect,
                      linalg::LinalgDialect, mlir::soap::SOAPDialect>();

  if (small && !info->buildSmall) {
    llvm::errs() << "soap-models: --small: '" << info->name
                 << "' has no test size (these have:";
    for (const ModelInfo &other : kModels)
      if (other.buildSmall)
        llvm::errs() << " " << other.name;
    llvm::errs() << ")\n";
    return 1;
  }
  OwningOpRef<ModuleOp> module =
      small ? info->buildSmall(&context, batch) : info->build(&context, batch);
  if (!floatType.isF32())
    mlir::soap::changeFloatType(*module, {Float32Type::get(&context)},
                                floatType);
  if (failed(verify(*module))) {
    llvm::errs() << "soap-models: internal error: the generated " << info->name
                 << " model does not verify\n";
    return 2;
  }

  if (printStats)
    printStatistics(*module, *info, batch, llvm::outs());
  if (!printStats || haveOutput) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> output =
        openOutputFile(outputFilename, &error);
    if (!output) {
      llvm::errs() << "soap-models: " << error << "\n";
      return 1;
    }
    module->print(output->os(), OpPrintingFlags().enableDebugInfo());
    output->os() << "\n";
    output->keep();
  }
  return 0;
}
