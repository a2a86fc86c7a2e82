/*===- runtime_test_views.h - Memref descriptors for the runtime's tests --===*
 *
 * The tests of libsoaprt_cuda call the runtime's C interface as compiled
 * code does: with MLIR's unranked memref descriptors. view_t holds one
 * (up to rank 8) and mk() fills it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef SOAP_UNITTESTS_RUNTIME_TEST_VIEWS_H
#define SOAP_UNITTESTS_RUNTIME_TEST_VIEWS_H

#include "soap/Runtime/soaprt.h"

#include <stdint.h>
#include <string.h>

typedef struct view {
  int64_t words[3 + 2 * 8]; /* allocated, aligned, offset, sizes, strides */
  soaprt_unranked_memref_t ref;
} view_t;

/* A rank-`rank` view of `base` + `offset` elements. */
static inline soaprt_unranked_memref_t *mk(view_t *v, void *base,
                                           int64_t offset, int rank,
                                           const int64_t *sizes,
                                           const int64_t *strides) {
  memset(v, 0, sizeof(*v));
  v->words[0] = (int64_t)(intptr_t)base;
  v->words[1] = (int64_t)(intptr_t)base;
  v->words[2] = offset;
  for (int i = 0; i < rank; ++i) {
    v->words[3 + i] = sizes[i];
    v->words[3 + rank + i] = strides[i];
  }
  v->ref.rank = rank;
  v->ref.descriptor = v->words;
  return &v->ref;
}

#endif /* SOAP_UNITTESTS_RUNTIME_TEST_VIEWS_H */
