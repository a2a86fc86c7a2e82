/*===- soaprt_blas.c - Matmuls of the CPU back end on CBLAS ---------------===*
 *
 * C[b] += A[b] x B[b] (or C[b] = ..., SOAPRT_BLAS_OVERWRITE) for strided views
 * (rank 3: batch x rows x columns; rank 2: one matrix) as one CBLAS GEMM per
 * batch: sgemm for f32, dgemm for f64 (include/soap/Runtime/soaprt.h).
 * soap-cpu-library-calls makes the calls; libsoaprt_blas.a is linked, with
 * OpenBLAS, only into executables that make them.
 *
 * A matrix X (R x Cc, strides rs, cs) is used in place when one of its
 * strides is 1:
 *   row layout (cs == 1, ld = rs >= Cc): row-major storage of X
 *   col layout (rs == 1, ld = cs >= R):  row-major storage of X^T
 * C decides the formulation: in row layout, CblasRowMajor with A and B
 * transposed where they are in col layout; in col layout, C^T = B^T A^T in
 * row-major terms, which is CblasColMajor with the same rule the other way
 * round. Anything else (no unit stride, negative strides, C's batches
 * overlapping) goes through a packed row-major copy.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_gemm.h"

#include <cblas.h>

#include <stdlib.h>
#include <string.h>

/* Copies between m's view and its packed row-major copy. */
static void copyPacked(soaprt_matrix_t *m, int toPacked) {
  int64_t e = m->view.elemSize;
  int b3 = m->view.rank == 3; /* index of the rows dim */
  int64_t bs = b3 ? m->view.strides[0] : 0;
  int64_t rs = m->view.strides[b3], cs = m->view.strides[b3 + 1];
  char *p = m->packed;
  for (int64_t b = 0; b < m->batch; ++b)
    for (int64_t r = 0; r < m->rows; ++r)
      for (int64_t c = 0; c < m->cols; ++c, p += e) {
        char *x = m->view.base + (b * bs + r * rs + c * cs) * e;
        if (toPacked)
          memcpy(p, x, (size_t)e);
        else
          memcpy(x, p, (size_t)e);
      }
}

/* Replaces m by a packed row-major copy (`fill`: with its values). */
static void pack(soaprt_matrix_t *m, int fill, const char *op) {
  int64_t bytes = m->batch * m->rows * m->cols * m->view.elemSize;
  m->packed = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!m->packed)
    soaprt_fatal("%s: cannot allocate %lld bytes for a packed matmul operand",
                 op, (long long)bytes);
  if (fill)
    copyPacked(m, 1);
  m->base = m->packed;
  m->rs = m->cols;
  m->cs = 1;
  m->bs = m->batch == 1 ? 0 : m->rows * m->cols;
}

static void matmul(soaprt_unranked_memref_t *a, soaprt_unranked_memref_t *b,
                   soaprt_unranked_memref_t *c, int64_t flags, const char *op,
                   int64_t elemSize) {
  if (!op)
    op = "matmul";
  soaprt_matrix_t A, B, C;
  soaprt_matrix_describe(&A, a, elemSize, "A", op);
  soaprt_matrix_describe(&B, b, elemSize, "B", op);
  soaprt_matrix_describe(&C, c, elemSize, "C", op);
  int64_t batch = C.batch, M = C.rows, N = C.cols, K = A.cols;
  soaprt_matmul_check_shapes(&A, &B, &C, op);
  int overwrite = (flags & SOAPRT_BLAS_OVERWRITE) != 0;
  if (batch == 0 || M == 0 || N == 0)
    return;
  if (K == 0) { /* C += nothing, or C = 0 */
    if (overwrite)
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t r = 0; r < M; ++r)
          for (int64_t x = 0; x < N; ++x)
            memset(C.base + (i * C.bs + r * C.rs + x * C.cs) * elemSize, 0,
                   (size_t)elemSize);
    return;
  }

  soaprt_gemm_layouts_t l =
      soaprt_gemm_layouts(&A, &B, &C, !overwrite, pack, op);
  int layoutA = l.a, layoutB = l.b, layoutC = l.c;
  int64_t ldA = l.lda, ldB = l.ldb, ldc = l.ldc;
  if (!soaprt_fits_int(M) || !soaprt_fits_int(N) || !soaprt_fits_int(K) ||
      !soaprt_fits_int(ldA) || !soaprt_fits_int(ldB) || !soaprt_fits_int(ldc))
    soaprt_fatal("%s: matmul dimensions beyond 2^31 are not supported", op);

  /* C in row layout: row-major, an operand in row layout as it is. C in
     col layout: column-major, an operand in col layout as it is. */
  int rowMajor = layoutC == SOAPRT_LAYOUT_ROW;
  int plain = rowMajor ? SOAPRT_LAYOUT_ROW : SOAPRT_LAYOUT_COL;
  enum CBLAS_ORDER order = rowMajor ? CblasRowMajor : CblasColMajor;
  enum CBLAS_TRANSPOSE ta = layoutA == plain ? CblasNoTrans : CblasTrans;
  enum CBLAS_TRANSPOSE tb = layoutB == plain ? CblasNoTrans : CblasTrans;
  for (int64_t i = 0; i < batch; ++i) {
    char *pa = A.base + i * A.bs * elemSize;
    char *pb = B.base + i * B.bs * elemSize;
    char *pc = C.base + i * C.bs * elemSize;
    if (elemSize == 4)
      cblas_sgemm(order, ta, tb, (int)M, (int)N, (int)K, 1.0f,
                  (const float *)pa, (int)ldA, (const float *)pb, (int)ldB,
                  overwrite ? 0.0f : 1.0f, (float *)pc, (int)ldc);
    else
      cblas_dgemm(order, ta, tb, (int)M, (int)N, (int)K, 1.0,
                  (const double *)pa, (int)ldA, (const double *)pb, (int)ldB,
                  overwrite ? 0.0 : 1.0, (double *)pc, (int)ldc);
  }
  free(A.packed);
  free(B.packed);
  if (C.packed) {
    copyPacked(&C, 0);
    free(C.packed);
  }
}

void _mlir_ciface_soaprt_cpu_matmul_f32(soaprt_unranked_memref_t *a,
                                        soaprt_unranked_memref_t *b,
                                        soaprt_unranked_memref_t *c,
                                        int64_t flags, const char *op) {
  matmul(a, b, c, flags, op, 4);
}

void _mlir_ciface_soaprt_cpu_matmul_f64(soaprt_unranked_memref_t *a,
                                        soaprt_unranked_memref_t *b,
                                        soaprt_unranked_memref_t *c,
                                        int64_t flags, const char *op) {
  matmul(a, b, c, flags, op, 8);
}
