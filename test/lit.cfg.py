# -*- Python -*-
# lit configuration for the SOAP regression tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "SOAP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.soap_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py"]

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# ../shared (real external models) sits beside the checkout.
config.substitutions.append(("%shared", config.soap_shared_dir))
if os.path.isdir(os.path.join(config.soap_shared_dir, "models")):
    config.available_features.add("shared-models")

config.soap_tools_dir = os.path.join(config.soap_obj_root, "bin")
config.substitutions.append(("%soap_bin_dir", config.soap_tools_dir))
config.substitutions.append(("%soap_src_root", config.soap_src_root))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.soap_benchmarks_dir = os.path.join(config.soap_obj_root, "benchmarks")
tool_dirs = [config.soap_tools_dir, config.soap_benchmarks_dir,
             config.llvm_tools_dir]
tools = ["soap-opt", "soapc", "soap-models", "mlir-opt", "soap-search-table"]
# The search table's program is built with Google Benchmark's programs.
if os.path.exists(os.path.join(config.soap_benchmarks_dir, "soap-search-table")):
    config.available_features.add("search-table")
llvm_config.add_tool_substitutions(
    [t for t in tools if any(os.path.exists(os.path.join(d, t)) for d in tool_dirs)],
    tool_dirs)

# MPI: end-to-end tests of executables built by soapc (libsoaprt over MPI).
import shutil
config.soap_lib_dir = os.path.join(config.soap_obj_root, "lib")
config.substitutions.append(("%soap_lib_dir", config.soap_lib_dir))
if shutil.which("mpirun") and shutil.which("mpicc") and os.path.exists(
        os.path.join(config.soap_lib_dir, "libsoaprt.a")):
    config.available_features.add("mpi")
    # Each test's mpiruns keep Open MPI's session directory beside the
    # test's outputs (%t is expanded after this substitution): concurrent
    # lit workers sharing /tmp/ompi.* race on creating and removing it
    # ("orte_session_dir failed"), as numerics-suite.sh found.
    mpirun = "mpirun --oversubscribe --mca orte_tmpdir_base %t.ompi"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        mpirun += " --allow-run-as-root"
    config.substitutions.append(("%mpirun", mpirun))
    config.substitutions.append(("%mpicc", shutil.which("mpicc")))
for tool in ["soap-npy-compare", "mlir-translate"]:
    if any(os.path.exists(os.path.join(d, tool)) for d in tool_dirs):
        llvm_config.add_tool_substitutions([tool], tool_dirs)

# CUDA: the target compiles everywhere (LLVM's NVPTX back end); ptxas checks
# the PTX where a toolkit is installed; executables link where libsoaprt_cuda
# was built, and run where a GPU is.
cuda_bin = os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/bin"
ptxas = shutil.which("ptxas") or shutil.which("ptxas", path=cuda_bin)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if os.path.exists(os.path.join(config.soap_lib_dir, "libsoaprt_cuda.a")):
    config.available_features.add("cuda-runtime")
# The CUDA back end over a host emulation of the CUDA libraries
# (soapc --cuda-host-emulation): CUDA executables that run without a GPU.
if os.path.exists(os.path.join(config.soap_lib_dir, "libsoaprt_cuda_emu.a")):
    config.available_features.add("cuda-emulation")
if shutil.which("nvidia-smi"):
    import subprocess
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                 text=True, timeout=30).stdout
        if listing.startswith("GPU"):
            config.available_features.add("cuda-gpu")
    except Exception:
        pass

# The host's architecture (platform.machine(): x86_64, aarch64), for tests of
# code-model choices that only one architecture has.
import platform
config.available_features.add("host-" + platform.machine())

# strace counts a test program's memory system calls (keep-freed-memory.test).
if shutil.which("strace"):
    config.available_features.add("strace")

# The CPU target computes matmuls with OpenBLAS (libsoaprt_blas.a) where
# the build found it; %cpu_blas_link links a test program with both.
if config.soap_cpu_blas_link:
    config.available_features.add("cpu-blas")
    config.substitutions.append(
        ("%cpu_blas_link",
         os.path.join(config.soap_lib_dir, "libsoaprt_blas.a") + " " +
         " ".join(config.soap_cpu_blas_link.split(";"))))
