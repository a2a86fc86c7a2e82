/*===- soaprt_cuda_blas.c - Batched matmul on cuBLAS ----------------------===*
 *
 * C[b] += A[b] x B[b] for strided views (rank 3: batch x rows x columns;
 * rank 2: one matrix), as one strided-batched GEMM: fp32 in and out (TF32
 * tensor cores only when the op allows it), bf16 or f16 in and out, or bf16
 * or f16 in and fp32 out (tensor cores), always accumulated in fp32.
 *
 * cuBLAS is column-major. A matrix X (R x Cc, strides rs, cs) is usable in
 * place when one of its strides is 1:
 *   row layout (cs == 1, ld = rs >= Cc): column-major storage of X^T
 *   col layout (rs == 1, ld = cs >= R):  column-major storage of X
 * C decides the formulation: with C in row layout, cuBLAS computes
 * C^T = B^T A^T (m = N, n = M), an operand in row layout is then op N and one
 * in col layout op T; with C in col layout it computes C = A B (m = M,
 * n = N) and the roles swap. Anything else (no unit stride, negative
 * strides, C's batches overlapping) goes through a packed temporary.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"
#include "soaprt_gemm.h"

#include <cublas_v2.h>

#include <stdio.h>
#include <string.h>

#define WORKSPACE_BYTES (32u << 20) /* cuBLAS's recommendation for Hopper */
#define MAX_BATCH 65535             /* per call */

static cublasHandle_t gHandle = NULL;
static void *gWorkspace = NULL;

static void blasCheck(cublasStatus_t status, const char *call, const char *op) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  char detail[256];
  snprintf(detail, sizeof(detail), "%s (cuBLAS status %d)",
           cublasGetStatusString(status), (int)status);
  soaprt_cuda_fail(call, op, detail);
}
#define SOAPRT_CUBLAS_CHECK(call, op) blasCheck((call), #call, (op))

static cublasHandle_t handle(const char *op) {
  cudaStream_t stream = soaprt_cuda_stream(op);
  if (gHandle)
    return gHandle;
  SOAPRT_CUBLAS_CHECK(cublasCreate(&gHandle), op);
  SOAPRT_CUBLAS_CHECK(cublasSetStream(gHandle, stream), op);
  /* fp32 GEMMs follow the compute type of each call (no TF32 unless it is
     CUBLAS_COMPUTE_32F_FAST_TF32). */
  SOAPRT_CUBLAS_CHECK(cublasSetMathMode(gHandle, CUBLAS_DEFAULT_MATH), op);
  SOAPRT_CUDA_CHECK(cudaMalloc(&gWorkspace, WORKSPACE_BYTES), op);
  soaprt_cuda.outsidePoolBytes += WORKSPACE_BYTES;
  SOAPRT_CUBLAS_CHECK(cublasSetWorkspace(gHandle, gWorkspace, WORKSPACE_BYTES),
                      op);
  return gHandle;
}

int64_t soaprt_cuda_blas_workspace_bytes(void) {
  return gWorkspace ? (int64_t)WORKSPACE_BYTES : 0;
}

void soaprt_cuda_blas_finalize(void) {
  if (gHandle)
    SOAPRT_CUBLAS_CHECK(cublasDestroy(gHandle), "soaprt_finalize");
  gHandle = NULL;
  if (gWorkspace)
    SOAPRT_CUDA_CHECK(cudaFree(gWorkspace), "soaprt_finalize");
  gWorkspace = NULL;
}

/* Replaces m by a packed row-major copy (`fill`: with its values). */
static void pack(soaprt_matrix_t *m, int fill, const char *op) {
  m->packed = soaprt_cuda_pack(&m->view, fill, op);
  m->base = m->packed;
  m->rs = m->cols;
  m->cs = 1;
  m->bs = m->batch == 1 ? 0 : m->rows * m->cols;
}

/* The element types of a matmul: A's and B's, C's. */
typedef struct gemm_types {
  cudaDataType ab, c;
  int64_t abSize, cSize;
} gemm_types_t;

