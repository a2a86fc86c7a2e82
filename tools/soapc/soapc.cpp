//===- soapc.cpp - The SOAP driver ----------------------------------------===//
//
// soapc MODEL.mlir --machine=PRESET|FILE.json [--devices=N]
//       [--strategy=search|data-parallel|expert|random|single|FILE.json]
//       [--search-budget=SECONDS] [--seed=N] [--batch=N] [--entry=NAME]
//       [--strategy-out=FILE.json] [--report=FILE.json] [--trace=FILE.json]
//       [--emit=none|mlir|partitioned|llvm|ptx|obj|exe] [--target=cpu|cuda]
//       [--mcpu=host|generic|NAME] [--allow-tf32] [--cuda-chip=sm_90]
//       [--cuda-format=ptx|cubin|fatbin] [--train [--train-returns=parameters|
//       gradients|outputs] [--learning-rate=F]] [-o OUT]
// soapc --list-machines
//
// Imports the model, extracts its op graph, finds (or takes) a strategy,
// simulates it, prints a summary, and writes what was asked for. With
// --emit=obj|exe it applies the strategy (soap-partition), lowers the SPMD
// program for the CPU (soap-lower-to-cpu) or for NVIDIA GPUs
// (soap-lower-to-cuda: cuBLAS, cuDNN, generated PTX kernels, NCCL) and writes
// an object file, or an executable linked with libsoaprt (libsoaprt_cuda)
// and MPI (run it as mpirun -np N OUT).
//
//===----------------------------------------------------------------------===//

#include "Summary.h"

#include "soap/Analysis/NormalizationStatistics.h"
#include "soap/Analysis/OpGraphExtraction.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "soap/Conversion/LowerToCPU.h"
#include "soap/Conversion/LowerToCUDA.h"
#include "soap/Dialect/SOAP/IR/SOAPDialect.h"
#include "soap/Simulator/CostModel.h"
#include "soap/Simulator/Machine.h"
#include "soap/Simulator/Search.h"
#include "soap/Simulator/Simulator.h"
#include "soap/Simulator/Strategy.h"
#include "soap/Simulator/Trace.h"
#include "soap/Transforms/Passes.h"
#include "soap/Transforms/Pipelines.h"
#include "soap/Transforms/StrategyAttributes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory soapcCategory("soapc options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::cat(soapcCategory));
static cl::opt<bool> listMachines("list-machines",
                                  cl::desc("List the machine presets and exit"),
                                  cl::cat(soapcCategory));
static cl::opt<std::string>
    machineSpec("machine", cl::desc("Machine preset or JSON file"),
                cl::value_desc("PRESET|FILE.json"), cl::init("p100-4x4"),
                cl::cat(soapcCategory));
static cl::opt<int> devicesOpt(
    "devices",
    cl::desc("Use only the first N devices of the machine (0, the default: "
             "all of them)"),
    cl::value_desc("N"), cl::init(0), cl::cat(soapcCategory));
static cl::opt<std::string> strategyOpt(
    "strategy",
    cl::desc("search | data-parallel | expert | random | single | FILE.json"),
    cl::init("search"), cl::cat(soapcCategory));
static cl::opt<std::string> strategyIn(
    "strategy-in", cl::desc("Read the strategy from FILE.json (same as "
                            "--strategy=FILE.json)"),
    cl::value_desc("FILE.json"), cl::cat(soapcCategory));
static cl::opt<double> searchBudget("search-budget",
                                    cl::desc("Search budget in seconds"),
                                    cl::value_desc("SECONDS"), cl::init(10.0),
                                    cl::cat(soapcCategory));
static cl::opt<int64_t> searchProposals(
    "search-proposals",
    cl::desc("Stop the search after this many proposals (0: no limit; with a "
             "limit the result does not depend on the machine's speed)"),
    cl::init(0), cl::cat(soapcCategory));
static cl::opt<double> searchTiedMoves(
    "search-tied-moves",
    cl::desc("Probability that a proposal for one unrolled step of a "
             "recurrent layer moves all its steps (0: one layer per "
             "proposal, as in the paper)"),
    cl::value_desc("P"), cl::init(::soap::SearchOptions().tiedMoveProbability),
    cl::cat(soapcCategory));
static cl::opt<double> searchUnitMoves(
    "search-unit-moves",
    cl::desc("Probability that a tied move of a recurrent layer's steps "
             "moves the whole layer (its matmuls, gates and cell updates) "
             "with configs aligned to the proposed one (0: never)"),
    cl::value_desc("P"), cl::init(::soap::SearchOptions().unitMoveProbability),
    cl::cat(soapcCategory));
