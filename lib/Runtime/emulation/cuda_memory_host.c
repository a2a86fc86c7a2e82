/*===- cuda_memory_host.c - Emulated CUDA runtime: device memory ----------===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h), which
 * exists to test the CUDA lowering and libsoaprt_cuda without a GPU.
 *
 * "Device memory" is host memory that this file tracks in a table sorted by
 * address: 256-byte aligned, 256 guard bytes before and after it (checked
 * when it is freed: an out-of-bounds write by emulated kernels or library
 * calls fails the free with cudaErrorIllegalAddress), new memory filled with
 * 0xff bytes (NaN as f32, -1 as integers) so that reads of uninitialized
 * memory show. cudaPointerGetAttributes reports the allocations as device
 * (cudaMalloc, cudaMallocAsync) or managed memory, anything else as
 * unregistered host memory. Each device has its default pool, whose used
 * and reserved bytes follow cudaMallocAsync / cudaFreeAsync (reserved bytes
 * shrink to the release threshold at synchronization points).
 *
 * Strict where the real runtime fails: copies whose explicit kind does not
 * match where the pointers are, copies and memsets that run past the end of
 * an allocation, overlapping copies, cudaMemcpy2D pitch rules, frees of
 * pointers that are not the start of a live allocation.
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 256
#define GUARD 256
#define GUARD_BYTE 0xa5
#define FILL_BYTE 0xff
#define MAX_DEVICES 64

typedef struct allocation {
  char *base;
  size_t size;   /* requested bytes */
  size_t padded; /* size rounded up to ALIGN: the guard follows */
  int kind;      /* SOAPRT_EMU_DEVICE or SOAPRT_EMU_MANAGED */
  int device;
  int pooled; /* cudaMallocAsync: counts in the device's pool */
} allocation_t;

static allocation_t *gTable = NULL; /* sorted by base */
static size_t gCount = 0, gCapacity = 0;
static uint64_t gDeviceUsed[MAX_DEVICES];

struct CUmemPoolHandle_st {
  int device;
  uint64_t threshold;
  uint64_t usedCurrent, usedHigh, reservedCurrent, reservedHigh;
  int reuse[3]; /* cudaMemPoolReuse* attributes */
};
static struct CUmemPoolHandle_st gPools[MAX_DEVICES];
static cudaMemPool_t gCurrentPool[MAX_DEVICES];

/* ----------------------------------------------------------------- table */

