/*===- soaprt_blas_internal.h - What libsoaprt_blas's files share -*- C -*-===*
 *
 * soaprt_blas.c (matmuls) and soaprt_blas_conv.c (convolutions) of the CPU
 * target: one CBLAS GEMM of either element type, allocation that ends the
 * process when it fails, and zeroing a strided view.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_RUNTIME_SOAPRT_BLAS_INTERNAL_H
#define SOAP_RUNTIME_SOAPRT_BLAS_INTERNAL_H

#include "soaprt_internal.h"

#include <cblas.h>

#include <stdlib.h>
#include <string.h>

/* C = A B + C (or C = A B with `overwrite`), with CBLAS's order and
 * transpose flags: sgemm for 4-byte elements, dgemm for 8-byte ones. The
 * callers checked that the sizes and leading dimensions fit an int. */
static inline void soaprt_blas_gemm(int64_t elemSize, enum CBLAS_ORDER order,
                                    enum CBLAS_TRANSPOSE ta,
                                    enum CBLAS_TRANSPOSE tb, int64_t M,
                                    int64_t N, int64_t K, const char *a,
                                    int64_t lda, const char *b, int64_t ldb,
                                    int overwrite, char *c, int64_t ldc) {
  if (elemSize == 4)
    cblas_sgemm(order, ta, tb, (int)M, (int)N, (int)K, 1.0f, (const float *)a,
                (int)lda, (const float *)b, (int)ldb, overwrite ? 0.0f : 1.0f,
                (float *)c, (int)ldc);
  else
    cblas_dgemm(order, ta, tb, (int)M, (int)N, (int)K, 1.0, (const double *)a,
                (int)lda, (const double *)b, (int)ldb, overwrite ? 0.0 : 1.0,
                (double *)c, (int)ldc);
}

/* `bytes` from malloc (at least one), or the end of the process with a
 * message naming op `op` and `what` the buffer is for. */
static inline char *soaprt_blas_alloc(int64_t bytes, const char *what,
                                      const char *op) {
  char *p = (char *)malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!p)
    soaprt_fatal("%s: cannot allocate %lld bytes for %s", op, (long long)bytes,
                 what);
  return p;
}

/* Sets every element of the view `r` to zero (+0.0 in either float type). */
static inline void soaprt_blas_zero(const soaprt_region_t *r, const char *op) {
  int64_t bytes = soaprt_region_elements(r) * r->elemSize;
  char *zeros = soaprt_blas_alloc(bytes, "zeros", op);
  memset(zeros, 0, (size_t)(bytes > 0 ? bytes : 1));
  soaprt_copy_region(r, zeros, 0);
  free(zeros);
}

#endif /* SOAP_RUNTIME_SOAPRT_BLAS_INTERNAL_H */
