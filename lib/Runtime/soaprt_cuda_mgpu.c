/*===- soaprt_cuda_mgpu.c - MLIR's GPU host ABI (mgpu*) -------------------===*
 *
 * What LLVM 22's gpu-to-llvm and gpu.binary translation call (signatures of
 * mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp; checked against the
 * LLVM IR mlir-translate-22 emits). Debian ships no libmlir_cuda_runtime.
 *
 * Kernels load through the runtime API's context-independent libraries
 * (cudaLibraryLoadData: cubin, fatbin or NUL-terminated PTX, which the
 * driver JIT-compiles) and launch with cudaLaunchKernel on a cudaKernel_t
 * (cudaLibraryGetKernel). The runtime API rather than the driver API keeps
 * the executables free of a link-time dependency on libcuda.so.1: the
 * static cudart loads the driver when it starts, so a machine without one
 * gets soaprt's "no CUDA GPU" message instead of a loader error.
 *
 * The translation loads modules from global constructors, before main() and
 * so before soaprt_init chose the GPU: mgpuModuleLoad* only record the
 * image; the first mgpuModuleGetFunction loads it. Functions are cached per
 * (module, name pointer): the compiled code asks again before every launch.
 *
 * Streams: the compiled code wraps every launch in mgpuStreamCreate ->
 * mgpuLaunchKernel -> mgpuStreamSynchronize -> mgpuStreamDestroy. Create
 * returns the rank's stream, Destroy does nothing, and Synchronize does
 * nothing either unless an mgpuMemcpy was queued since the last wait (its
 * destination may be host memory the program reads next). That is safe
 * because all device work of the rank (kernels, library calls, NCCL, copies,
 * stream-ordered frees) is ordered on that one stream, and the host reads
 * device memory only inside the runtime, which waits first.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct module {
  const void *image;
  size_t size;  /* 0 for PTX */
  int jit;      /* PTX text */
  int optLevel; /* for the JIT */
  int loaded;
  cudaLibrary_t library;
  struct module *next;
} module_t;
static module_t *gModules = NULL;

typedef struct function {
  const module_t *module;
  const char *name; /* the compiled code's string: part of the key */
  char *label;      /* "kernel NAME", for messages */
  cudaKernel_t kernel;
  int32_t maxDynamicSmem; /* bytes the kernel was allowed so far */
} function_t;

/* (module, name pointer) -> function: open addressing. */
static function_t **gFunctions = NULL;
static size_t gFunctionSlots = 0, gFunctionCount = 0;

static int gCopyPending = 0; /* an mgpuMemcpy since the last wait */

/* The JIT's error log. Static: with lazy module loading the driver may
   compile later than cudaLibraryLoadData returns. */
static char gJitLog[8192];

/* ---------------------------------------------------------------- modules */

static module_t *recordModule(const void *image, size_t size, int jit,
                              int optLevel) {
  module_t *m = (module_t *)calloc(1, sizeof(module_t));
  if (!m) {
    fprintf(stderr, "soaprt: error: out of memory loading a GPU module\n");
    exit(1);
  }
  m->image = image;
  m->size = size;
  m->jit = jit;
  m->optLevel = optLevel;
  m->next = gModules;
  gModules = m;
  return m;
}

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  return recordModule(data, gpuBlobSize, 0, 0);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return recordModule(data, 0, 1, optLevel);
}

void mgpuModuleUnload(void *module) {
  /* Called from global destructors, after soaprt_finalize unloaded every
     library; earlier calls unload now. */
  module_t *m = (module_t *)module;
  if (!m || !m->loaded || !soaprt_cuda.initialized || soaprt_cuda.finalized)
    return;
  soaprt_cuda_sync("mgpuModuleUnload");
  SOAPRT_CUDA_CHECK(cudaLibraryUnload(m->library), "mgpuModuleUnload");
  m->loaded = 0;
  /* Its functions are stale now. */
  for (size_t i = 0; i < gFunctionSlots; ++i)
    if (gFunctions[i] && gFunctions[i]->module == m)
      gFunctions[i]->kernel = NULL;
}

static void loadModule(module_t *m, const char *kernel) {
  char *log = gJitLog;
  memset(gJitLog, 0, sizeof(gJitLog));
  enum cudaJitOption options[3] = {cudaJitErrorLogBuffer,
                                   cudaJitErrorLogBufferSizeBytes,
                                   cudaJitOptimizationLevel};
  void *values[3] = {log, (void *)(uintptr_t)(sizeof(gJitLog) - 1),
                     (void *)(uintptr_t)(unsigned)m->optLevel};
  cudaError_t e = cudaLibraryLoadData(
      &m->library, m->image, m->jit ? options : NULL, m->jit ? values : NULL,
      m->jit ? 3 : 0, NULL, NULL, 0);
  if (e != cudaSuccess) {
    char detail[sizeof(gJitLog) + 256];
    snprintf(detail, sizeof(detail), "%s (%s)%s%s", cudaGetErrorString(e),
             cudaGetErrorName(e), log[0] ? "; JIT log:\n" : "", log);
    soaprt_cuda_fail(m->jit ? "cudaLibraryLoadData (PTX)"
                            : "cudaLibraryLoadData (cubin)",
                     kernel, detail);
  }
  m->loaded = 1;
}

