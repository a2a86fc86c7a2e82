/*===- cuda_runtime_host.c - Emulated CUDA runtime: devices, streams, events
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h), which
 * exists to test the CUDA lowering and libsoaprt_cuda without a GPU.
 *
 * Devices: SOAPRT_EMU_GPUS of them (default 8), H200-like attributes.
 * Errors: names and messages as the real runtime's, and the last error
 * (cudaGetLastError). Streams and events are bookkeeping only (all work is
 * done when its call returns); using one that was never created or already
 * destroyed fails with cudaErrorInvalidResourceHandle.
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

soaprt_emu_stats_t soaprt_emu_stats;
soaprt_emu_options_t soaprt_emu_options;

#define MAX_DEVICES 64

static char gDiagnostic[1024];

void soaprt_emu_diag(const char *call, const char *fmt, ...) {
  char message[900];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  snprintf(gDiagnostic, sizeof(gDiagnostic), "%s: %s", call, message);
  if (!soaprt_emu_options.quiet) {
    fprintf(stderr, "soaprt-emu: %s\n", gDiagnostic);
    fflush(stderr);
  }
}

const char *soaprt_emu_last_diagnostic(void) { return gDiagnostic; }

/* -------------------------------------------------------------- registry */

int soaprt_emu_registry_add(soaprt_emu_registry_t *r, const void *item) {
  if (r->count == r->capacity) {
    size_t capacity = r->capacity ? 2 * r->capacity : 16;
    const void **items =
        (const void **)realloc((void *)r->items, capacity * sizeof(void *));
    if (!items)
      return 0;
    r->items = items;
    r->capacity = capacity;
  }
  r->items[r->count++] = item;
  return 1;
}

int soaprt_emu_registry_contains(const soaprt_emu_registry_t *r,
                                 const void *item) {
  for (size_t i = r->count; i-- > 0;) /* recent objects first */
    if (r->items[i] == item)
      return 1;
  return 0;
}

int soaprt_emu_registry_remove(soaprt_emu_registry_t *r, const void *item) {
  for (size_t i = r->count; i-- > 0;)
    if (r->items[i] == item) {
      r->items[i] = r->items[--r->count];
      return 1;
    }
  return 0;
}

/* --------------------------------------------------------------- devices */

static int gDeviceCount = -1;
static int gCurrentDevice = 0;
static cudaError_t gLastError = cudaSuccess;

int soaprt_emu_device_count(void) {
  if (gDeviceCount < 0) {
    const char *text = getenv("SOAPRT_EMU_GPUS");
    long count = 8;
    if (text && *text) {
      char *end = NULL;
      count = strtol(text, &end, 10);
      if (*end || count < 0 || count > MAX_DEVICES) {
        soaprt_emu_diag("SOAPRT_EMU_GPUS",
                        "'%s' is not a device count from 0 to %d: no devices",
                        text, MAX_DEVICES);
        count = 0;
      }
    }
    gDeviceCount = (int)count;
  }
  return gDeviceCount;
}

int soaprt_emu_current_device(void) { return gCurrentDevice; }

cudaError_t soaprt_emu_need_device(void) {
  return soaprt_emu_device_count() > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t soaprt_emu_result(cudaError_t e) {
  if (e != cudaSuccess)
    gLastError = e;
  return e;
}

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count)
    return soaprt_emu_result(cudaErrorInvalidValue);
  *count = soaprt_emu_device_count();
  return soaprt_emu_result(soaprt_emu_need_device());
}