/* Index of the first allocation whose base is above `p`. */
static size_t upperBound(uintptr_t p) {
  size_t lo = 0, hi = gCount;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)gTable[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

enum { OUTSIDE, INSIDE, IN_GUARD };

/* Where `p` is: inside an allocation (*out set), in the guard bytes around
 * one (*out set), or outside every allocation. */
static int locate(const void *ptr, allocation_t **out) {
  uintptr_t p = (uintptr_t)ptr;
  size_t i = upperBound(p);
  if (i > 0) {
    allocation_t *a = &gTable[i - 1];
    uintptr_t base = (uintptr_t)a->base;
    if (p < base + a->size || (a->size == 0 && p == base)) {
      *out = a;
      return INSIDE;
    }
    if (p < base + a->padded + GUARD) {
      *out = a;
      return IN_GUARD;
    }
  }
  if (i < gCount && p + GUARD >= (uintptr_t)gTable[i].base) {
    *out = &gTable[i];
    return IN_GUARD;
  }
  return OUTSIDE;
}

int soaprt_emu_memory_kind(const void *p) {
  allocation_t *a = NULL;
  return locate(p, &a) == INSIDE ? a->kind : SOAPRT_EMU_HOST;
}

int soaprt_emu_check_device(const char *call, const char *what, const void *p,
                            int64_t lo, int64_t hi) {
  if (hi <= lo)
    return 1;
  const char *first = (const char *)p + lo;
  allocation_t *a = NULL;
  int where = locate(first, &a);
  if (where == IN_GUARD) {
    soaprt_emu_diag(call,
                    "%s at %p is just outside the device allocation of %zu "
                    "bytes at %p",
                    what, (const void *)first, a->size, (void *)a->base);
    return 0;
  }
  if (where == OUTSIDE) {
    soaprt_emu_diag(call, "%s at %p is not device memory", what,
                    (const void *)first);
    return 0;
  }
  if ((uint64_t)(hi - lo) > (uint64_t)(a->base + a->size - first)) {
    soaprt_emu_diag(call,
                    "%s: %lld bytes at %p run past the end of the device "
                    "allocation of %zu bytes at %p",
                    what, (long long)(hi - lo), (const void *)first, a->size,
                    (const void *)a->base);
    return 0;
  }
  return 1;
}

static uint64_t memoryLimit(void) {
  static uint64_t limit = 0;
  if (!limit) {
    const char *text = getenv("SOAPRT_EMU_DEVICE_MEMORY");
    limit = (uint64_t)141 << 30;
    if (text && *text) {
      char *end = NULL;
      unsigned long long v = strtoull(text, &end, 10);
      if (*end == 0 && v > 0)
        limit = v;
      else
        soaprt_emu_diag("SOAPRT_EMU_DEVICE_MEMORY",
                        "'%s' is not a byte count: using 141 GiB", text);
    }
  }
  return limit;
}

static void fillGuards(char *raw, size_t size, size_t padded) {
  memset(raw, GUARD_BYTE, GUARD);
  memset(raw + GUARD + size, GUARD_BYTE, padded - size + GUARD);
}

/* The offset of the first overwritten guard byte (negative: before the
 * allocation), or 0 when the guards are intact. */
static long long damagedGuard(const allocation_t *a) {
  const unsigned char *raw = (const unsigned char *)a->base - GUARD;
  for (size_t i = 0; i < GUARD; ++i)
    if (raw[i] != GUARD_BYTE)
      return (long long)i - GUARD;
  const unsigned char *tail = (const unsigned char *)a->base + a->size;
  for (size_t i = 0; i < a->padded - a->size + GUARD; ++i)
    if (tail[i] != GUARD_BYTE)
      return (long long)(a->size + i);
  return 0;
}

static cudaError_t allocate(void **ptr, size_t size, int kind, int pooled) {
  int device = soaprt_emu_current_device();
  if (size > memoryLimit() - gDeviceUsed[device])
    return cudaErrorMemoryAllocation;
  size_t padded = (size + ALIGN - 1) / ALIGN * ALIGN;
  if (padded < size || padded > SIZE_MAX - 2 * GUARD)
    return cudaErrorMemoryAllocation;
  char *raw = (char *)aligned_alloc(ALIGN, padded + 2 * GUARD);
  if (!raw)
    return cudaErrorMemoryAllocation;
  if (gCount == gCapacity) {
    size_t capacity = gCapacity ? 2 * gCapacity : 256;
    allocation_t *table =
        (allocation_t *)realloc(gTable, capacity * sizeof(allocation_t));
    if (!table) {
      free(raw);
      return cudaErrorMemoryAllocation;
    }
    gTable = table;
    gCapacity = capacity;
  }
  fillGuards(raw, size, padded);
  memset(raw + GUARD, FILL_BYTE, size);
  allocation_t a = {raw + GUARD, size, padded, kind, device, pooled};
  size_t i = upperBound((uintptr_t)a.base);
  memmove(&gTable[i + 1], &gTable[i], (gCount - i) * sizeof(allocation_t));
  gTable[i] = a;
  ++gCount;
  gDeviceUsed[device] += size;
  ++soaprt_emu_stats.liveAllocations;
  *ptr = a.base;
  return cudaSuccess;
}

static cudaMemPool_t currentPool(int device) {
  if (!gCurrentPool[device]) {
    gPools[device].device = device;
    gPools[device].reuse[0] = gPools[device].reuse[1] =
        gPools[device].reuse[2] = 1;
    gCurrentPool[device] = &gPools[device];
  }
  return gCurrentPool[device];
}

static cudaError_t release(void *ptr, const char *call) {
  allocation_t *a = NULL;
  if (locate(ptr, &a) != INSIDE || a->base != (char *)ptr) {
    soaprt_emu_diag(call,
                    "%p is not the start of a live device allocation "
                    "(freed twice, host memory, or an interior pointer)",
                    ptr);
    return cudaErrorInvalidValue;
  }
  long long damaged = damagedGuard(a);
  if (a->pooled) {
    cudaMemPool_t pool = currentPool(a->device);
    pool->usedCurrent -= a->size;
  }
  gDeviceUsed[a->device] -= a->size;
  free(a->base - GUARD);
  size_t i = (size_t)(a - gTable);
  size_t size = a->size;
  memmove(&gTable[i], &gTable[i + 1], (gCount - i - 1) * sizeof(allocation_t));
  --gCount;
  --soaprt_emu_stats.liveAllocations;
  if (damaged) {
    soaprt_emu_diag(call,
                    "the guard bytes of the allocation of %zu bytes at %p "
                    "were overwritten (byte offset %lld): something wrote "
                    "out of bounds",
                    size, ptr, damaged);
    return cudaErrorIllegalAddress;
  }
  return cudaSuccess;
}

/* ------------------------------------------------------- allocation API */

cudaError_t cudaMalloc(void **ptr, size_t size) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!ptr)
    return soaprt_emu_result(cudaErrorInvalidValue);
  if (size == 0) { /* as the real runtime: no allocation */
    *ptr = NULL;
    return cudaSuccess;
  }
  return soaprt_emu_result(
      allocate(ptr, size, SOAPRT_EMU_DEVICE, 0));
}

cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned flags) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!ptr || size == 0 ||
      (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
    return soaprt_emu_result(cudaErrorInvalidValue);
  return soaprt_emu_result(
      allocate(ptr, size, SOAPRT_EMU_MANAGED, 0));
}

cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream) {
  cudaError_t e = soaprt_emu_check_stream("cudaMallocAsync", stream);
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!ptr)
    return soaprt_emu_result(cudaErrorInvalidValue);
  if (size == 0) {
    *ptr = NULL;
    return cudaSuccess;
  }
  e = allocate(ptr, size, SOAPRT_EMU_DEVICE, 1);
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  cudaMemPool_t pool = currentPool(soaprt_emu_current_device());
  pool->usedCurrent += size;
  if (pool->usedCurrent > pool->usedHigh)
    pool->usedHigh = pool->usedCurrent;
  if (pool->usedCurrent > pool->reservedCurrent)
    pool->reservedCurrent = pool->usedCurrent;
  if (pool->reservedCurrent > pool->reservedHigh)
    pool->reservedHigh = pool->reservedCurrent;
  return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess || !ptr) /* cudaFree(NULL): initializes only */
    return soaprt_emu_result(e);
  return soaprt_emu_result(release(ptr, "cudaFree"));
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream) {
  cudaError_t e = soaprt_emu_check_stream("cudaFreeAsync", stream);
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!ptr) {
    soaprt_emu_diag("cudaFreeAsync", "NULL pointer");
    return soaprt_emu_result(cudaErrorInvalidValue);
  }
  return soaprt_emu_result(release(ptr, "cudaFreeAsync"));
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                     const void *ptr) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!attributes)
    return soaprt_emu_result(cudaErrorInvalidValue);
  memset(attributes, 0, sizeof(*attributes));
  allocation_t *a = NULL;
  if (locate(ptr, &a) == INSIDE) {
    attributes->type =
        a->kind == SOAPRT_EMU_MANAGED ? cudaMemoryTypeManaged
                                      : cudaMemoryTypeDevice;
    attributes->device = a->device;
    attributes->devicePointer = (void *)(uintptr_t)ptr;
    attributes->hostPointer =
        a->kind == SOAPRT_EMU_MANAGED ? (void *)(uintptr_t)ptr : NULL;
  } else {
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;
    attributes->hostPointer = (void *)(uintptr_t)ptr;
  }
  return cudaSuccess;
}

/* ------------------------------------------------------------------ pools */

void soaprt_emu_pool_sync(void) {
  for (int d = 0; d < MAX_DEVICES; ++d) {
    struct CUmemPoolHandle_st *p = &gPools[d];
    if (p->reservedCurrent > p->threshold)
      p->reservedCurrent =
          p->usedCurrent > p->threshold ? p->usedCurrent : p->threshold;
  }
}