static cl::opt<int32_t> searchThreads(
    "search-threads",
    cl::desc("Threads for the search's chains (0, the default: one per "
             "core; the chains follow the same trajectories on any number "
             "of threads, so with --search-proposals the result is the "
             "same)"),
    cl::value_desc("N"), cl::init(0), cl::cat(soapcCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Random seed"), cl::init(1),
                              cl::cat(soapcCategory));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Rescale the model's batch to N (0, "
                                       "the default: keep it)"),
                              cl::value_desc("N"), cl::init(0),
                              cl::cat(soapcCategory));
static cl::opt<std::string> entry("entry", cl::desc("Entry function"),
                                  cl::value_desc("NAME"), cl::init(""),
                                  cl::cat(soapcCategory));
static cl::opt<std::string> strategyOut(
    "strategy-out", cl::desc("Write the strategy as JSON"),
    cl::value_desc("FILE.json"), cl::cat(soapcCategory));
static cl::opt<std::string> reportFile("report",
                                       cl::desc("Write the report as JSON"),
                                       cl::value_desc("FILE.json"),
                                       cl::cat(soapcCategory));
static cl::opt<std::string> traceFile(
    "trace", cl::desc("Write the simulated timeline (Chrome trace format)"),
    cl::value_desc("FILE.json"), cl::cat(soapcCategory));
static cl::opt<std::string> profileFile(
    "profile", cl::desc("Measured op costs (profile table JSON)"),
    cl::value_desc("FILE.json"), cl::cat(soapcCategory));
