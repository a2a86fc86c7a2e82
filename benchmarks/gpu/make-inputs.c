/*===- make-inputs.c - Scaled random .npy inputs for the GPU check ---------===*
 *
 *   make-inputs SPEC.txt OUTDIR SEED
 *
 * Writes OUTDIR/in0.npy, in1.npy, ... for an executable soapc built, one per
 * entry-function argument, as SPEC.txt lists them (one line per argument,
 * in order: "INDEX DTYPE SHAPE ROLE [NAME]", e.g.
 * "1 f32 64x3x11x11 param features.0.weight"; DTYPE f32, f64, bf16, f16,
 * i32 or i64;
 * SHAPE dimensions joined by 'x', "scalar" for rank 0; ROLE "param" for a
 * {soap.parameter} argument, "data" otherwise; NAME the argument's loc name;
 * benchmarks/gpu/input-spec.py writes such a list from the MLIR).
 *
 * Why not the executables' own --random-inputs (which also draw each
 * matmul / convolution weight He-uniform, soap-random-input-ranges): these
 * files are fixed bytes whose sha256 the GPU check compares on both
 * machines, their biases are small, and their data differ per sample
 * (below). Here weights of rank >= 2 are He-uniform:
 * uniform in [-b, b) with b = sqrt(6 / fan_in) (variance 2 / fan_in, which
 * a relu halves; fan_in = dim 0 of a rank-2 [in, out] matmul weight, the
 * product of all dimensions but the first otherwise, e.g. C*KH*KW of an
 * FxCxKHxKW filter); rank-0/1 parameters named "...bias" (biases, folded
 * batch-norm shifts) are uniform in [-0.1, 0.1), other ones (batch-norm
 * scales) in [0.5, 1.5); floating-point data inputs uniform in [-1, 1),
 * times s + 1 for sample s along dimension 0 (random noise images are
 * statistically alike, and a deep network maps them to nearly the same
 * output: the scale makes the samples' results differ, so that a mix-up of
 * samples shows); integer inputs in [0, 1000); float64 arguments get the
 * float32 values, widened (a float64 version of the model, diff-test.sh
 * REFERENCE=f64, sees the same inputs); bf16 ('<u2', as libsoaprt writes
 * it) and f16 arguments the float32 values rounded to nearest even (their
 * f32 version, REFERENCE=f32, reads those widened: diff-test.sh). At batch 2
 *the logits are finite and the two samples' differ by ~50% of the largest:
 *alexnet max|logit| ~21, inception_v3 ~24, resnet101 ~1e8 (its residual sums
 *grow; the comparison is relative to the largest value).
 *
 * Deterministic: splitmix64 from (SEED, INDEX) and exactly rounded IEEE
 * arithmetic, so the same binary writes the same bytes on any x86-64 machine
 * (the GPU check compares sha256 sums with the ones recorded at bundle time).
 * Plain C, no dependencies: gpu-bundle.sh links it statically.
 *
 *===----------------------------------------------------------------------===*/