/* -------------------------------------------------------------- functions */

static size_t functionSlot(function_t *const *table, size_t slots,
                           const module_t *m, const char *name) {
  uint64_t h = ((uint64_t)(uintptr_t)m * 0x9E3779B97F4A7C15ull) ^
               ((uint64_t)(uintptr_t)name * 0xC2B2AE3D27D4EB4Full);
  size_t i = (size_t)(h >> 17) & (slots - 1);
  while (table[i] && (table[i]->module != m || table[i]->name != name))
    i = (i + 1) & (slots - 1);
  return i;
}

static void growFunctions(void) {
  size_t slots = gFunctionSlots ? gFunctionSlots * 2 : 256;
  function_t **table = (function_t **)calloc(slots, sizeof(function_t *));
  if (!table)
    soaprt_fatal("mgpuModuleGetFunction: out of memory");
  for (size_t i = 0; i < gFunctionSlots; ++i)
    if (gFunctions[i])
      table[functionSlot(table, slots, gFunctions[i]->module,
                         gFunctions[i]->name)] = gFunctions[i];
  free(gFunctions);
  gFunctions = table;
  gFunctionSlots = slots;
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  module_t *m = (module_t *)module;
  if (!m || !name)
    soaprt_fatal("mgpuModuleGetFunction: no module or name");
  if (2 * (gFunctionCount + 1) > gFunctionSlots)
    growFunctions();
  size_t slot = functionSlot(gFunctions, gFunctionSlots, m, name);
  function_t *f = gFunctions[slot];
  if (f && f->kernel)
    return f;
  (void)soaprt_cuda_stream(name); /* fatal before soaprt_init */
  if (!f) {
    f = (function_t *)calloc(1, sizeof(function_t));
    size_t length = strlen(name) + 8;
    if (f)
      f->label = (char *)malloc(length);
    if (!f || !f->label)
      soaprt_fatal("mgpuModuleGetFunction: out of memory");
    snprintf(f->label, length, "kernel %s", name);
    f->module = m;
    f->name = name;
    gFunctions[slot] = f;
    ++gFunctionCount;
  }
  if (!m->loaded)
    loadModule(m, f->label);
  cudaError_t e = cudaLibraryGetKernel(&f->kernel, m->library, name);
  if (e != cudaSuccess) {
    char detail[sizeof(gJitLog) + 256];
    snprintf(detail, sizeof(detail), "%s (%s)%s%s", cudaGetErrorString(e),
             cudaGetErrorName(e), gJitLog[0] ? "; JIT log:\n" : "", gJitLog);
    soaprt_cuda_fail("cudaLibraryGetKernel", f->label, detail);
  }
  f->maxDynamicSmem = 48 * 1024; /* allowed without opting in */
  return f;
}

static unsigned launchDim(intptr_t v, const char *what, const char *kernel) {
  if (v < 0 || (uintmax_t)v > UINT_MAX)
    soaprt_fatal("%s: %s %lld is out of range", kernel, what, (long long)v);
  return (unsigned)v;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount) {
  (void)paramsCount;
  function_t *f = (function_t *)function;
  if (!f || !f->kernel)
    soaprt_fatal("mgpuLaunchKernel: no kernel");
  const char *name = f->label;
  if (extra)
    soaprt_fatal("%s: launch with 'extra' arguments is not supported", name);
  dim3 grid = {launchDim(gridX, "grid size", name),
               launchDim(gridY, "grid size", name),
               launchDim(gridZ, "grid size", name)};
  dim3 block = {launchDim(blockX, "block size", name),
                launchDim(blockY, "block size", name),
                launchDim(blockZ, "block size", name)};
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return; /* nothing to do (a dynamic size was 0) */
  if (smem < 0)
    soaprt_fatal("%s: negative shared memory size", name);
  if (smem > f->maxDynamicSmem) {
    SOAPRT_CUDA_CHECK(cudaKernelSetAttributeForDevice(
                          f->kernel,
                          cudaFuncAttributeMaxDynamicSharedMemorySize, smem,
                          soaprt_cuda.device),
                      name);
    f->maxDynamicSmem = smem;
  }
  cudaStream_t s = stream ? (cudaStream_t)stream : soaprt_cuda_stream(name);
  SOAPRT_CUDA_CHECK(cudaLaunchKernel((const void *)f->kernel, grid, block,
                                     params, (size_t)smem, s),
                    name);
  soaprt_cuda_after_call(name);
}

void soaprt_cuda_mgpu_finalize(void) {
  for (size_t i = 0; i < gFunctionSlots; ++i)
    if (gFunctions[i])
      gFunctions[i]->kernel = NULL;
  for (module_t *m = gModules; m; m = m->next)
    if (m->loaded) {
      SOAPRT_CUDA_CHECK(cudaLibraryUnload(m->library), "soaprt_finalize");
      m->loaded = 0;
    }
}