static void matmul(soaprt_unranked_memref_t *a, soaprt_unranked_memref_t *b,
                   soaprt_unranked_memref_t *c, int64_t flags, const char *op,
                   gemm_types_t types) {
  if (!op)
    op = "matmul";
  soaprt_matrix_t A, B, C;
  soaprt_matmul_describe(&A, &B, &C, a, b, c, types.abSize, types.cSize, op);
  int64_t batch = C.batch, M = C.rows, N = C.cols, K = A.cols;
  if (batch == 0 || M == 0 || N == 0 || K == 0)
    return; /* C += nothing */
  cublasHandle_t h = handle(op);

  soaprt_gemm_layouts_t l = soaprt_gemm_layouts(&A, &B, &C, 1, pack, op);
  int layoutA = l.a, layoutB = l.b, layoutC = l.c;
  int64_t ldA = l.lda, ldB = l.ldb, ldc = l.ldc;

  /* cuBLAS operands: (first, second) with C' = op(first) op(second). */
  int transposed = layoutC == SOAPRT_LAYOUT_ROW; /* computes C^T = B^T A^T */
  const soaprt_matrix_t *first = transposed ? &B : &A;
  const soaprt_matrix_t *second = transposed ? &A : &B;
  int layoutFirst = transposed ? layoutB : layoutA;
  int layoutSecond = transposed ? layoutA : layoutB;
  int64_t ldFirst = transposed ? ldB : ldA, ldSecond = transposed ? ldA : ldB;
  int inPlace = transposed ? SOAPRT_LAYOUT_ROW : SOAPRT_LAYOUT_COL;
  cublasOperation_t opFirst =
      layoutFirst == inPlace ? CUBLAS_OP_N : CUBLAS_OP_T;
  cublasOperation_t opSecond =
      layoutSecond == inPlace ? CUBLAS_OP_N : CUBLAS_OP_T;
  int64_t m = transposed ? N : M, n = transposed ? M : N;
  if (!soaprt_fits_int(m) || !soaprt_fits_int(n) || !soaprt_fits_int(K) ||
      !soaprt_fits_int(ldFirst) || !soaprt_fits_int(ldSecond) ||
      !soaprt_fits_int(ldc))
    soaprt_fatal("%s: matmul dimensions beyond 2^31 are not supported", op);

  /* fp32 accumulation for every type (16-bit inputs run on tensor cores
     with it); TF32 only for fp32 inputs, where the op allows it. */
  float alpha = 1.0f;
  float beta = (flags & SOAPRT_CUDA_OVERWRITE) ? 0.0f : 1.0f;
  cublasComputeType_t compute =
      (flags & SOAPRT_CUDA_ALLOW_TF32) && types.ab == CUDA_R_32F
          ? CUBLAS_COMPUTE_32F_FAST_TF32
          : CUBLAS_COMPUTE_32F;
  for (int64_t done = 0; done < batch;) {
    int64_t count = batch - done < MAX_BATCH ? batch - done : MAX_BATCH;
    SOAPRT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
                            h, opFirst, opSecond, (int)m, (int)n, (int)K,
                            &alpha,
                            first->base + done * first->bs * types.abSize,
                            types.ab, (int)ldFirst, (long long)first->bs,
                            second->base + done * second->bs * types.abSize,
                            types.ab, (int)ldSecond, (long long)second->bs,
                            &beta, C.base + done * C.bs * types.cSize, types.c,
                            (int)ldc, (long long)(batch == 1 ? M * N : C.bs),
                            (int)count, compute, CUBLAS_GEMM_DEFAULT),
                        op);
    done += count;
  }
  if (A.packed)
    soaprt_cuda_unpack(&A.view, A.packed, 0, op);
  if (B.packed)
    soaprt_cuda_unpack(&B.view, B.packed, 0, op);
  if (C.packed)
    soaprt_cuda_unpack(&C.view, C.packed, 1, op);
  soaprt_cuda_after_call(op);
}

#define SOAPRT_MATMUL_ENTRY(suffix, abType, abBytes, cType, cBytes)            \
  void _mlir_ciface_soaprt_cuda_matmul_##suffix(                               \
      soaprt_unranked_memref_t *a, soaprt_unranked_memref_t *b,                \
      soaprt_unranked_memref_t *c, int64_t flags, const char *op) {            \
    gemm_types_t types = {abType, cType, abBytes, cBytes};                     \
    matmul(a, b, c, flags, op, types);                                         \
  }
SOAPRT_MATMUL_ENTRY(f32, CUDA_R_32F, 4, CUDA_R_32F, 4)
SOAPRT_MATMUL_ENTRY(bf16, CUDA_R_16BF, 2, CUDA_R_16BF, 2)
SOAPRT_MATMUL_ENTRY(f16, CUDA_R_16F, 2, CUDA_R_16F, 2)
SOAPRT_MATMUL_ENTRY(bf16_f32, CUDA_R_16BF, 2, CUDA_R_32F, 4)
SOAPRT_MATMUL_ENTRY(f16_f32, CUDA_R_16F, 2, CUDA_R_32F, 4)
