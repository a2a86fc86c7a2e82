/*===- cuda_kernel_host.c - Emulated CUDA runtime: libraries and kernels --===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h), which
 * exists to test the CUDA lowering and libsoaprt_cuda without a GPU.
 *
 * Programs built for the emulation run their kernels as host loops, so no
 * GPU code ever executes here: cudaLibraryLoadData checks and records the
 * image (cubin, fatbin or PTX text), cudaLibraryGetKernel finds the kernel's
 * name in it (an ".entry NAME" of the PTX, a symbol name of the ELF),
 * cudaLaunchKernel checks the launch configuration (sm_90 limits, dynamic
 * shared memory above 48 KiB only after the kernel allowed it) and records
 * it in soaprt_emu_stats, and returns.
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SMEM (48 * 1024)
#define MAX_SMEM 232448 /* cudaDevAttrMaxSharedMemoryPerBlockOptin */

enum { IMAGE_PTX, IMAGE_CUBIN, IMAGE_FATBIN };

struct CUlib_st {
  const void *image;
  int format;
};
struct CUkern_st {
  struct CUlib_st *library;
  int maxDynamicSmem;
};
static soaprt_emu_registry_t gLibraries, gKernels;

/* The format of an image, or -1. Text is read up to its NUL only. */
static int imageFormat(const void *code) {
  const unsigned char *p = (const unsigned char *)code;
  size_t i = 0;
  while (i < 4096 && p[i] && (isprint(p[i]) || isspace(p[i])))
    ++i;
  if (i > 0 && (p[i] == 0 || i == 4096))
    return IMAGE_PTX;
  if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')
    return IMAGE_CUBIN;
  uint32_t magic;
  memcpy(&magic, p, 4);
  if (magic == 0xBA55ED50u || magic == 0x466243B1u) /* fatbin, its wrapper */
    return IMAGE_FATBIN;
  return -1;
}

/* Whether the image defines a kernel `name`. Fatbins are compressed and
 * not searched. */
