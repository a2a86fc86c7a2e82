/*===- cublas_host.c - Emulated cuBLAS: handles and strided-batched GEMM --===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h), which
 * exists to test the CUDA lowering and libsoaprt_cuda without a GPU.
 *
 * What libsoaprt_cuda calls (the _v2 names are what cublas_v2.h maps
 * cublasCreate & co. to): handles with a stream, a math mode and a
 * workspace, and cublasGemmStridedBatchedEx (column-major, op N/T/C,
 * alpha/beta from host memory, any batch strides, 0 included) for the type
 * combinations cuBLAS supports with an fp32 compute type that libsoaprt
 * uses: A, B and C fp32 (any fp32 compute type), A and B bf16 or f16 with
 * C of the same type or fp32 (CUBLAS_COMPUTE_32F or _PEDANTIC only, as
 * cuBLAS's table has it). Computed in double and rounded to C's type once
 * (round to nearest even) whatever the compute type (so the TF32 types
 * are as exact as strict fp32 here). Strict as cuBLAS on the
 * arguments (leading dimensions, sizes, types: CUBLAS_STATUS_INVALID_VALUE
 * or _NOT_SUPPORTED) and stricter where a GPU would fault or race: every
 * matrix must lie inside device memory, the batches of C must not overlap,
 * the stream must be alive (CUBLAS_STATUS_EXECUTION_FAILED).
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <cublas_v2.h>

#include <stdlib.h>

struct cublasContext {
  cudaStream_t stream;
  cublasMath_t math;
  void *workspace;
  size_t workspaceBytes;
};
static soaprt_emu_registry_t gHandles;

static int validHandle(cublasHandle_t h) {
  return soaprt_emu_registry_contains(&gHandles, h);
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (soaprt_emu_need_device() != cudaSuccess)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  cublasHandle_t h =
      (cublasHandle_t)calloc(1, sizeof(struct cublasContext));
  if (!h || !soaprt_emu_registry_add(&gHandles, h)) {
    free(h);
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (!soaprt_emu_registry_remove(&gHandles, handle))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!validHandle(handle))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!soaprt_emu_stream_valid(stream)) {
    soaprt_emu_diag("cublasSetStream", "stream %p was not created",
                    (void *)stream);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!validHandle(handle))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  unsigned base = (unsigned)mode & ~(unsigned)
                      CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  if (base > CUBLAS_TF32_TENSOR_OP_MATH)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t bytes) {
  const char *call = "cublasSetWorkspace";
  if (!validHandle(handle))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bytes && ((uintptr_t)workspace % 256 != 0 ||
                !soaprt_emu_check_device(call, "the workspace", workspace, 0,
                                         (int64_t)bytes))) {
    soaprt_emu_diag(call, "%zu bytes at %p: not 256-byte aligned device "
                    "memory", bytes, workspace);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  handle->workspace = workspace;
  handle->workspaceBytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "the GPU program failed to execute";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the functionality requested is not supported";
  default: return "an internal operation failed";
  }
}

/* ------------------------------------------------------------------ GEMM */

/* Whether the `batch` matrices of m x n (column-major, leading dimension
 * ld >= m) at multiples of `stride` share an element: is some q * stride
 * (0 < q < batch) equal to di + dj * ld with |di| < m, |dj| < n? */
static int batchesOverlap(long long m, long long n, long long ld,
                          long long stride, long long batch) {
  long long s = stride < 0 ? -stride : stride;
  for (long long q = 1; q < batch; ++q) {
    long long d = q * s;
    long long dj = d / ld;
    for (long long t = dj; t <= dj + 1; ++t) {
      long long di = d - t * ld;
      if (t < n && (di < 0 ? -di : di) < m)
        return 1;
    }
  }
  return 0;
}

/* Checks that `batch` rows x cols matrices (leading dimension ld, batch
 * stride in elements) of `bytes`-byte elements at p lie in device memory. */
static int checkMatrix(const char *what, const void *p, int bytes,
                       long long rows, long long cols, long long ld,
                       long long stride, long long batch) {
  long long last = (batch - 1) * stride;
  long long lo = last < 0 ? last : 0, hi = last > 0 ? last : 0;
  hi += (cols - 1) * ld + rows;
  return soaprt_emu_check_device("cublasGemmStridedBatchedEx", what, p,
                                 lo * bytes, hi * bytes);
}

/* The emulation's format of a cuBLAS type (supportedTypes checked it). */
static soaprt_emu_float_t formatOf(cudaDataType t) {
  return t == CUDA_R_16F    ? SOAPRT_EMU_F16
         : t == CUDA_R_16BF ? SOAPRT_EMU_BF16
                            : SOAPRT_EMU_F32;
}

/* Whether cuBLAS computes A, B of type `ab` into C of type `c` with
 * `compute` (the fp32 rows of cublasGemmEx's table). */
