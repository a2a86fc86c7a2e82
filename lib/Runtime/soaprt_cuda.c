/*===- soaprt_cuda.c - CUDA back end: device, stream, errors, memory ------===*
 *
 * soaprt_init picks GPU `local rank` (ranks on one node, in rank order) and
 * creates the rank's stream, sets up the memory pool and the world NCCL
 * communicator. The rank's computation goes onto that one stream, so
 * program order is execution order (communication has a stream of its own,
 * ordered with this one by events: soaprt_cuda_comm.c), and nothing waits
 * for the GPU except the runtime itself where the host needs results
 * (bind_output, timing).
 *
 * Only the CUDA runtime API is used (libcudart_static: it loads libcuda.so.1
 * itself at run time, so the executables start, and report "no GPU", on
 * machines without a CUDA driver).
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

soaprt_cuda_state_t soaprt_cuda;

static int64_t gFinalPeak = -1; /* peak bytes, kept past finalize */

/* ---------------------------------------------------------------- errors */

void soaprt_cuda_fail(const char *call, const char *op, const char *detail) {
  int nameLength = (int)strcspn(call, "( \t");
  soaprt_fatal("%.*s failed in %s: %s", nameLength, call,
               op && *op ? op : "soaprt", detail);
}

/* Errors that an earlier asynchronous kernel or copy may have caused. */
static int isAsynchronousFault(cudaError_t e) {
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorLaunchTimeout:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchOutOfResources:
  case cudaErrorECCUncorrectable:
    return 1;
  default:
    return 0;
  }
}

void soaprt_cuda_check(cudaError_t e, const char *call, const char *op) {
  if (e == cudaSuccess)
    return;
  char detail[512];
  snprintf(detail, sizeof(detail), "%s (%s)%s", cudaGetErrorString(e),
           cudaGetErrorName(e),
           isAsynchronousFault(e) && !soaprt_cuda.syncEachCall
               ? "; an earlier kernel or library call may have caused it: "
                 "rerun with SOAPRT_CUDA_SYNC=1 to name it"
               : "");
  soaprt_cuda_fail(call, op, detail);
}

cudaStream_t soaprt_cuda_stream(const char *op) {
  if (!soaprt_cuda.initialized || soaprt_cuda.finalized)
    soaprt_fatal("%s: the CUDA runtime is not running (device work before "
                 "soaprt_init or after soaprt_finalize)",
                 op && *op ? op : "soaprt");
  return soaprt_cuda.current;
}

void soaprt_cuda_sync(const char *op) {
  SOAPRT_CUDA_CHECK(cudaStreamSynchronize(soaprt_cuda_stream(op)), op);
}

void soaprt_cuda_after_call(const char *op) {
  if (soaprt_cuda.syncEachCall)
    soaprt_cuda_sync(op);
}

void soaprt_device_synchronize(void) {
  if (soaprt_cuda.initialized && !soaprt_cuda.finalized)
    soaprt_cuda_sync("soap_main");
}

/* ---------------------------------------------------------------- memory */

void *soaprt_cuda_try_alloc(size_t bytes, const char *op) {
  void *ptr = NULL;
  cudaError_t e =
      cudaMallocAsync(&ptr, bytes ? bytes : 1, soaprt_cuda_stream(op));
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError(); /* not sticky: clear it */
    return NULL;
  }
  SOAPRT_CUDA_CHECK(e, op);
  return ptr;
}

void *soaprt_cuda_alloc(size_t bytes, const char *op) {
  void *ptr = soaprt_cuda_try_alloc(bytes, op);
  if (!ptr) {
    uint64_t used = 0;
    (void)cudaMemPoolGetAttribute(soaprt_cuda.pool,
                                  cudaMemPoolAttrUsedMemCurrent, &used);
    char detail[160];
    snprintf(detail, sizeof(detail),
             "out of device memory (%.1f MiB requested, %.1f MiB in use)",
             (double)bytes / 1048576.0, (double)used / 1048576.0);
    soaprt_cuda_fail("cudaMallocAsync", op, detail);
  }
  return ptr;
}