#include "../../lib/Runtime/soaprt_float16.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_RANK 16

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int writeHeader(FILE *f, const char *descr, const int64_t *shape,
                       int rank) {
  char dims[512] = "";
  size_t used = 0;
  for (int i = 0; i < rank; ++i)
    used += (size_t)snprintf(dims + used, sizeof(dims) - used, "%s%lld",
                             i ? ", " : "", (long long)shape[i]);
  if (rank == 1)
    snprintf(dims + used, sizeof(dims) - used, ",");
  char dict[640];
  int n = snprintf(dict, sizeof(dict),
                   "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                   descr, dims);
  int pad = (64 - (10 + n + 1) % 64) % 64;
  int headerLen = n + pad + 1;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                           (unsigned char)(headerLen & 0xff),
                           (unsigned char)(headerLen >> 8)};
  if (fwrite(pre, 1, 10, f) != 10 || fwrite(dict, 1, (size_t)n, f) != (size_t)n)
    return 1;
  for (int i = 0; i < pad; ++i)
    if (fputc(' ', f) == EOF)
      return 1;
  return fputc('\n', f) == EOF;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: make-inputs SPEC.txt OUTDIR SEED\n");
    return 2;
  }
  FILE *spec = fopen(argv[1], "r");
  if (!spec) {
    fprintf(stderr, "make-inputs: cannot open '%s': %s\n", argv[1],
            strerror(errno));
    return 2;
  }
  if (mkdir(argv[2], 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "make-inputs: cannot create '%s': %s\n", argv[2],
            strerror(errno));
    return 2;
  }
  uint64_t seed = strtoull(argv[3], NULL, 10);
  char line[4096];
  int count = 0;
  while (fgets(line, sizeof(line), spec)) {
    long long index;
    char dtype[16], shapeText[1024], role[16], name[1024] = "-";
    if (line[0] == '#' || line[0] == '\n')
      continue;
    if (sscanf(line, "%lld %15s %1023s %15s %1023s", &index, dtype, shapeText,
               role, name) < 4) {
      fprintf(stderr, "make-inputs: bad line in '%s': %s", argv[1], line);
      return 2;
    }
    int64_t shape[MAX_RANK];
    int rank = 0;
    int64_t n = 1;
    if (strcmp(shapeText, "scalar") != 0) {
      for (char *p = shapeText; *p;) {
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p || rank == MAX_RANK || d < 0) {
          fprintf(stderr, "make-inputs: bad shape '%s'\n", shapeText);
          return 2;
        }
        shape[rank++] = d;
        n *= d;
        p = *end == 'x' ? end + 1 : end;
      }
    }
    int isParam = !strcmp(role, "param");
    const char *descr;
    int size;
    int isFloat = !strcmp(dtype, "f32") || !strcmp(dtype, "f64") ||
                  !strcmp(dtype, "bf16") || !strcmp(dtype, "f16");
    if (!strcmp(dtype, "f32")) descr = "<f4", size = 4;
    else if (!strcmp(dtype, "f64")) descr = "<f8", size = 8;
    else if (!strcmp(dtype, "bf16"))
      descr = "<u2", size = 2; /* soaprt's */
    else if (!strcmp(dtype, "f16"))
      descr = "<f2", size = 2;
    else if (!strcmp(dtype, "i32")) descr = "<i4", size = 4;
    else if (!strcmp(dtype, "i64")) descr = "<i8", size = 8;
    else {
      fprintf(stderr, "make-inputs: unsupported dtype '%s'\n", dtype);
      return 2;
    }
    /* The range of floating-point values: [lo, lo + width). */
    double lo = -1.0, width = 2.0;
    size_t nameLen = strlen(name);
    int isBias = nameLen >= 4 && !strcmp(name + nameLen - 4, "bias");
    if (isParam && rank <= 1 && isBias) {
      lo = -0.1, width = 0.2;
    } else if (isParam && rank <= 1) {
      lo = 0.5, width = 1.0;
    } else if (isParam) {
      int64_t fanIn = 1;
      if (rank == 2)
        fanIn = shape[0];
      else
        for (int i = 1; i < rank; ++i)
          fanIn *= shape[i];
      double bound = sqrt(6.0 / (double)(fanIn > 0 ? fanIn : 1));
      lo = -bound, width = 2.0 * bound;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/in%lld.npy", argv[2], index);
    FILE *f = fopen(path, "wb");
    if (!f || writeHeader(f, descr, shape, rank)) {
      fprintf(stderr, "make-inputs: cannot write '%s'\n", path);
      return 2;
    }
    int64_t sampleSize = rank >= 1 && shape[0] > 0 ? n / shape[0] : 1;
    if (sampleSize < 1)
      sampleSize = 1;
    uint64_t state = seed * 0xD1B54A32D192ED03ull +
                     (uint64_t)index * 0x9E3779B97F4A7C15ull;
    enum { CHUNK = 1 << 16 };
    static unsigned char buffer[CHUNK * 8];
    for (int64_t i = 0; i < n;) {
      int64_t m = n - i < CHUNK ? n - i : CHUNK;
      for (int64_t j = 0; j < m; ++j) {
        uint64_t r = splitmix64(&state);
        double unit = (double)(r >> 11) * (1.0 / 9007199254740992.0);
        double x = lo + width * unit;
        if (!isParam && rank >= 2 && isFloat)
          x *= (double)(1 + (i + j) / sampleSize); /* sample s: x (s + 1) */
        int64_t k = (int64_t)(r % 1000);
        unsigned char *out = buffer + j * size;
        if (size == 2) { /* the f32 value rounded to nearest even */
          uint16_t v = descr[1] == 'u' ? soaprt_float_to_bf16((float)x)
                                       : soaprt_float_to_half((float)x);
          memcpy(out, &v, 2);
        } else if (size == 4 && descr[1] == 'f') {
          float v = (float)x;
          memcpy(out, &v, 4);
        } else if (descr[1] == 'f') {
          double v = (double)(float)x; /* the f32 values: see soaprt_main.c */
          memcpy(out, &v, 8);
        } else if (size == 4) {
          int32_t v = (int32_t)k;
          memcpy(out, &v, 4);
        } else {
          memcpy(out, &k, 8);
        }
      }
      if (fwrite(buffer, (size_t)size, (size_t)m, f) != (size_t)m) {
        fprintf(stderr, "make-inputs: cannot write '%s'\n", path);
        return 2;
      }
      i += m;
    }
    if (fclose(f) != 0) {
      fprintf(stderr, "make-inputs: cannot write '%s'\n", path);
      return 2;
    }
    ++count;
  }
  fclose(spec);
  printf("make-inputs: wrote %d input(s) to %s\n", count, argv[2]);
  return 0;
}