cudaError_t cudaSetDevice(int device) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (device < 0 || device >= soaprt_emu_device_count())
    return soaprt_emu_result(cudaErrorInvalidDevice);
  gCurrentDevice = device;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                   int device) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!value)
    return soaprt_emu_result(cudaErrorInvalidValue);
  if (device < 0 || device >= soaprt_emu_device_count())
    return soaprt_emu_result(cudaErrorInvalidDevice);
  int v;
  switch (attr) { /* an H200 (sm_90) */
  case cudaDevAttrMaxThreadsPerBlock: v = 1024; break;
  case cudaDevAttrMaxBlockDimX: v = 1024; break;
  case cudaDevAttrMaxBlockDimY: v = 1024; break;
  case cudaDevAttrMaxBlockDimZ: v = 64; break;
  case cudaDevAttrMaxGridDimX: v = 2147483647; break;
  case cudaDevAttrMaxGridDimY: v = 65535; break;
  case cudaDevAttrMaxGridDimZ: v = 65535; break;
  case cudaDevAttrMaxSharedMemoryPerBlock: v = 49152; break;
  case cudaDevAttrTotalConstantMemory: v = 65536; break;
  case cudaDevAttrWarpSize: v = 32; break;
  case cudaDevAttrMaxPitch: v = 2147483647; break;
  case cudaDevAttrMaxRegistersPerBlock: v = 65536; break;
  case cudaDevAttrClockRate: v = 1980000; break;
  case cudaDevAttrTextureAlignment: v = 512; break;
  case cudaDevAttrMultiProcessorCount: v = 132; break;
  case cudaDevAttrIntegrated: v = 0; break;
  case cudaDevAttrPciBusId: v = 0x18 + device; break;
  case cudaDevAttrPciDeviceId: v = 0; break;
  case cudaDevAttrPciDomainId: v = 0; break;
  case cudaDevAttrMemoryClockRate: v = 2619000; break;
  case cudaDevAttrGlobalMemoryBusWidth: v = 6144; break;
  case cudaDevAttrL2CacheSize: v = 52428800; break;
  case cudaDevAttrMaxThreadsPerMultiProcessor: v = 2048; break;
  case cudaDevAttrAsyncEngineCount: v = 2; break;
  case cudaDevAttrUnifiedAddressing: v = 1; break;
  case cudaDevAttrComputeCapabilityMajor: v = 9; break;
  case cudaDevAttrComputeCapabilityMinor: v = 0; break;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = 233472; break;
  case cudaDevAttrMaxRegistersPerMultiprocessor: v = 65536; break;
  case cudaDevAttrManagedMemory: v = 1; break;
  case cudaDevAttrConcurrentManagedAccess: v = 1; break;
  case cudaDevAttrCooperativeLaunch: v = 1; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = 232448; break;
  case cudaDevAttrMaxBlocksPerMultiprocessor: v = 32; break;
  case cudaDevAttrMemoryPoolsSupported: v = 1; break;
  case cudaDevAttrConcurrentKernels: v = 1; break;
  case cudaDevAttrEccEnabled: v = 1; break;
  case cudaDevAttrKernelExecTimeout: v = 0; break;
  default:
    soaprt_emu_diag("cudaDeviceGetAttribute",
                    "attribute %d is not emulated (add it to "
                    "cuda_runtime_host.c)",
                    (int)attr);
    return soaprt_emu_result(cudaErrorInvalidValue);
  }
  *value = v;
  return cudaSuccess;
}

/* ---------------------------------------------------------------- errors */

#define ERRORS(X)                                                              \
  X(cudaSuccess, "no error")                                                   \
  X(cudaErrorInvalidValue, "invalid argument")                                 \
  X(cudaErrorMemoryAllocation, "out of memory")                                \
  X(cudaErrorInitializationError, "initialization error")                      \
  X(cudaErrorInvalidConfiguration, "invalid configuration argument")           \
  X(cudaErrorInvalidPitchValue, "invalid pitch argument")                      \
  X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")      \
  X(cudaErrorInvalidDeviceFunction, "invalid device function")                 \
  X(cudaErrorNoDevice, "no CUDA-capable device is detected")                   \
  X(cudaErrorInvalidDevice, "invalid device ordinal")                          \
  X(cudaErrorInvalidKernelImage, "device kernel image is invalid")             \
  X(cudaErrorInvalidPtx, "a PTX JIT compilation failed")                       \
  X(cudaErrorInvalidResourceHandle, "invalid resource handle")                 \
  X(cudaErrorSymbolNotFound, "named symbol not found")                         \
  X(cudaErrorIllegalAddress, "an illegal memory access was encountered")       \
  X(cudaErrorLaunchFailure, "unspecified launch failure")                      \
  X(cudaErrorNotSupported, "operation not supported")                          \
  X(cudaErrorUnknown, "unknown error")