static int knownPool(cudaMemPool_t pool) {
  return pool >= &gPools[0] && pool < &gPools[MAX_DEVICES] &&
         gCurrentPool[pool->device] != NULL;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!pool)
    return soaprt_emu_result(cudaErrorInvalidValue);
  if (device < 0 || device >= soaprt_emu_device_count())
    return soaprt_emu_result(cudaErrorInvalidDevice);
  (void)currentPool(device);
  *pool = &gPools[device];
  return cudaSuccess;
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (device < 0 || device >= soaprt_emu_device_count())
    return soaprt_emu_result(cudaErrorInvalidDevice);
  if (!knownPool(pool) || pool->device != device) {
    soaprt_emu_diag("cudaDeviceSetMemPool",
                    "%p is not a memory pool of device %d", (void *)pool,
                    device);
    return soaprt_emu_result(cudaErrorInvalidValue);
  }
  gCurrentPool[device] = pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool,
                                    enum cudaMemPoolAttr attr, void *value) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!knownPool(pool) || !value)
    return soaprt_emu_result(cudaErrorInvalidValue);
  switch (attr) {
  case cudaMemPoolReuseFollowEventDependencies:
  case cudaMemPoolReuseAllowOpportunistic:
  case cudaMemPoolReuseAllowInternalDependencies:
    pool->reuse[attr - cudaMemPoolReuseFollowEventDependencies] =
        *(int *)value;
    return cudaSuccess;
  case cudaMemPoolAttrReleaseThreshold:
    pool->threshold = *(uint64_t *)value;
    return cudaSuccess;
  case cudaMemPoolAttrReservedMemHigh:
  case cudaMemPoolAttrUsedMemHigh:
    if (*(uint64_t *)value != 0) /* only a reset to the current value */
      return soaprt_emu_result(cudaErrorInvalidValue);
    if (attr == cudaMemPoolAttrUsedMemHigh)
      pool->usedHigh = pool->usedCurrent;
    else
      pool->reservedHigh = pool->reservedCurrent;
    return cudaSuccess;
  default: /* the current values are read-only */
    return soaprt_emu_result(cudaErrorInvalidValue);
  }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool,
                                    enum cudaMemPoolAttr attr, void *value) {
  cudaError_t e = soaprt_emu_need_device();
  if (e != cudaSuccess)
    return soaprt_emu_result(e);
  if (!knownPool(pool) || !value)
    return soaprt_emu_result(cudaErrorInvalidValue);
  const uint64_t *v = NULL;
  switch (attr) {
  case cudaMemPoolReuseFollowEventDependencies:
  case cudaMemPoolReuseAllowOpportunistic:
  case cudaMemPoolReuseAllowInternalDependencies:
    *(int *)value = pool->reuse[attr - cudaMemPoolReuseFollowEventDependencies];
    return cudaSuccess;
  case cudaMemPoolAttrReleaseThreshold: v = &pool->threshold; break;
  case cudaMemPoolAttrReservedMemCurrent: v = &pool->reservedCurrent; break;
  case cudaMemPoolAttrReservedMemHigh: v = &pool->reservedHigh; break;
  case cudaMemPoolAttrUsedMemCurrent: v = &pool->usedCurrent; break;
  case cudaMemPoolAttrUsedMemHigh: v = &pool->usedHigh; break;
  }
  if (!v) /* not an attribute */
    return soaprt_emu_result(cudaErrorInvalidValue);
  *(uint64_t *)value = *v;
  return cudaSuccess;
}

/* ----------------------------------------------------------------- copies */

static const char *kindName(enum cudaMemcpyKind kind) {
  static const char *const names[] = {
      "cudaMemcpyHostToHost", "cudaMemcpyHostToDevice",
      "cudaMemcpyDeviceToHost", "cudaMemcpyDeviceToDevice",
      "cudaMemcpyDefault"};
  return (unsigned)kind < 5 ? names[kind] : "an unknown kind";
}

/* One side of a copy: `bytes` bytes at `p` (span: first to one past the
 * last byte touched) must be inside one allocation when they start in one,
 * and on the side the explicit kind names (managed memory is both). */
