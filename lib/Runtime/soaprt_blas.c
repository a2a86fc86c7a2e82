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

#include "soaprt_blas_internal.h"
#include "soaprt_gemm.h"

/* Replaces m by a packed row-major copy (`fill`: with its values). */
static void pack(soaprt_matrix_t *m, int fill, const char *op) {
  m->packed =
      soaprt_blas_alloc(soaprt_region_elements(&m->view) * m->view.elemSize,
                        "a packed matmul operand", op);
  if (fill)
    soaprt_copy_region(&m->view, m->packed, 1);
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
  soaprt_matmul_describe(&A, &B, &C, a, b, c, elemSize, elemSize, op);
  int64_t batch = C.batch, M = C.rows, N = C.cols, K = A.cols;
  int overwrite = (flags & SOAPRT_BLAS_OVERWRITE) != 0;
  if (batch == 0 || M == 0 || N == 0)
    return;
  if (K == 0) { /* C += nothing, or C = 0 */
    if (overwrite)
      soaprt_blas_zero(&C.view, op);
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
    soaprt_blas_gemm(elemSize, order, ta, tb, M, N, K, pa, ldA, pb, ldB,
                     overwrite, pc, ldc);
  }
  free(A.packed);
  free(B.packed);
  if (C.packed) {
    soaprt_copy_region(&C.view, C.packed, 0);
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