void soaprt_cuda_free(void *ptr, const char *op) {
  /* Frees after finalize (global destructors) are left to process exit. */
  if (!ptr || !soaprt_cuda.initialized || soaprt_cuda.finalized)
    return;
  SOAPRT_CUDA_CHECK(cudaFreeAsync(ptr, soaprt_cuda.current), op);
}

int soaprt_cuda_is_device_pointer(const void *ptr) {
  struct cudaPointerAttributes attributes;
  memset(&attributes, 0, sizeof(attributes));
  cudaError_t e = cudaPointerGetAttributes(&attributes, ptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return attributes.type == cudaMemoryTypeDevice ||
         attributes.type == cudaMemoryTypeManaged;
}

/* memref.alloc / memref.dealloc of the compiled code. */
void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return soaprt_cuda_alloc(bytes, "memref.alloc");
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  void *ptr = soaprt_cuda_alloc(bytes, "memref.alloc");
  if (alignment && ((uintptr_t)ptr % alignment) != 0)
    soaprt_fatal("memref.alloc: the device allocator does not guarantee an "
                 "alignment of %zu bytes",
                 alignment);
  return ptr;
}

void _mlir_memref_to_llvm_free(void *ptr) {
  soaprt_cuda_free(ptr, "memref.dealloc");
}

int64_t soaprt_device_peak_bytes(void) {
  if (!soaprt_cuda.initialized)
    return -1;
  if (soaprt_cuda.finalized)
    return gFinalPeak;
  uint64_t high = 0;
  SOAPRT_CUDA_CHECK(cudaMemPoolGetAttribute(soaprt_cuda.pool,
                                            cudaMemPoolAttrUsedMemHigh, &high),
                    "soaprt_device_peak_bytes");
  return (int64_t)high + soaprt_cuda.outsidePoolBytes;
}

void soaprt_device_reset_peak(void) {
  if (!soaprt_cuda.initialized || soaprt_cuda.finalized)
    return;
  uint64_t zero = 0; /* resets the high-water mark to the current use */
  SOAPRT_CUDA_CHECK(cudaMemPoolSetAttribute(soaprt_cuda.pool,
                                            cudaMemPoolAttrUsedMemHigh, &zero),
                    "soaprt_device_reset_peak");
}

int64_t soaprt_device_workspace_bytes(void) {
  return soaprt_cuda_blas_workspace_bytes() + soaprt_cuda_dnn_workspace_bytes();
}

/* ---------------------------------------------------------------- inputs */

void soaprt_cuda_bind_input(soaprt_binding_t *b, const soaprt_region_t *view) {
  if (b->ownsData)
    free(b->data);
  b->ownsData = 0;
  b->uploaded = 0;
  b->device = NULL;
  b->data = view->base;
  if (soaprt_cuda_is_device_pointer(view->base)) {
    /* The program's buffer is on the GPU: soaprt_main fills a host shadow,
       and soaprt_cuda_input copies it into the program's buffer. */
    int64_t bytes = soaprt_region_elements(view) * view->elemSize;
    b->device = view->base;
    b->data = (char *)malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!b->data)
      soaprt_fatal("soaprt_bind_input: out of memory (%lld bytes)",
                   (long long)bytes);
    b->ownsData = 1;
  }
}

int64_t soaprt_cuda_input(int64_t index) {
  soaprt_binding_t *b = soaprt_input_binding(index);
  if (!b || !b->bound)
    soaprt_fatal("soaprt_cuda_input: input %lld is not bound",
                 (long long)index);
  if (!b->uploaded) {
    size_t bytes =
        (size_t)(soaprt_num_elements(b) * soaprt_dtype_size(b->dtype));
    if (!b->device)
      b->device = soaprt_cuda_alloc(bytes, "soaprt_cuda_input");
    /* From pageable memory: staged before the call returns. */
    if (bytes)
      SOAPRT_CUDA_CHECK(
          cudaMemcpyAsync(b->device, b->data, bytes, cudaMemcpyHostToDevice,
                          soaprt_cuda_stream("soaprt_cuda_input")),
          "soaprt_cuda_input");
    b->uploaded = 1;
  }
  return (int64_t)(intptr_t)b->device;
}

