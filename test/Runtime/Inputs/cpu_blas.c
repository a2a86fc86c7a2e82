/* Drives libsoaprt_blas's matmul (soaprt_blas.c) by hand on the layouts the
 * CPU target's views can have, against a plain triple loop in double:
 * A, B and C each row-major (cs == 1), column-major (rs == 1, a transposed
 * view), or with no unit stride (packed by the runtime); batched, with an
 * operand broadcast over the batch; C accumulated or overwritten (a NaN in
 * C must not survive an overwrite). Prints one line per failing case and
 * "N cases, M failed". */
#include "soap/Runtime/soaprt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rank-3 strided memref descriptor (what MLIR passes). */
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} desc3_t;

enum { ROW, COL, GAPPED };
static const char *layoutName[] = {"row", "col", "gapped"};

/* A batch x r x c view of a fresh buffer in `layout`: row-major, column-
 * major per matrix, or row-major with every element 2 apart. */
static desc3_t makeView(int64_t batch, int64_t r, int64_t c, int layout,
                        int64_t elem, void **buffer) {
  int64_t gap = layout == GAPPED ? 2 : 1;
  int64_t per = r * c * gap;
  *buffer = calloc((size_t)(batch * per + 1), (size_t)elem);
  desc3_t d = {*buffer, *buffer, 1, {batch, r, c}, {per, 0, 0}};
  if (layout == COL) {
    d.strides[1] = 1;
    d.strides[2] = r;
  } else {
    d.strides[1] = c * gap;
    d.strides[2] = gap;
  }
  if (batch == 1)
    d.strides[0] = 0;
  return d;
}

static double *at(desc3_t *d, int64_t b, int64_t i, int64_t j, int64_t e) {
  (void)e;
  return (double *)d->aligned + d->offset + b * d->strides[0] +
         i * d->strides[1] + j * d->strides[2];
}
static float *atf(desc3_t *d, int64_t b, int64_t i, int64_t j) {
  return (float *)d->aligned + d->offset + b * d->strides[0] +
         i * d->strides[1] + j * d->strides[2];
}

static int runCase(int64_t batch, int64_t M, int64_t N, int64_t K, int la,
                   int lb, int lc, int broadcastA, int overwrite, int f64) {
  int64_t e = f64 ? 8 : 4;
  void *ba, *bb, *bc;
  desc3_t A = makeView(broadcastA ? 1 : batch, M, K, la, e, &ba);
  desc3_t B = makeView(batch, K, N, lb, e, &bb);
  desc3_t C = makeView(batch, M, N, lc, e, &bc);
  double *ref = malloc(sizeof(double) * (size_t)(batch * M * N));
  unsigned seed = (unsigned)(batch * 131 + M * 31 + N * 7 + K + la * 3 +
                             lb * 5 + lc * 11 + overwrite);
  for (int64_t b = 0; b < A.sizes[0]; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        double v = (double)(rand_r(&seed) % 17) - 8;
        if (f64)
          *at(&A, b, i, k, e) = v;
        else
          *atf(&A, b, i, k) = (float)v;
      }
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) {
        double v = (double)(rand_r(&seed) % 13) - 6;
        if (f64)
          *at(&B, b, k, j, e) = v;
        else
          *atf(&B, b, k, j) = (float)v;
      }
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double c0 = overwrite && (i + j) % 3 == 0 ? NAN : (double)(i - j);
        if (f64)
          *at(&C, b, i, j, e) = c0;
        else
          *atf(&C, b, i, j) = (float)c0;
        double sum = overwrite ? 0 : c0;
        int64_t ab = broadcastA ? 0 : b;
        for (int64_t k = 0; k < K; ++k)
          sum += (f64 ? *at(&A, ab, i, k, e) : *atf(&A, ab, i, k)) *
                 (f64 ? *at(&B, b, k, j, e) : *atf(&B, b, k, j));
        ref[(b * M + i) * N + j] = sum;
      }
  soaprt_unranked_memref_t ua = {3, &A}, ub = {3, &B}, uc = {3, &C};
  if (f64)
    _mlir_ciface_soaprt_cpu_matmul_f64(
        &ua, &ub, &uc, overwrite ? SOAPRT_BLAS_OVERWRITE : 0, "test");
  else
    _mlir_ciface_soaprt_cpu_matmul_f32(
        &ua, &ub, &uc, overwrite ? SOAPRT_BLAS_OVERWRITE : 0, "test");
  int bad = 0;
  for (int64_t b = 0; b < batch && !bad; ++b)
    for (int64_t i = 0; i < M && !bad; ++i)
      for (int64_t j = 0; j < N && !bad; ++j) {
        double got = f64 ? *at(&C, b, i, j, e) : *atf(&C, b, i, j);
        if (!(got == ref[(b * M + i) * N + j])) {
          printf("FAIL %s batch %lld M %lld N %lld K %lld A %s%s B %s C %s%s: "
                 "C[%lld][%lld][%lld] = %g, expected %g\n",
                 f64 ? "f64" : "f32", (long long)batch, (long long)M,
                 (long long)N, (long long)K, layoutName[la],
                 broadcastA ? " (broadcast)" : "", layoutName[lb],
                 layoutName[lc], overwrite ? " overwritten" : "", (long long)b,
                 (long long)i, (long long)j, got, ref[(b * M + i) * N + j]);
          bad = 1;
        }
      }
  free(ba);
  free(bb);
  free(bc);
  free(ref);
  return bad;
}

/* Calls the runtime with A's K different from B's ("shape") or a rank-4 C
 * ("rank"): it must end the process with a message naming the op. */
static int badCall(const char *what) {
  void *ba, *bb, *bc;
  desc3_t A = makeView(1, 4, 5, ROW, 4, &ba);
  desc3_t B = makeView(1, 6, 7, ROW, 4, &bb);
  desc3_t C = makeView(1, 4, 7, ROW, 4, &bc);
  soaprt_unranked_memref_t ua = {3, &A}, ub = {3, &B}, uc = {3, &C};
  if (strcmp(what, "rank") == 0)
    uc.rank = 4;
  _mlir_ciface_soaprt_cpu_matmul_f32(&ua, &ub, &uc, 0, "matmul 'fc1'");
  printf("no error\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--bad") == 0)
    return badCall(argv[2]);
  int cases = 0, failed = 0;
  static const int64_t shapes[][4] = {
      {1, 5, 7, 3}, {3, 4, 6, 9}, {2, 1, 8, 5}, {2, 6, 1, 4}, {1, 3, 5, 0}};
  for (int s = 0; s < 5; ++s)
    for (int la = 0; la < 3; ++la)
      for (int lb = 0; lb < 3; ++lb)
        for (int lc = 0; lc < 3; ++lc)
          for (int flags = 0; flags < 8; ++flags) {
            int broadcastA = flags & 1, overwrite = (flags >> 1) & 1,
                f64 = (flags >> 2) & 1;
            const int64_t *x = shapes[s];
            ++cases;
            failed += runCase(x[0], x[1], x[2], x[3], la, lb, lc, broadcastA,
                              overwrite, f64);
          }
  printf("%d cases, %d failed\n", cases, failed);
  return failed != 0;
}
