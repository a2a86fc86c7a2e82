/*===- soaprt_gemm.h - GEMM operands as strided matrices --------*- C -*-===*
 *
 * What the CPU target's matmuls (soaprt_blas.c, OpenBLAS) and the CUDA
 * back end's (soaprt_cuda_blas.c, cuBLAS) share: an operand view (rank 3:
 * batch x rows x columns, or rank 2: one matrix) read as a batch of
 * matrices, whether a BLAS can read it in place (one unit stride), and the
 * shape check of C[b] += A[b] x B[b].
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_SOAPRT_GEMM_H
#define SOAP_RUNTIME_SOAPRT_GEMM_H

#include "soaprt_internal.h"

#include <limits.h>

/* One operand: a batch of R x Cc matrices. */
typedef struct soaprt_matrix {
  soaprt_region_t view; /* rank 2 or 3 */
  char *base;           /* what the BLAS reads (the view or a packed copy) */
  int64_t rows, cols, rs, cs, batch, bs;
  char *packed; /* the packed copy, or NULL */
} soaprt_matrix_t;

enum { SOAPRT_LAYOUT_NONE, SOAPRT_LAYOUT_ROW, SOAPRT_LAYOUT_COL };

/* The layout of m a BLAS can read in place, and its leading dimension:
 *   row (cs == 1, ld = rs >= Cc): row-major storage of the matrix
 *   col (rs == 1, ld = cs >= R):  column-major storage of it
 * or none (no unit stride, a negative batch stride). */
static inline int soaprt_matrix_layout(const soaprt_matrix_t *m, int64_t *ld) {
  if (m->bs < 0)
    return SOAPRT_LAYOUT_NONE;
  if (m->cs == 1 || m->cols == 1) {
    int64_t l = m->rows == 1 ? m->cols : m->rs;
    if (l >= m->cols && l >= 1) {
      *ld = l;
      return SOAPRT_LAYOUT_ROW;
    }
  }
  if (m->rs == 1 || m->rows == 1) {
    int64_t l = m->cols == 1 ? m->rows : m->cs;
    if (l >= m->rows && l >= 1) {
      *ld = l;
      return SOAPRT_LAYOUT_COL;
    }
  }
  return SOAPRT_LAYOUT_NONE;
}

/* m as operand `name` of op `op`: the view `ref` of `elemSize`-byte
 * elements; fatal unless rank 2 or 3. */
static inline void soaprt_matrix_describe(soaprt_matrix_t *m,
                                          soaprt_unranked_memref_t *ref,
                                          int64_t elemSize, const char *name,
                                          const char *op) {
  if (ref->rank != 3 && ref->rank != 2)
    soaprt_fatal("%s: matmul operand %s must be a rank-3 (batch x rows x "
                 "columns) or rank-2 view, not rank %lld",
                 op, name, (long long)ref->rank);
  m->view = soaprt_view(ref, elemSize);
  m->base = m->view.base;
  int b = ref->rank == 3; /* index of the rows dim */
  m->batch = b ? m->view.sizes[0] : 1;
  m->rows = m->view.sizes[b];
  m->cols = m->view.sizes[b + 1];
  m->bs = m->batch == 1 ? 0 : m->view.strides[0];
  m->rs = m->view.strides[b];
  m->cs = m->view.strides[b + 1];
  m->packed = NULL;
}

/* Fatal unless C[b] (batch x M x N) = A[b] (M x K) x B[b] (K x N), A and B
 * each of C's batch or of one matrix (the same for every b). */
static inline void soaprt_matmul_check_shapes(const soaprt_matrix_t *A,
                                              const soaprt_matrix_t *B,
                                              const soaprt_matrix_t *C,
                                              const char *op) {
  int64_t batch = C->batch, M = C->rows, N = C->cols, K = A->cols;
  if (A->rows != M || B->rows != K || B->cols != N ||
      (A->batch != batch && A->batch != 1) ||
      (B->batch != batch && B->batch != 1))
    soaprt_fatal("%s: matmul shapes do not match: A %lldx%lldx%lld, B "
                 "%lldx%lldx%lld, C %lldx%lldx%lld",
                 op, (long long)A->batch, (long long)A->rows,
                 (long long)A->cols, (long long)B->batch, (long long)B->rows,
                 (long long)B->cols, (long long)batch, (long long)M,
                 (long long)N);
}

/* A, B and C of C[b] += A[b] x B[b] from their views (A and B of
 * `abSize`-byte elements, C of `cSize`-byte ones), shapes checked. */
static inline void
soaprt_matmul_describe(soaprt_matrix_t *A, soaprt_matrix_t *B,
                       soaprt_matrix_t *C, soaprt_unranked_memref_t *a,
                       soaprt_unranked_memref_t *b, soaprt_unranked_memref_t *c,
                       int64_t abSize, int64_t cSize, const char *op) {
  soaprt_matrix_describe(A, a, abSize, "A", op);
  soaprt_matrix_describe(B, b, abSize, "B", op);
  soaprt_matrix_describe(C, c, cSize, "C", op);
  soaprt_matmul_check_shapes(A, B, C, op);
}

/* Whether C's batches may be written by one call each without overlapping
 * (sufficient: positive strides and the batch stride beyond one matrix's
 * extent). */
static inline int soaprt_matrix_batches_disjoint(const soaprt_matrix_t *C) {
  if (C->batch <= 1)
    return 1;
  int64_t extent = (C->rows - 1) * (C->rs < 0 ? -C->rs : C->rs) +
                   (C->cols - 1) * (C->cs < 0 ? -C->cs : C->cs) + 1;
  return C->bs >= extent;
}

static inline int soaprt_fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Packs m (a copy in row layout that the BLAS reads instead; `fill`: with
 * m's values) for op `op`: the host or the device copy. */
typedef void (*soaprt_matrix_pack_fn)(soaprt_matrix_t *m, int fill,
                                      const char *op);

/* The layouts (and leading dimensions) the GEMM reads A, B and C in: each
 * in place where soaprt_matrix_layout finds one (C also needs its batches
 * disjoint), else packed by `pack` (C filled with its values if `fillC`). */
typedef struct soaprt_gemm_layouts {
  int a, b, c;
  int64_t lda, ldb, ldc;
} soaprt_gemm_layouts_t;
static inline soaprt_gemm_layouts_t
soaprt_gemm_layouts(soaprt_matrix_t *A, soaprt_matrix_t *B, soaprt_matrix_t *C,
                    int fillC, soaprt_matrix_pack_fn pack, const char *op) {
  soaprt_gemm_layouts_t l = {0, 0, 0, 0, 0, 0};
  l.c = soaprt_matrix_layout(C, &l.ldc);
  if (!soaprt_matrix_batches_disjoint(C))
    l.c = SOAPRT_LAYOUT_NONE;
  if (l.c == SOAPRT_LAYOUT_NONE) {
    pack(C, fillC, op);
    l.c = soaprt_matrix_layout(C, &l.ldc);
  }
  l.a = soaprt_matrix_layout(A, &l.lda);
  if (l.a == SOAPRT_LAYOUT_NONE) {
    pack(A, 1, op);
    l.a = soaprt_matrix_layout(A, &l.lda);
  }
  l.b = soaprt_matrix_layout(B, &l.ldb);
  if (l.b == SOAPRT_LAYOUT_NONE) {
    pack(B, 1, op);
    l.b = soaprt_matrix_layout(B, &l.ldb);
  }
  return l;
}

#endif /* SOAP_RUNTIME_SOAPRT_GEMM_H */