void soaprt_cuda_update_input(int64_t index, const soaprt_region_t *part) {
  const char *op = "soaprt_update_input";
  char *device = (char *)(intptr_t)soaprt_cuda_input(index);
  soaprt_binding_t *b = soaprt_input_binding(index);
  b->deviceNewer = 1;
  if (device == part->base) /* written in place by the program */
    return;
  int64_t strides[SOAPRT_MAX_RANK], stride = 1;
  for (int64_t d = part->rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= part->sizes[d];
  }
  soaprt_cuda_copy(device, strides, part->base, part->strides, part->sizes,
                   part->rank, part->elemSize, op);
}

void soaprt_cuda_fetch_input(soaprt_binding_t *b) {
  const char *op = "soaprt_gather_input";
  if (!b->deviceNewer || !b->device)
    return;
  size_t bytes = (size_t)(soaprt_num_elements(b) * soaprt_dtype_size(b->dtype));
  if (bytes)
    SOAPRT_CUDA_CHECK(cudaMemcpyAsync(b->data, b->device, bytes,
                                      cudaMemcpyDeviceToHost,
                                      soaprt_cuda_stream(op)),
                      op);
  soaprt_cuda_sync(op);
  b->deviceNewer = 0;
}

/* ------------------------------------------------------------- constants */

/* Open addressing on the host address; uploaded once each. */
typedef struct constant {
  int64_t host; /* 0: empty slot */
  int64_t bytes;
  void *device;
} constant_t;
static constant_t *gConstants = NULL;
static size_t gConstantSlots = 0, gConstantCount = 0;

static size_t constantSlot(const constant_t *table, size_t slots,
                           int64_t host) {
  uint64_t h = (uint64_t)host * 0x9E3779B97F4A7C15ull;
  size_t i = (size_t)(h >> 17) & (slots - 1);
  while (table[i].host != 0 && table[i].host != host)
    i = (i + 1) & (slots - 1);
  return i;
}

static void growConstants(void) {
  size_t slots = gConstantSlots ? gConstantSlots * 2 : 256;
  constant_t *table = (constant_t *)calloc(slots, sizeof(constant_t));
  if (!table)
    soaprt_fatal("soaprt_cuda_constant: out of memory");
  for (size_t i = 0; i < gConstantSlots; ++i)
    if (gConstants[i].host != 0)
      table[constantSlot(table, slots, gConstants[i].host)] = gConstants[i];
  free(gConstants);
  gConstants = table;
  gConstantSlots = slots;
}

int64_t soaprt_cuda_constant(int64_t hostAddress, int64_t bytes) {
  const char *op = "soaprt_cuda_constant";
  if (hostAddress == 0 || bytes < 0)
    soaprt_fatal("%s: bad constant (address %#llx, %lld bytes)", op,
                 (unsigned long long)hostAddress, (long long)bytes);
  if (2 * (gConstantCount + 1) > gConstantSlots)
    growConstants();
  constant_t *c =
      &gConstants[constantSlot(gConstants, gConstantSlots, hostAddress)];
  if (c->host == hostAddress && c->bytes >= bytes)
    return (int64_t)(intptr_t)c->device;
  if (c->host == hostAddress) { /* asked for more than before: upload again */
    soaprt_cuda_free(c->device, op);
  } else {
    c->host = hostAddress;
    ++gConstantCount;
  }
  c->bytes = bytes;
  c->device = soaprt_cuda_alloc((size_t)bytes, op);
  if (bytes)
    SOAPRT_CUDA_CHECK(cudaMemcpyAsync(c->device,
                                      (const void *)(intptr_t)hostAddress,
                                      (size_t)bytes, cudaMemcpyHostToDevice,
                                      soaprt_cuda_stream(op)),
                      op);
  return (int64_t)(intptr_t)c->device;
}

/* ---------------------------------------------------- init and finalize */

/* Every rank learns whether some rank failed; those that did say why; then
 * all leave with status 1 (MPI finalized: no abort banner, no hang). */