static cl::opt<std::string> emit(
    "emit",
    cl::desc("What to write to -o: none | mlir (the model annotated with the "
             "strategy) | partitioned (the SPMD program) | llvm (lowered to "
             "the LLVM dialect) | ptx (the kernels' PTX, --target=cuda) | obj "
             "(object file) | exe (executable linked with libsoaprt and MPI)"),
    cl::init("none"), cl::cat(soapcCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Code generation target: cpu (loops, MPI) or cuda (one "
                    "GPU per rank: cuBLAS, cuDNN, generated kernels, NCCL)"),
           cl::init("cpu"), cl::cat(soapcCategory));
static cl::opt<bool> allowTF32(
    "allow-tf32",
    cl::desc("--target=cuda: let cuBLAS and cuDNN use TF32 tensor cores for "
             "fp32 (default: strict fp32)"),
    cl::cat(soapcCategory));
static cl::opt<std::string>
    cudaChip("cuda-chip", cl::desc("--target=cuda: GPU architecture"),
             cl::init("sm_90"), cl::cat(soapcCategory));
static cl::opt<std::string> cudaFormat(
    "cuda-format",
    cl::desc("--target=cuda: how kernels are embedded: ptx (JIT-compiled by "
             "the driver at start-up), cubin or fatbin (compiled by ptxas "
             "now: needs the CUDA toolkit)"),
    cl::init("ptx"), cl::cat(soapcCategory));
#ifndef SOAP_CPU_BLAS_LINK_ARGS
#define SOAP_CPU_BLAS_LINK_ARGS ""
#endif
/// Whether the build found OpenBLAS (libsoaprt_blas.a is there).
static const bool kHaveCPUBlas = !StringRef(SOAP_CPU_BLAS_LINK_ARGS).empty();
static cl::opt<bool> cpuBlas(
    "cpu-blas",
    cl::desc("--target=cpu: compute f32 / f64 matmuls and convolutions "
             "with OpenBLAS (single-threaded: one rank per core) instead of "
             "generated loops "
             "(default: on where the build found OpenBLAS; --cpu-blas=false "
             "for loops)"),
    cl::init(kHaveCPUBlas), cl::cat(soapcCategory));
static cl::opt<bool> cudaHostEmulation(
    "cuda-host-emulation",
    cl::desc("--target=cuda, for testing without a GPU: the same lowering, "
             "but the kernels run as host loops and the executable links "
             "libsoaprt_cuda over a host emulation of CUDA, cuBLAS, cuDNN "
             "and NCCL (slow; results comparable with --target=cpu)"),
    cl::cat(soapcCategory));
static cl::opt<bool> cudaEmulationProfile(
    "cuda-emulation-profile",
    cl::desc("--cuda-host-emulation: profile the kernels' memory accesses "
             "(32-byte sectors per warp-wide request, per kernel; the "
             "executable writes the table at exit, to $SOAPRT_EMU_PROFILE "
             "or stderr)"),
    cl::cat(soapcCategory));
static cl::opt<std::string>
    mcpu("mcpu",
         cl::desc("CPU to generate code for: host (default), generic or an "
                  "LLVM CPU name"),
         cl::init("host"), cl::cat(soapcCategory));
static cl::opt<unsigned> optLevel(
    "O",
    cl::desc("LLVM optimization level of the object code (0-3; default 2, "
             "and 0 for --target=cuda's host code, which only calls "
             "libraries and launches kernels)"),
    cl::Prefix, cl::init(2), cl::cat(soapcCategory));
static cl::opt<bool> splitReductions(
    "split-reductions",
    cl::desc("Let strategies split reduction loops (partial results summed "
             "in another order: not bitwise reproducible)"),
    cl::init(true), cl::cat(soapcCategory));
static cl::opt<bool> recompute(
    "recompute",
    cl::desc("Let the search recompute activations in the backward pass "
             "instead of keeping them, where data parallelism does not fit "
             "in device memory"),
    cl::init(true), cl::cat(soapcCategory));
static cl::opt<bool> train(
    "train",
    cl::desc("Generate the training step (forward, backward, SGD update) "
             "instead of the forward pass: the program takes one cotangent "
             "(dL/d result) per result after the model's arguments and "
             "returns the updated parameters after the results"),
    cl::cat(soapcCategory));
static cl::opt<std::string> trainReturns(
    "train-returns",
    cl::desc("--train: what the step returns after the results: parameters "
             "(SGD-updated), gradients (dL/dx of every float argument) or "
             "outputs (nothing more: the parameters are updated in place, "
             "kept on their devices across --iterations and written as "
             "input<i>.npy at exit)"),
    cl::init("parameters"), cl::cat(soapcCategory));
static cl::opt<double>
    learningRate("learning-rate", cl::desc("--train: the SGD learning rate"),
                 cl::init(0.01), cl::cat(soapcCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("OUT"), cl::init("-"),
                                       cl::cat(soapcCategory));
static cl::opt<bool> quiet("quiet", cl::desc("No progress on stderr"),
                           cl::cat(soapcCategory));

/// The executable's inputs, in the order it takes them: the entry's
/// arguments (data, parameters; those lifted from constants with the
/// location of their constant), then with --train one cotangent per
/// result. For the report: which input<i>.npy is which weight, and where
/// --random-inputs draws an input from when it has a range of its own.
static llvm::json::Array describeInputs(func::FuncOp func, bool training) {
  llvm::json::Array inputs;
  auto describe = [&](Type type, StringRef kind, Location loc,
                      bool initialValue, DenseF64ArrayAttr randomRange) {
    llvm::json::Array shape;
    std::string element;
    if (auto shaped = dyn_cast<ShapedType>(type)) {
      for (int64_t d : shaped.getShape())
        shape.push_back(d);
      llvm::raw_string_ostream(element) << shaped.getElementType();
    } else {
      llvm::raw_string_ostream(element) << type;
    }
    llvm::json::Object input{{"index", static_cast<int64_t>(inputs.size())},
                             {"kind", kind},
                             {"shape", std::move(shape)},
                             {"element_type", element},
                             {"initial_value", initialValue}};
    if (randomRange)
      input["random_range"] = llvm::json::Array{randomRange[0], randomRange[1]};
    if (auto file = dyn_cast<FileLineColLoc>(loc))
      input["location"] = (file.getFilename().getValue() + ":" +
                           llvm::Twine(file.getLine()) + ":" +
                           llvm::Twine(file.getColumn()))
                              .str();
    inputs.push_back(std::move(input));
  };
  llvm::SmallBitVector parameters = mlir::soap::getParameterArguments(func);
  for (BlockArgument arg : func.getArguments())
    describe(
        arg.getType(),
        parameters.test(arg.getArgNumber()) ? "parameter" : "data",
        arg.getLoc(),
        static_cast<bool>(
            func.getArgAttr(arg.getArgNumber(),
                            mlir::soap::SOAPDialect::kInitialValueAttrName)),
        func.getArgAttrOfType<DenseF64ArrayAttr>(
            arg.getArgNumber(), mlir::soap::SOAPDialect::kRandomRangeAttrName));
  if (training)
    for (Type result : func.getResultTypes())
      describe(result, "cotangent", func.getLoc(), false, nullptr);
  return inputs;
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "soapc: error: " << message << "\n";
  return 1;
}

static bool writeFile(StringRef path, StringRef contents) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "soapc: error: " << error << "\n";
    return false;
  }
  file->os() << contents;
  file->keep();
  return true;
}