static int supportedTypes(cudaDataType ab, cudaDataType c,
                          cublasComputeType_t compute) {
  if (ab == CUDA_R_32F && c == CUDA_R_32F)
    switch (compute) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return 1;
    default:
      return 0;
    }
  if ((ab == CUDA_R_16F || ab == CUDA_R_16BF) && (c == ab || c == CUDA_R_32F))
    return compute == CUBLAS_COMPUTE_32F ||
           compute == CUBLAS_COMPUTE_32F_PEDANTIC;
  return 0;
}

static cublasStatus_t checkGemm(cublasHandle_t h, cublasOperation_t ta,
                                cublasOperation_t tb, int m, int n, int k,
                                const void *alpha, cudaDataType at, int lda,
                                cudaDataType bt, int ldb, const void *beta,
                                cudaDataType ct, int ldc, int batch,
                                cublasComputeType_t compute,
                                cublasGemmAlgo_t algo) {
  const char *call = "cublasGemmStridedBatchedEx";
  if (!validHandle(h))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  int rowsA = ta == CUBLAS_OP_N ? m : k, rowsB = tb == CUBLAS_OP_N ? k : n;
  if (ta > CUBLAS_OP_C || tb > CUBLAS_OP_C || m < 0 || n < 0 || k < 0 ||
      batch < 0 || lda < (rowsA > 1 ? rowsA : 1) ||
      ldb < (rowsB > 1 ? rowsB : 1) || ldc < (m > 1 ? m : 1) || !alpha ||
      !beta) {
    soaprt_emu_diag(call,
                    "op %d/%d m=%d n=%d k=%d lda=%d ldb=%d ldc=%d batch=%d "
                    "(lda >= max(1, rows of op(A)), ldb >= max(1, rows of "
                    "op(B)), ldc >= max(1, m))",
                    (int)ta, (int)tb, m, n, k, lda, ldb, ldc, batch);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (at != bt || !supportedTypes(at, ct, compute) ||
      !((algo >= CUBLAS_GEMM_DEFAULT && algo <= CUBLAS_GEMM_ALGO23) ||
        (algo >= CUBLAS_GEMM_DEFAULT_TENSOR_OP &&
         algo <= CUBLAS_GEMM_ALGO15_TENSOR_OP))) {
    soaprt_emu_diag(call,
                    "types %d/%d/%d, compute type %d, algorithm %d: the "
                    "emulation does fp32, and bf16 or f16 into itself or "
                    "fp32 with an fp32 compute type",
                    (int)at, (int)bt, (int)ct, (int)compute, (int)algo);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (!soaprt_emu_stream_valid(h->stream)) {
    soaprt_emu_diag(call, "the handle's stream %p is destroyed",
                    (void *)h->stream);
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/* C[p] = alpha op(A[p]) op(B[p]) + beta C[p], column-major. */
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
    long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
    long long strideC, int batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo) {
  cublasStatus_t status =
      checkGemm(handle, transa, transb, m, n, k, alpha, Atype, lda, Btype, ldb,
                beta, Ctype, ldc, batchCount, computeType, algo);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  if (m == 0 || n == 0 || batchCount == 0)
    return CUBLAS_STATUS_SUCCESS;
  double al = *(const float *)alpha, be = *(const float *)beta;
  int readAB = k > 0 && al != 0.0;
  int ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  soaprt_emu_float_t fa = formatOf(Atype), fc = formatOf(Ctype);
  int abBytes = soaprt_emu_float_bytes(fa), cBytes = soaprt_emu_float_bytes(fc);
  if ((readAB && (!checkMatrix("A", A, abBytes, ta ? k : m, ta ? m : k, lda,
                               strideA, batchCount) ||
                  !checkMatrix("B", B, abBytes, tb ? n : k, tb ? k : n, ldb,
                               strideB, batchCount))) ||
      !checkMatrix("C", C, cBytes, m, n, ldc, strideC, batchCount))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  if (batchesOverlap(m, n, ldc, strideC, batchCount)) {
    soaprt_emu_diag("cublasGemmStridedBatchedEx",
                    "the %d batches of C (%dx%d, ldc %d, stride %lld) "
                    "overlap: the result would be a race",
                    batchCount, m, n, ldc, strideC);
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  for (long long p = 0; p < batchCount; ++p) {
    const char *a = (const char *)A + p * strideA * abBytes;
    const char *b = (const char *)B + p * strideB * abBytes;
    char *c = (char *)C + p * strideC * cBytes;
    for (long long j = 0; j < n; ++j)
      for (long long i = 0; i < m; ++i) {
        double sum = 0;
        for (long long l = 0; readAB && l < k; ++l)
          sum += soaprt_emu_load(fa, a, ta ? l + i * lda : i + l * lda) *
                 soaprt_emu_load(fa, b, tb ? j + l * ldb : l + j * ldb);
        long long out = i + j * ldc;
        /* beta == 0: C is not read (it may hold NaN). */
        soaprt_emu_store(
            fc, c, out,
            al * sum + (be != 0.0 ? be * soaprt_emu_load(fc, c, out) : 0.0));
      }
  }
  ++soaprt_emu_stats.gemms;
  soaprt_emu_stats.lastGemmCompute = (int)computeType;
  return CUBLAS_STATUS_SUCCESS;
}