static int hasKernel(const struct CUlib_st *library, const char *name) {
  size_t length = strlen(name);
  if (library->format == IMAGE_PTX) {
    const char *text = (const char *)library->image;
    for (const char *p = strstr(text, ".entry"); p; p = strstr(p + 1, ".entry")) {
      const char *q = p + 6;
      while (*q == ' ' || *q == '\t')
        ++q;
      if (!strncmp(q, name, length) &&
          (q[length] == '(' || isspace((unsigned char)q[length])))
        return 1;
    }
    return 0;
  }
  if (library->format == IMAGE_CUBIN) {
    /* A symbol name: NUL, the name, NUL, within the ELF's section table. */
    const unsigned char *elf = (const unsigned char *)library->image;
    uint64_t shoff, size;
    uint16_t shentsize, shnum;
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&shentsize, elf + 0x3a, 2);
    memcpy(&shnum, elf + 0x3c, 2);
    size = shoff + (uint64_t)shentsize * shnum;
    if (size < 64 || size > ((uint64_t)1 << 30))
      return 1; /* no plausible extent: not searched */
    for (uint64_t i = 0; i + length + 2 <= size; ++i)
      if (elf[i] == 0 && elf[i + length + 1] == 0 &&
          !memcmp(elf + i + 1, name, length))
        return 1;
    return 0;
  }
  return 1;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *jitOptions,
                                void **jitOptionsValues,
                                unsigned int numJitOptions,
                                enum cudaLibraryOption *libraryOptions,
                                void **libraryOptionValues,
                                unsigned int numLibraryOptions) {
  const char *call = "cudaLibraryLoadData";
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
      (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
    return soaprt_emu_result(cudaErrorInvalidValue);
  for (unsigned i = 0; i < numJitOptions; ++i)
    if (jitOptions[i] == cudaJitOptimizationLevel &&
        (uintptr_t)jitOptionsValues[i] > 4) {
      soaprt_emu_diag(call, "JIT optimization level %u is above 4",
                      (unsigned)(uintptr_t)jitOptionsValues[i]);
      return soaprt_emu_result(cudaErrorInvalidValue);
    }
  int format = imageFormat(code);
  if (format < 0) {
    soaprt_emu_diag(call, "%p is no cubin, fatbin or PTX image", code);
    return soaprt_emu_result(cudaErrorInvalidKernelImage);
  }
  struct CUlib_st *l = (struct CUlib_st *)calloc(1, sizeof(struct CUlib_st));
  if (!l || !soaprt_emu_registry_add(&gLibraries, l)) {
    free(l);
    return soaprt_emu_result(cudaErrorMemoryAllocation);
  }
  l->image = code;
  l->format = format;
  ++soaprt_emu_stats.libraryLoads;
  soaprt_emu_stats.lastImage = code;
  soaprt_emu_stats.lastJitOptions = numJitOptions;
  *library = l;
  return cudaSuccess;
}

cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!soaprt_emu_registry_remove(&gLibraries, library)) {
    soaprt_emu_diag("cudaLibraryUnload", "library %p is not loaded",
                    (void *)library);
    return soaprt_emu_result(cudaErrorInvalidResourceHandle);
  }
  for (size_t i = gKernels.count; i-- > 0;) { /* its kernels are stale */
    struct CUkern_st *k = (struct CUkern_st *)(uintptr_t)gKernels.items[i];
    if (k->library == library) {
      soaprt_emu_registry_remove(&gKernels, k);
      free(k);
    }
  }
  free(library);
  return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *kernel, cudaLibrary_t library,
                                 const char *name) {
  const char *call = "cudaLibraryGetKernel";
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!kernel || !name)
    return soaprt_emu_result(cudaErrorInvalidValue);
  if (!soaprt_emu_registry_contains(&gLibraries, library)) {
    soaprt_emu_diag(call, "library %p is not loaded", (void *)library);
    return soaprt_emu_result(cudaErrorInvalidResourceHandle);
  }
  if (!hasKernel(library, name)) {
    soaprt_emu_diag(call, "the image has no kernel '%s'", name);
    return soaprt_emu_result(cudaErrorSymbolNotFound);
  }
  struct CUkern_st *k = (struct CUkern_st *)calloc(1, sizeof(struct CUkern_st));
  if (!k || !soaprt_emu_registry_add(&gKernels, k)) {
    free(k);
    return soaprt_emu_result(cudaErrorMemoryAllocation);
  }
  k->library = library;
  k->maxDynamicSmem = DEFAULT_SMEM;
  ++soaprt_emu_stats.kernelLookups;
  *kernel = k;
  return cudaSuccess;
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
                                            enum cudaFuncAttribute attr,
                                            int value, int device) {
  const char *call = "cudaKernelSetAttributeForDevice";
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!soaprt_emu_registry_contains(&gKernels, kernel)) {
    soaprt_emu_diag(call, "kernel %p is unknown or unloaded", (void *)kernel);
    return soaprt_emu_result(cudaErrorInvalidDeviceFunction);
  }
  if (device < 0 || device >= soaprt_emu_device_count())
    return soaprt_emu_result(cudaErrorInvalidDevice);
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || value > MAX_SMEM) {
      soaprt_emu_diag(call, "%d bytes of dynamic shared memory (at most %d)",
                      value, MAX_SMEM);
      return soaprt_emu_result(cudaErrorInvalidValue);
    }
    kernel->maxDynamicSmem = value;
    soaprt_emu_stats.lastMaxDynamicSmem = value;
  }
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block,
                             void **args, size_t smem, cudaStream_t stream) {
  const char *call = "cudaLaunchKernel";
  cudaError_t e = soaprt_emu_check_stream(call, stream);
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!soaprt_emu_registry_contains(&gKernels, func)) {
    soaprt_emu_diag(call, "%p is no kernel of a loaded library", func);
    return soaprt_emu_result(cudaErrorInvalidDeviceFunction);
  }
  const struct CUkern_st *k = (const struct CUkern_st *)func;
  uint64_t threads = (uint64_t)block.x * block.y * block.z;
  if (grid.x < 1 || grid.x > 2147483647u || grid.y < 1 || grid.y > 65535 ||
      grid.z < 1 || grid.z > 65535 || block.x < 1 || block.x > 1024 ||
      block.y < 1 || block.y > 1024 || block.z < 1 || block.z > 64 ||
      threads > 1024) {
    soaprt_emu_diag(call, "grid %ux%ux%u, block %ux%ux%u", grid.x, grid.y,
                    grid.z, block.x, block.y, block.z);
    return soaprt_emu_result(cudaErrorInvalidConfiguration);
  }
  if (smem > (size_t)k->maxDynamicSmem) {
    soaprt_emu_diag(call,
                    "%zu bytes of dynamic shared memory, the kernel allows "
                    "%d",
                    smem, k->maxDynamicSmem);
    return soaprt_emu_result(cudaErrorInvalidValue);
  }
  ++soaprt_emu_stats.launches;
  soaprt_emu_stats.lastGrid = grid;
  soaprt_emu_stats.lastBlock = block;
  soaprt_emu_stats.lastArgs = args;
  soaprt_emu_stats.lastSmem = smem;
  return cudaSuccess;
}