#ifndef SOAP_RUNTIME_DIR
#define SOAP_RUNTIME_DIR ""
#endif
#ifndef SOAP_LINKER
#define SOAP_LINKER "cc"
#endif
#ifndef SOAP_CUDA_TOOLKIT
#define SOAP_CUDA_TOOLKIT ""
#endif
#ifndef SOAP_CUDA_LINK_ARGS
#define SOAP_CUDA_LINK_ARGS ""
#endif
#ifndef SOAP_HAS_CUDA_EMULATION
#define SOAP_HAS_CUDA_EMULATION 0
#endif

/// Applies the strategy (soap-partition) and, past --emit=partitioned,
/// lowers for the CPU and writes the object file or executable.
/// The gradient buckets' size for the CUDA target: what the slowest link
/// the program uses moves in one message's latency (merging messages
/// smaller than that saves most of their time; larger, little), at least
/// 64 KiB. h200-8: 450 GB/s x 3 us = 1.35 MB.
static int64_t bucketBytesFor(const ::soap::Machine &m) {
  double bytes = m.intraLatency * m.intraBandwidth;
  if (m.numNodes > 1)
    bytes = std::max(bytes, m.interLatency * m.interBandwidth);
  return std::max<int64_t>(int64_t(64) << 10, std::llround(bytes));
}