/* ---------------------------------------------------------------- streams */

void *mgpuStreamCreate(void) { return soaprt_cuda_stream("mgpuStreamCreate"); }

void mgpuStreamDestroy(void *stream) { (void)stream; }

void mgpuStreamSynchronize(void *stream) {
  (void)stream;
  if (gCopyPending) {
    soaprt_cuda_sync("mgpuStreamSynchronize");
    gCopyPending = 0;
  }
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  cudaStream_t s =
      stream ? (cudaStream_t)stream : soaprt_cuda_stream("mgpuStreamWaitEvent");
  SOAPRT_CUDA_CHECK(cudaStreamWaitEvent(s, (cudaEvent_t)event, 0),
                    "mgpuStreamWaitEvent");
}

/* ----------------------------------------------------------------- events */

void *mgpuEventCreate(void) {
  (void)soaprt_cuda_stream("mgpuEventCreate");
  cudaEvent_t event = NULL;
  SOAPRT_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                    "mgpuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  if (!soaprt_cuda.initialized || soaprt_cuda.finalized)
    return;
  SOAPRT_CUDA_CHECK(cudaEventDestroy((cudaEvent_t)event), "mgpuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  SOAPRT_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)event),
                    "mgpuEventSynchronize");
  gCopyPending = 0; /* the stream has only ever one queue */
}

void mgpuEventRecord(void *event, void *stream) {
  cudaStream_t s =
      stream ? (cudaStream_t)stream : soaprt_cuda_stream("mgpuEventRecord");
  SOAPRT_CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, s), "mgpuEventRecord");
}

/* ----------------------------------------------------------------- memory */

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared) {
  (void)stream; /* the rank's stream */
  const char *op = "gpu.alloc";
  if (!isHostShared)
    return soaprt_cuda_alloc((size_t)sizeBytes, op);
  (void)soaprt_cuda_stream(op);
  void *ptr = NULL;
  SOAPRT_CUDA_CHECK(cudaMallocManaged(&ptr, sizeBytes ? (size_t)sizeBytes : 1,
                                      cudaMemAttachGlobal),
                    op);
  soaprt_cuda.outsidePoolBytes += (int64_t)sizeBytes;
  return ptr;
}

void mgpuMemFree(void *ptr, void *stream) {
  (void)stream;
  const char *op = "gpu.dealloc";
  if (!ptr || !soaprt_cuda.initialized || soaprt_cuda.finalized)
    return;
  struct cudaPointerAttributes attributes;
  memset(&attributes, 0, sizeof(attributes));
  SOAPRT_CUDA_CHECK(cudaPointerGetAttributes(&attributes, ptr), op);
  if (attributes.type == cudaMemoryTypeManaged) {
    soaprt_cuda_sync(op); /* cudaFree must not race queued work */
    SOAPRT_CUDA_CHECK(cudaFree(ptr), op);
    return;
  }
  soaprt_cuda_free(ptr, op);
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  const char *op = "gpu.memcpy";
  cudaStream_t s = stream ? (cudaStream_t)stream : soaprt_cuda_stream(op);
  if (sizeBytes)
    SOAPRT_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, sizeBytes, cudaMemcpyDefault, s), op);
  gCopyPending = 1;
}

/* `count` copies of a 2- or 4-byte pattern: one memset when its bytes are
 * equal, else the first element from the host and doubling device copies. */
static void fill(void *dst, const void *pattern, size_t patternBytes,
                 size_t count, void *stream) {
  const char *op = "gpu.memset";
  cudaStream_t s = stream ? (cudaStream_t)stream : soaprt_cuda_stream(op);
  if (count == 0)
    return;
  const unsigned char *p = (const unsigned char *)pattern;
  int uniform = 1;
  for (size_t i = 1; i < patternBytes; ++i)
    uniform &= p[i] == p[0];
  if (uniform) {
    SOAPRT_CUDA_CHECK(cudaMemsetAsync(dst, p[0], count * patternBytes, s), op);
    return;
  }
  /* From pageable memory: staged before the call returns. */
  SOAPRT_CUDA_CHECK(
      cudaMemcpyAsync(dst, pattern, patternBytes, cudaMemcpyHostToDevice, s),
      op);
  char *base = (char *)dst;
  for (size_t done = 1; done < count;) {
    size_t chunk = done < count - done ? done : count - done;
    SOAPRT_CUDA_CHECK(cudaMemcpyAsync(base + done * patternBytes, base,
                                      chunk * patternBytes,
                                      cudaMemcpyDeviceToDevice, s),
                      op);
    done += chunk;
  }
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  uint32_t v = value;
  fill(dst, &v, 4, count, stream);
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  uint16_t v = value;
  fill(dst, &v, 2, count, stream);
}

void mgpuSetDefaultDevice(int32_t device) {
  (void)device; /* the runtime gives each rank its GPU */
}
