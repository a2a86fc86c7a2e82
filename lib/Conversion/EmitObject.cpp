//===- EmitObject.cpp - LLVM dialect -> host object file ------------------===//

#include "soap/Conversion/LowerToCPU.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

std::optional<std::string> mlir::soap::checkCPUName(StringRef cpu) {
  if (cpu == "host" || cpu == "generic")
    return std::nullopt;
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return "no LLVM target for " + triple.str() + ": " + error;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (info && info->isCPUStringValid(cpu))
    return std::nullopt;
  return "'" + cpu.str() + "' is no CPU LLVM knows for " + triple.str() +
         " (host, generic or a name such as x86-64-v3 or skylake-avx512)";
}

LogicalResult mlir::soap::emitObjectFile(ModuleOp module,
                                         llvm::raw_pwrite_stream &os,
                                         StringRef cpu, unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "soap");
  if (!llvmModule)
    return module.emitError("cannot translate the module to LLVM IR");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << "no LLVM target for " << triple.str() << ": "
                              << error;
  if (std::optional<std::string> problem = checkCPUName(cpu))
    return module.emitError() << "--mcpu: " << *problem;
  std::string cpuName = cpu.str();
  std::string features;
  if (cpu == "host") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures subtarget;
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      subtarget.AddFeature(feature, enabled);
    features = subtarget.getString();
  }
  llvm::TargetOptions targetOptions;
  llvm::CodeGenOptLevel codegenLevel =
      optLevel == 0   ? llvm::CodeGenOptLevel::None
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                      : llvm::CodeGenOptLevel::Aggressive;
  // x86-64's small code model addresses all data within 2 GiB of the code:
  // a model's input, parameter or output buffers (module globals) past that
  // fail to link ("relocation truncated to fit"). The medium code model puts
  // globals over 64 KiB (clang's -mlarge-data-threshold default) in .lbss /
  // .ldata, out of that range, and keeps the small ones where the small model
  // has them.
  std::optional<llvm::CodeModel::Model> codeModel;
  if (triple.getArch() == llvm::Triple::x86_64)
    codeModel = llvm::CodeModel::Medium;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpuName, features, targetOptions,
                                  llvm::Reloc::PIC_, codeModel, codegenLevel));
  if (!machine)
    return module.emitError("cannot create an LLVM target machine");
  if (codeModel)
    machine->setLargeDataThreshold(64 * 1024);
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);

  if (optLevel > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(machine.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                    : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                    : llvm::OptimizationLevel::O3;
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
    mpm.run(*llvmModule, mam);
  }
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return module.emitError("the generated LLVM IR does not verify");

  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("LLVM cannot emit an object file for ")
           << triple.str();
  codegen.run(*llvmModule);
  return success();
}