static LogicalResult generateCode(ModuleOp module, StringRef entryName,
                                  const ::soap::Machine &machine) {
  MLIRContext *context = module.getContext();
  // --mlir-timing: the passes, then LLVM's code generation of the object.
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  PassManager pm(context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  mlir::soap::PartitionOptions partitionOptions;
  partitionOptions.entry = entryName.str();
  pm.addPass(mlir::soap::createPartition(partitionOptions));
  pm.addNestedPass<func::FuncOp>(mlir::soap::createFormCollectives());
  if (emit != "partitioned" && target == "cpu") {
    mlir::soap::LowerToCPUOptions lowerOptions;
    lowerOptions.entry = entryName.str();
    lowerOptions.blas = cpuBlas;
    mlir::soap::buildLowerToCPUPipeline(pm, lowerOptions);
  } else if (emit != "partitioned") {
    mlir::soap::LowerToCUDAOptions lowerOptions;
    lowerOptions.entry = entryName.str();
    lowerOptions.chip = cudaChip;
    lowerOptions.allowTF32 = allowTF32;
    lowerOptions.format = cudaFormat == "ptx"     ? "isa"
                          : cudaFormat == "cubin" ? "bin"
                                                  : "fatbin";
    lowerOptions.toolkit = SOAP_CUDA_TOOLKIT;
    lowerOptions.bucketBytes = bucketBytesFor(machine);
    lowerOptions.hostEmulation = cudaHostEmulation;
    lowerOptions.emulationProfile = cudaEmulationProfile;
    mlir::soap::buildLowerToCUDAPipeline(pm, lowerOptions);
  }
  if (failed(pm.run(module)))
    return failure();
  if (emit == "ptx") {
    std::string ptx = mlir::soap::collectPTX(module);
    return success(writeFile(outputFile, ptx));
  }
  if (emit != "obj" && emit != "exe")
    return success();

  // The object file: -o itself, or a temporary one to link.
  SmallString<128> objectPath(outputFile);
  if (emit == "exe") {
    int fd;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("soapc", "o", fd, objectPath)) {
      fail("cannot create a temporary file: " + ec.message());
      return failure();
    }
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  llvm::FileRemover removeObject(emit == "exe" ? objectPath.str() : "");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec) {
      fail("cannot write '" + objectPath + "': " + ec.message());
      return failure();
    }
    TimingScope objectTiming = timing.nest("LLVM code generation");
    // On a GPU the host code is a sequence of library calls and kernel
    // launches in one large function, where LLVM's optimizations take most
    // of the compile time (resnet101's training step: 32 s of 55) for
    // nothing the GPU would notice. Emulated kernels run on the host: those
    // are optimized.
    unsigned level = optLevel;
    if (target == "cuda" && !cudaHostEmulation && !optLevel.getNumOccurrences())
      level = 0;
    if (failed(mlir::soap::emitObjectFile(module, os, mcpu, level)))
      return failure();
  }
  if (emit == "obj")
    return success();

  // Link with libsoaprt (its main() drives the model) and MPI.
  std::string linker = SOAP_LINKER;
  llvm::ErrorOr<std::string> linkerPath = llvm::sys::findProgramByName(linker);
  if (!linkerPath) {
    fail("cannot find the linker '" + linker + "'");
    return failure();
  }
  std::string runtimeDir = SOAP_RUNTIME_DIR;
  std::string mainLib = runtimeDir + "/libsoaprt_main.a";
  std::string rtLib = runtimeDir + (target == "cpu"     ? "/libsoaprt.a"
                                    : cudaHostEmulation ? "/libsoaprt_cuda_emu.a"
                                                        : "/libsoaprt_cuda.a");
  for (const std::string &lib : {mainLib, rtLib})
    if (!llvm::sys::fs::exists(lib)) {
      fail("cannot find the runtime library '" + lib + "'");
      return failure();
    }
  SmallVector<StringRef> args = {*linkerPath, objectPath, mainLib, rtLib};
  // The CPU target's matmuls and convolutions: libsoaprt_blas.a, then
  // OpenBLAS.
  std::string blasLib = runtimeDir + "/libsoaprt_blas.a";
  SmallVector<StringRef> blasArgs;
  if (target == "cpu" && cpuBlas) {
    if (!llvm::sys::fs::exists(blasLib)) {
      fail("cannot find the runtime library '" + blasLib + "'");
      return failure();
    }
    args.push_back(blasLib);
    StringRef(SOAP_CPU_BLAS_LINK_ARGS).split(blasArgs, '|', -1, false);
    args.append(blasArgs.begin(), blasArgs.end());
  }
  // The CUDA libraries (cudart, cuBLAS, cuDNN, NCCL), '|'-separated.
  SmallVector<StringRef> cudaArgs;
  if (target == "cuda" && !cudaHostEmulation)
    StringRef(SOAP_CUDA_LINK_ARGS).split(cudaArgs, '|', -1, false);
  args.append(cudaArgs.begin(), cudaArgs.end());
  args.append({"-lm", "-o", outputFile});
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*linkerPath, args, std::nullopt, {}, 0,
                                     0, &message);
  if (rc != 0) {
    std::string command = llvm::join(args, " ");
    fail("linking failed (" + command + ")" +
         (message.empty() ? "" : ": " + message));
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --mlir-print-ir-before=PASS, --mlir-timing and the rest (hidden from
  // --help) for looking into the code generation; the passes first, so
  // that the options know their names.
  mlir::soap::registerSOAPPasses();
  mlir::soap::registerLowerToCPUPasses();
  mlir::soap::registerLowerToCUDAPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(soapcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "soapc: find a fast parallelization strategy for a DNN training step\n");

  if (listMachines) {
    for (const std::string &name : ::soap::listMachinePresets()) {
      llvm::Expected<::soap::Machine> m = ::soap::getMachinePreset(name);
      if (!m)
        return fail(llvm::toString(m.takeError()));
      llvm::outs() << ::soap::describeMachine(*m) << "\n";
    }
    return 0;
  }
  if (inputFile.empty())
    return fail("no model given (usage: soapc MODEL.mlir --machine=PRESET)");
  if (!llvm::is_contained(
          {"none", "mlir", "partitioned", "llvm", "ptx", "obj", "exe"},
          StringRef(emit)))
    return fail("unknown --emit='" + emit +
                "' (expected none, mlir, partitioned, llvm, ptx, obj or exe)");
  bool codegen = emit != "none" && emit != "mlir";
  if (target != "cpu" && target != "cuda")
    return fail("unknown --target='" + target + "' (expected cpu or cuda)");
  if (emit == "ptx" && (target != "cuda" || cudaFormat != "ptx"))
    return fail("--emit=ptx needs --target=cuda and --cuda-format=ptx");
  if (!llvm::is_contained({"ptx", "cubin", "fatbin"}, StringRef(cudaFormat)))
    return fail("unknown --cuda-format='" + cudaFormat +
                "' (expected ptx, cubin or fatbin)");
  if (target == "cuda" && cudaFormat != "ptx" &&
      StringRef(SOAP_CUDA_TOOLKIT).empty())
    return fail("--cuda-format=" + cudaFormat +
                " needs ptxas, and this soapc was built without a CUDA "
                "toolkit (use --cuda-format=ptx)");
  if (cudaHostEmulation && target != "cuda")
    return fail("--cuda-host-emulation needs --target=cuda");
  if (cudaEmulationProfile && !cudaHostEmulation)
    return fail("--cuda-emulation-profile needs --cuda-host-emulation");
  if (cudaHostEmulation && emit == "ptx")
    return fail("--cuda-host-emulation makes no kernels: no --emit=ptx");
  if (cudaHostEmulation && emit == "exe" && !SOAP_HAS_CUDA_EMULATION)
    return fail("--cuda-host-emulation --emit=exe needs libsoaprt_cuda_emu, "
                "and this soapc was built without the CUDA toolkit, cuDNN "
                "and NCCL headers");
  if (cpuBlas && !kHaveCPUBlas && target == "cpu" && emit == "exe")
    return fail("--cpu-blas needs OpenBLAS, and this soapc was built without "
                "it (install libopenblas-serial-dev and rebuild, or drop "
                "--cpu-blas)");
  if (target == "cuda" && emit == "exe" && !cudaHostEmulation &&
      StringRef(SOAP_CUDA_LINK_ARGS).empty())
    return fail("--target=cuda --emit=exe needs libsoaprt_cuda, and this "
                "soapc was built without the CUDA toolkit, cuDNN and NCCL "
                "(--emit=obj works)");
  // An NVIDIA architecture as NVPTX names it: sm_<major><minor>, with an
  // optional a / f (architecture- or family-specific features).
  if (cudaChip.getNumOccurrences() &&
      !llvm::Regex("^sm_[1-9][0-9]{1,2}[af]?$").match(cudaChip))
    return fail("--cuda-chip: '" + cudaChip +
                "' is no GPU architecture (sm_<major><minor>, e.g. sm_90, "
                "sm_90a, sm_100)");
  if (mcpu.getNumOccurrences())
    if (std::optional<std::string> problem = mlir::soap::checkCPUName(mcpu))
      return fail("--mcpu: " + *problem);
  if (trainReturns != "parameters" && trainReturns != "gradients" &&
      trainReturns != "outputs")
    return fail("unknown --train-returns='" + trainReturns +
                "' (expected parameters, gradients or outputs)");
  if ((trainReturns.getNumOccurrences() || learningRate.getNumOccurrences()) &&
      !train)
    return fail("--train-returns and --learning-rate need --train");
  if (train && emit == "none")
    return fail("--train needs --emit (the training step is generated code)");
  if (!std::isfinite(learningRate.getValue()) || learningRate < 0)
    return fail("--learning-rate must be a finite number, not negative");
  if (searchProposals < 0)
    return fail("--search-proposals must not be negative (0: no limit)");
  if (codegen && outputFile == "-" && (emit == "obj" || emit == "exe"))
    return fail("--emit=" + emit + " needs an output file (-o OUT)");
  if (!strategyIn.empty()) {
    if (strategyOpt.getNumOccurrences())
      return fail("give either --strategy or --strategy-in, not both");
    strategyOpt = strategyIn;
  }
  StringRef strategyKind = strategyOpt;
  bool strategyFromFile = strategyKind.ends_with(".json");
  if (!strategyFromFile &&
      !llvm::is_contained({"search", "data-parallel", "expert", "random",
                           "single"},
                          strategyKind))
    return fail("unknown --strategy='" + strategyKind +
                "' (expected search, data-parallel, expert, random, single or "
                "FILE.json)");
  if (!(searchBudget > 0 && std::isfinite(searchBudget)))
    return fail("--search-budget must be a positive, finite number of "
                "seconds");
  if (!(searchTiedMoves >= 0 && searchTiedMoves <= 1))
    return fail("--search-tied-moves must be a probability in [0, 1]");
  if (!(searchUnitMoves >= 0 && searchUnitMoves <= 1))
    return fail("--search-unit-moves must be a probability in [0, 1]");
  if (searchThreads < 0)
    return fail("--search-threads must be 0 (one per core) or positive");
  if (batch < 0)
    return fail("--batch must be positive");

  // The machine.
  llvm::Expected<::soap::Machine> machineOr = ::soap::loadMachine(machineSpec);
  if (!machineOr)
    return fail(llvm::toString(machineOr.takeError()));
  ::soap::Machine machine = *machineOr;
  if (devicesOpt != 0) {
    llvm::Expected<::soap::Machine> restricted =
        ::soap::restrictDevices(machine, devicesOpt);
    if (!restricted)
      return fail(llvm::toString(restricted.takeError()));
    machine = *restricted;
  }
  int32_t numDevices = machine.numDevices();
  std::unique_ptr<::soap::ProfileTable> profile;
  if (!profileFile.empty()) {
    llvm::Expected<::soap::ProfileTable> table =
        ::soap::loadProfileTable(profileFile);
    if (!table)
      return fail(llvm::toString(table.takeError()));
    profile = std::make_unique<::soap::ProfileTable>(std::move(*table));
  }

  // The model.
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<mlir::soap::SOAPDialect>();
  mlir::soap::registerLowerToCPUDependencies(registry);
  mlir::soap::registerLowerToCUDADependencies(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // An error names its location; printing the op with it would print a
  // whole model for an error on its function.
  if (!llvm::cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
           ->getNumOccurrences())
    context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  PassManager pm(&context);
  mlir::soap::ImportOptions importOptions;
  importOptions.entry = entry;
  importOptions.batch = batch;
  // A training step needs parameters: an exporter's weight constants
  // become them (initialized from their values) when the model has none.
  importOptions.liftConstantParameters = train;
  // An executable's --random-inputs draws each weight He-uniform for its
  // fan-in, so that a deep model's activations stay finite.
  importOptions.randomInputRanges = emit != "none" && emit != "mlir";
  mlir::soap::buildImportPipeline(pm, importOptions);
  if (failed(pm.run(*module)))
    return 1;
  FailureOr<func::FuncOp> func = mlir::soap::findEntryFunction(*module, entry);
  if (failed(func))
    return 1;
  unsigned liftedConstants = 0;
  for (unsigned i = 0; i < (*func).getNumArguments(); ++i)
    liftedConstants += static_cast<bool>((*func).getArgAttr(
        i, mlir::soap::SOAPDialect::kInitialValueAttrName));
  // The normalizations whose running statistics stayed constants.
  llvm::SmallPtrSet<Operation *, 16> frozenNormalizations;
  if (liftedConstants)
    for (OpOperand *read :
         mlir::soap::getNormalizationStatisticReads(*func))
      if (read->get().getDefiningOp<arith::ConstantOp>())
        frozenNormalizations.insert(read->getOwner());
  mlir::soap::OpGraphExtractionOptions extractOptions;
  extractOptions.remarkReplicated = false;
  FailureOr<mlir::soap::ExtractedOpGraph> extracted =
      mlir::soap::extractOpGraph(*func, extractOptions);
  if (failed(extracted))
    return 1;
  // The training step differentiates layers; with none (every op computes
  // from parameters and constants alone, or there is no op) it has nothing
  // to build.
  if (train && func->getNumResults() == 0) {
    func->emitError() << "--train: function '" << func->getSymName()
                      << "' returns nothing, so there is no loss to "
                         "differentiate";
    return 1;
  }
  if (train && extracted->graph.nodes.empty()) {
    func->emitError() << "--train: function '" << func->getSymName()
                      << "' has no layer to train: no op reads its data "
                         "arguments (each reads only parameters and "
                         "constants; mark the arguments that are weights "
                         "with {soap.parameter} to say which are data)";
    return 1;
  }
  if (!splitReductions)
    for (::soap::Node &node : extracted->graph.nodes)
      node.reductionSplittable = false;
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");
  const ::soap::OpGraph &graph = extracted->graph;
  std::string modelName = llvm::sys::path::stem(inputFile).str();

  // The strategy.
  ::soap::CostModel costs(machine, profile.get());
  ::soap::Simulator sim(graph, machine, costs);
  ::soap::Strategy dataParallel =
      ::soap::dataParallelStrategy(graph, numDevices);
  double dataParallelSeconds = sim.simulateFull(dataParallel);
  ::soap::Strategy strategy;
  double searchSeconds = 0, chainsSeconds = 0, polishSeconds = 0;
  bool polishCut = false;
  int64_t simulations = 1;
  if (strategyFromFile) {
    auto text = llvm::MemoryBuffer::getFile(strategyKind);
    if (!text)
      return fail("cannot read strategy file '" + strategyKind +
                  "': " + text.getError().message());
    llvm::Expected<::soap::Strategy> read =
        ::soap::readStrategyJSON((*text)->getBuffer(), graph, numDevices);
    if (!read)
      return fail(strategyKind + ": " + llvm::toString(read.takeError()));
    strategy = std::move(*read);
  } else if (strategyKind == "data-parallel") {
    strategy = dataParallel;
  } else if (strategyKind == "single") {
    strategy = ::soap::singleDeviceStrategy(graph);
  } else if (strategyKind == "expert") {
    strategy = ::soap::expertStrategy(graph, numDevices);
  } else if (strategyKind == "random") {
    std::mt19937_64 rng(seed);
    for (const ::soap::Node &node : graph.nodes)
      strategy.configs.push_back(::soap::randomConfig(node, numDevices, rng));
  } else {
    ::soap::SearchOptions options;
    options.budgetSeconds = searchBudget;
    options.maxProposals = searchProposals;
    options.tiedMoveProbability = searchTiedMoves;
    options.unitMoveProbability = searchUnitMoves;
    options.recompute = recompute;
    options.threads =
        searchThreads > 0
            ? int32_t(searchThreads)
            : int32_t(std::max(1u, std::thread::hardware_concurrency()));
    options.seed = seed;
    options.quiet = quiet;
    if (!quiet)
      options.progress = [](const ::soap::SearchProgress &p) {
        soapc::printProgress(p);
      };
    ::soap::SearchResult result =
        ::soap::searchStrategy(graph, machine, costs, options);
    if (!quiet)
      soapc::endProgress();
    strategy = result.best;
    searchSeconds = result.searchSeconds;
    simulations = result.simulations;
    chainsSeconds = result.fits ? result.mcmcSeconds : result.bestSeconds;
    polishSeconds = result.polishSeconds;
    polishCut = result.polishCut;
  }
  std::string invalid = ::soap::validateStrategy(graph, strategy, numDevices);
  if (!invalid.empty())
    return fail("invalid strategy: " + invalid);
  double predicted = sim.simulateFull(strategy);

  soapc::SummaryInputs summary{modelName,           graph,         machine,
                               strategyKind.str(),  strategy,      predicted,
                               dataParallelSeconds, searchSeconds, simulations,
                               chainsSeconds,       sim.report(),
                               polishSeconds,       polishCut};
  // The summary goes to stdout, unless the program does (-o -).
  bool programToStdout = emit != "none" && outputFile == "-";
  llvm::raw_ostream &summaryOut = programToStdout ? llvm::errs() : llvm::outs();
  soapc::printSummary(summaryOut, summary);

  if (!strategyOut.empty() &&
      !writeFile(strategyOut, ::soap::writeStrategyJSON(graph, strategy)))
    return 1;
  if (!traceFile.empty() && !writeFile(traceFile, ::soap::writeChromeTrace(sim)))
    return 1;
  if (!reportFile.empty()) {
    llvm::json::Object report = soapc::buildReport(summary, sim);
    report["inputs"] = describeInputs(*func, train);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
    if (!writeFile(reportFile, text))
      return 1;
  }
  if (emit != "none") {
    mlir::soap::annotateStrategy(*extracted, strategy);
    (*module)->setAttr(mlir::soap::SOAPDialect::kMachineAttrName,
                       mlir::soap::machineToAttr(&context, machine));
    if (failed(verify(*module)))
      return fail("the annotated module does not verify");
  }
  if (train) {
    // The search optimized the training step already (the simulator derives
    // its backward tasks); the backward ops take configs from the forward.
    PassManager trainPm(&context);
    mlir::soap::TrainingStepOptions trainOptions;
    trainOptions.entry = (*func).getSymName().str();
    trainOptions.returns = trainReturns;
    trainOptions.learningRate = learningRate;
    trainPm.addPass(mlir::soap::createTrainingStep(trainOptions));
    if (failed(trainPm.run(*module)))
      return 1;
    summaryOut << "\ntraining step: forward, backward, ";
    if (trainReturns == "gradients")
      summaryOut << "returns the output(s) and dL/dx of every float "
                    "argument";
    else if (trainReturns == "outputs")
      summaryOut << "SGD update in place (learning rate "
                 << llvm::format("%g", learningRate.getValue())
                 << "); returns the output(s), the parameters stay on "
                    "their devices";
    else
      summaryOut << "SGD update (learning rate "
                 << llvm::format("%g", learningRate.getValue())
                 << "); returns the output(s) and the updated parameters";
    summaryOut << "; takes one cotangent dL/d(output) per output after "
                  "the model's arguments\n";
    if (liftedConstants) {
      summaryOut << "parameters: " << liftedConstants
                 << " lifted from the model's weight constants (one per "
                    "read of a splat read several times), now arguments "
                    "after its own, initialized from their values\n";
      if (!frozenNormalizations.empty())
        summaryOut << "normalization statistics: the running mean and "
                      "variance of "
                   << frozenNormalizations.size()
                   << " inference-mode normalization(s) stay constants "
                      "(not trained)\n";
    }
  }
  if (codegen && failed(generateCode(*module, (*func).getSymName(), machine)))
    return 1;
  if (emit == "mlir" || emit == "partitioned" || emit == "llvm") {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    if (!writeFile(outputFile, text))
      return 1;
  }
  if (sim.overCapacity()) {
    llvm::errs() << "soapc: warning: the strategy exceeds device memory";
    if (strategyKind != "search")
      llvm::errs() << " (--strategy=search recomputes activations where "
                      "that makes it fit)";
    else if (!recompute)
      llvm::errs() << " (without --recompute=false the search may "
                      "recompute activations to fit)";
    llvm::errs() << "\n";
  }
  return 0;
}