static void exitIfAnyFailed(const char *message) {
  int failed = message[0] != 0;
  if (!soaprt_any(failed))
    return;
  if (failed) {
    fprintf(stderr, "soaprt: error: [rank %d] %s\n", soaprt_cuda.rank, message);
    fflush(stderr);
  }
  int down = 0;
  MPI_Finalized(&down);
  if (!down)
    MPI_Finalize();
  exit(1);
}

void soaprt_cuda_init(int rank, int size) {
  if (soaprt_cuda.initialized)
    return;
  soaprt_cuda.rank = rank;
  soaprt_cuda.size = size;
  const char *sync = getenv("SOAPRT_CUDA_SYNC");
  soaprt_cuda.syncEachCall = sync && *sync && strcmp(sync, "0") != 0;

  /* This rank's GPU: its index among the ranks of its node. */
  MPI_Comm node;
  int localRank = 0, localSize = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_size(node, &localSize);
    MPI_Comm_free(&node);
  }
  char message[512] = "";
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    snprintf(message, sizeof(message),
             "no CUDA GPU available (cudaGetDeviceCount: %s: %s)",
             cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
  } else if (count <= 0) {
    snprintf(message, sizeof(message),
             "no CUDA GPU available (cudaGetDeviceCount found none)");
  } else if (localSize > count) {
    snprintf(message, sizeof(message),
             "%d ranks run on this node but it has %d CUDA GPU%s: NCCL "
             "needs one GPU per rank",
             localSize, count, count == 1 ? "" : "s");
  } else {
    e = cudaSetDevice(localRank);
    if (e == cudaSuccess)
      e = cudaFree(NULL); /* creates the context now */
    if (e != cudaSuccess)
      snprintf(message, sizeof(message), "cannot use CUDA GPU %d (%s: %s)",
               localRank, cudaGetErrorName(e), cudaGetErrorString(e));
    int pools = 0;
    if (e == cudaSuccess &&
        cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported,
                               localRank) == cudaSuccess &&
        !pools)
      snprintf(message, sizeof(message),
               "CUDA GPU %d does not support stream-ordered memory pools",
               localRank);
  }
  exitIfAnyFailed(message);

  const char *op = "soaprt_init";
  soaprt_cuda.device = localRank;
  SOAPRT_CUDA_CHECK(
      cudaStreamCreateWithFlags(&soaprt_cuda.stream, cudaStreamNonBlocking),
      op);
  soaprt_cuda.current = soaprt_cuda.stream;
  /* Freed memory stays in the pool for reuse (never back to the driver
     while the program runs). */
  SOAPRT_CUDA_CHECK(
      cudaDeviceGetDefaultMemPool(&soaprt_cuda.pool, soaprt_cuda.device), op);
  uint64_t threshold = UINT64_MAX;
  SOAPRT_CUDA_CHECK(cudaMemPoolSetAttribute(soaprt_cuda.pool,
                                            cudaMemPoolAttrReleaseThreshold,
                                            &threshold),
                    op);
  SOAPRT_CUDA_CHECK(cudaDeviceSetMemPool(soaprt_cuda.device, soaprt_cuda.pool),
                    op);
  int maxPitch = 0;
  SOAPRT_CUDA_CHECK(cudaDeviceGetAttribute(&maxPitch, cudaDevAttrMaxPitch,
                                           soaprt_cuda.device),
                    op);
  soaprt_cuda.maxPitch = maxPitch > 0 ? (size_t)maxPitch : 0;
  soaprt_cuda.initialized = 1;
  soaprt_cuda_comm_init();
}

void soaprt_cuda_finalize(void) {
  if (!soaprt_cuda.initialized || soaprt_cuda.finalized)
    return;
  const char *op = "soaprt_finalize";
  soaprt_cuda_sync(op);
  gFinalPeak = soaprt_device_peak_bytes();
  soaprt_cuda_dnn_finalize();
  soaprt_cuda_blas_finalize();
  soaprt_cuda_comm_finalize();
  soaprt_cuda_mgpu_finalize();
  soaprt_cuda_sync(op);
  SOAPRT_CUDA_CHECK(cudaStreamDestroy(soaprt_cuda.stream), op);
  soaprt_cuda.stream = soaprt_cuda.current = NULL;
  soaprt_cuda.finalized = 1;
}