const char *cudaGetErrorName(cudaError_t e) {
#define NAME(code, text)                                                       \
  if (e == code)                                                               \
    return #code;
  ERRORS(NAME)
#undef NAME
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e) {
#define TEXT(code, text)                                                       \
  if (e == code)                                                               \
    return text;
  ERRORS(TEXT)
#undef TEXT
  return "unrecognized error code";
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = gLastError;
  gLastError = cudaSuccess;
  return e;
}

/* --------------------------------------------------------------- streams */

struct CUstream_st {
  unsigned flags;
  int device;
};
struct CUevent_st {
  unsigned flags;
  int recorded;
};
static soaprt_emu_registry_t gStreams, gEvents;

int soaprt_emu_stream_valid(cudaStream_t stream) {
  return stream == NULL || stream == cudaStreamLegacy ||
         stream == cudaStreamPerThread ||
         soaprt_emu_registry_contains(&gStreams, stream);
}

cudaError_t soaprt_emu_check_stream(const char *call, cudaStream_t stream) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return e;
  if (!soaprt_emu_stream_valid(stream)) {
    soaprt_emu_diag(call, "stream %p was not created or is destroyed",
                    (void *)stream);
    return cudaErrorInvalidResourceHandle;
  }
  return cudaSuccess;
}

static cudaError_t checkEvent(const char *call, cudaEvent_t event) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return e;
  if (!soaprt_emu_registry_contains(&gEvents, event)) {
    soaprt_emu_diag(call, "event %p was not created or is destroyed",
                    (void *)event);
    return cudaErrorInvalidResourceHandle;
  }
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!stream || (flags & ~(unsigned)cudaStreamNonBlocking))
    return soaprt_emu_result(cudaErrorInvalidValue);
  struct CUstream_st *s =
      (struct CUstream_st *)calloc(1, sizeof(struct CUstream_st));
  if (!s || !soaprt_emu_registry_add(&gStreams, s)) {
    free(s);
    return soaprt_emu_result(cudaErrorMemoryAllocation);
  }
  s->flags = flags;
  s->device = gCurrentDevice;
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!soaprt_emu_registry_remove(&gStreams, stream)) {
    soaprt_emu_diag("cudaStreamDestroy",
                    "stream %p was not created or is destroyed already",
                    (void *)stream);
    return soaprt_emu_result(cudaErrorInvalidResourceHandle);
  }
  free(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  cudaError_t e = soaprt_emu_check_stream("cudaStreamSynchronize", stream);
  if (e == cudaSuccess)
    soaprt_emu_pool_sync();
  return soaprt_emu_result(e);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned flags) {
  cudaError_t e = soaprt_emu_check_stream("cudaStreamWaitEvent", stream);
  if (e == cudaSuccess)
    e = checkEvent("cudaStreamWaitEvent", event);
  if (e == cudaSuccess && (flags & ~(unsigned)cudaEventWaitExternal))
    e = cudaErrorInvalidValue;
  return soaprt_emu_result(e);
}

/* ---------------------------------------------------------------- events */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  unsigned known =
      cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (!event || (flags & ~known) ||
      ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
    return soaprt_emu_result(cudaErrorInvalidValue);
  struct CUevent_st *ev =
      (struct CUevent_st *)calloc(1, sizeof(struct CUevent_st));
  if (!ev || !soaprt_emu_registry_add(&gEvents, ev)) {
    free(ev);
    return soaprt_emu_result(cudaErrorMemoryAllocation);
  }
  ev->flags = flags;
  *event = ev;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  cudaError_t e = checkEvent("cudaEventDestroy", event);
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  soaprt_emu_registry_remove(&gEvents, event);
  free(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  cudaError_t e = checkEvent("cudaEventRecord", event);
  if (e == cudaSuccess)
    e = soaprt_emu_check_stream("cudaEventRecord", stream);
  if (e == cudaSuccess)
    event->recorded = 1;
  return soaprt_emu_result(e);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  cudaError_t e = checkEvent("cudaEventSynchronize", event);
  if (e == cudaSuccess)
    soaprt_emu_pool_sync();
  return soaprt_emu_result(e);
}