static cudaError_t checkSide(const char *call, const char *what,
                             const void *p, size_t span,
                             enum cudaMemcpyKind kind, int wantDevice) {
  if (!p) {
    soaprt_emu_diag(call, "the %s is NULL", what);
    return cudaErrorInvalidValue;
  }
  allocation_t *a = NULL;
  int where = locate(p, &a);
  if (where == IN_GUARD) {
    soaprt_emu_diag(call,
                    "the %s %p is just outside the device allocation of %zu "
                    "bytes at %p",
                    what, p, a->size, (void *)a->base);
    return cudaErrorInvalidValue;
  }
  if (where == INSIDE && span > (size_t)(a->base + a->size - (const char *)p)) {
    soaprt_emu_diag(call,
                    "the %s: %zu bytes at %p run past the end of the device "
                    "allocation of %zu bytes at %p",
                    what, span, p, a->size, (void *)a->base);
    return cudaErrorInvalidValue;
  }
  if (kind == cudaMemcpyDefault)
    return cudaSuccess;
  int kindHere = where == INSIDE ? a->kind : SOAPRT_EMU_HOST;
  if (kindHere != SOAPRT_EMU_MANAGED &&
      (kindHere == SOAPRT_EMU_DEVICE) != wantDevice) {
    soaprt_emu_diag(call, "the %s %p is %s memory, but the kind is %s", what,
                    p, kindHere == SOAPRT_EMU_DEVICE ? "device" : "host",
                    kindName(kind));
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

/* The common checks of a copy of `height` rows of `width` bytes. */
static cudaError_t checkCopy(const char *call, const void *dst, size_t dpitch,
                             const void *src, size_t spitch, size_t width,
                             size_t height, enum cudaMemcpyKind kind,
                             cudaStream_t stream) {
  cudaError_t e = soaprt_emu_check_stream(call, stream);
  if (e != cudaSuccess)
    return e;
  if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  if (width == 0 || height == 0)
    return cudaSuccess;
  size_t dspan = (height - 1) * dpitch + width,
         sspan = (height - 1) * spitch + width;
  int toDevice = kind == cudaMemcpyHostToDevice ||
                 kind == cudaMemcpyDeviceToDevice;
  int fromDevice = kind == cudaMemcpyDeviceToHost ||
                   kind == cudaMemcpyDeviceToDevice;
  e = checkSide(call, "destination", dst, dspan, kind, toDevice);
  if (e == cudaSuccess)
    e = checkSide(call, "source", src, sspan, kind, fromDevice);
  if (e != cudaSuccess)
    return e;
  /* Overlapping rows: the result would depend on the copy order. Rows of
     each side are disjoint and ascending: one merge pass. */
  uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
  if (d < s + sspan && s < d + dspan)
    for (size_t i = 0, j = 0; i < height && j < height;) {
      uintptr_t d0 = d + i * dpitch, s0 = s + j * spitch;
      if (d0 + width <= s0)
        ++i;
      else if (s0 + width <= d0)
        ++j;
      else {
        soaprt_emu_diag(call,
                        "source %p and destination %p overlap (%zu rows of "
                        "%zu bytes, pitches %zu and %zu)",
                        src, dst, height, width, spitch, dpitch);
        return cudaErrorInvalidValue;
      }
    }
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream) {
  ++soaprt_emu_stats.copyCalls;
  cudaError_t e = checkCopy("cudaMemcpyAsync", dst, count, src, count, count,
                            1, kind, stream);
  if (e == cudaSuccess && count)
    memcpy(dst, src, count);
  return soaprt_emu_result(e);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, count, kind, 0);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream) {
  ++soaprt_emu_stats.copyCalls;
  const char *call = "cudaMemcpy2DAsync";
  cudaError_t e = soaprt_emu_need_device();
  if (e == cudaSuccess && width && height &&
      (dpitch < width || spitch < width || dpitch > 2147483647u ||
       spitch > 2147483647u)) {
    soaprt_emu_diag(call,
                    "pitches %zu (destination) and %zu (source) must be at "
                    "least the width %zu and at most cudaDevAttrMaxPitch",
                    dpitch, spitch, width);
    e = cudaErrorInvalidPitchValue;
  }
  if (e == cudaSuccess)
    e = checkCopy(call, dst, dpitch, src, spitch, width, height, kind, stream);
  if (e == cudaSuccess)
    for (size_t row = 0; row < height && width; ++row)
      memcpy((char *)dst + row * dpitch, (const char *)src + row * spitch,
             width);
  return soaprt_emu_result(e);
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count,
                            cudaStream_t stream) {
  ++soaprt_emu_stats.memsetCalls;
  cudaError_t e = soaprt_emu_check_stream("cudaMemsetAsync", stream);
  if (e == cudaSuccess &&
      !soaprt_emu_check_device("cudaMemsetAsync", "the memory", ptr, 0,
                               (int64_t)count))
    e = cudaErrorInvalidValue;
  if (e == cudaSuccess && count)
    memset(ptr, value, count);
  return soaprt_emu_result(e);
}

cudaError_t cudaDeviceSynchronize(void) {
  cudaError_t e = soaprt_emu_need_device();
  if (e == cudaSuccess)
    soaprt_emu_pool_sync();
  return soaprt_emu_result(e);
}
