/*===- soaprt_main.c - main() of the executables soapc links -------------===*
 *
 *   mpirun -np N ./model [--inputs A.npy B.npy ...] [--random-inputs=SEED]
 *                        [--output-dir=DIR] [--iterations=K] [--quiet]
 *
 * See soap/Runtime/soaprt.h for the contract.
 *
 *===----------------------------------------------------------------------===*/

#include "soap/Runtime/soaprt_cuda.h" /* soaprt_device_synchronize */
#include "soaprt_float16.h"
#include "soaprt_internal.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#define MESSAGE_BYTES 1024

static int gQuiet = 0;

static void usage(FILE *out, const char *prog) {
  fprintf(out,
          "usage: mpirun -np %lld %s [--inputs A.npy B.npy ...] "
          "[--random-inputs=SEED]\n"
          "       [--output-dir=DIR] [--iterations=K] [--quiet]\n",
          (long long)soap_num_devices(), prog);
}

/* Every rank exits with status 1; rank 0 (or every rank with `all`) says why. */
static int failAll(const char *message, int all) {
  if (all || soaprt_rank() == 0) {
    if (all && soaprt_size() > 1)
      fprintf(stderr, "soaprt: error: [rank %lld] %s\n",
              (long long)soaprt_rank(), message);
    else
      fprintf(stderr, "soaprt: error: %s\n", message);
    fflush(stderr);
  }
  soaprt_finalize();
  return 1;
}

/* ----------------------------------------------------------------- .npy */

static void describeShape(char *out, size_t n, const int64_t *sizes,
                          int64_t rank) {
  size_t used = (size_t)snprintf(out, n, "(");
  for (int64_t i = 0; i < rank && used < n; ++i)
    used += (size_t)snprintf(out + used, n - used, "%s%lld", i ? ", " : "",
                             (long long)sizes[i]);
  if (used < n)
    snprintf(out + used, n - used, rank == 1 ? ",)" : ")");
}

/* The shape of the whole input `b` holds (a part of, on this rank). */
static const int64_t *wholeShape(const soaprt_binding_t *b) {
  return b->hasRegion ? b->whole : b->sizes;
}

/* Calls row(first, at) for each row (along the last dimension) of the part
 * of the input `b` holds, in order: `first` is the row's first element's
 * index in the whole input (row-major), `at` its index in b->data. */
static void forEachRow(const soaprt_binding_t *b,
                       void (*row)(const soaprt_binding_t *, int64_t first,
                                   int64_t at, int64_t length, void *),
                       void *context) {
  int64_t n = soaprt_num_elements(b);
  if (n == 0)
    return;
  if (!b->hasRegion || b->rank == 0) {
    row(b, 0, 0, n, context);
    return;
  }
  const int64_t *whole = wholeShape(b);
  int64_t last = b->rank - 1, length = b->sizes[last];
  int64_t index[SOAPRT_MAX_RANK] = {0};
  for (int64_t at = 0; at < n; at += length) {
    int64_t first = 0;
    for (int64_t d = 0; d < b->rank; ++d)
      first = first * whole[d] + b->offsets[d] + index[d];
    row(b, first, at, length, context);
    for (int64_t d = last - 1; d >= 0; --d) {
      if (++index[d] < b->sizes[d])
        break;
      index[d] = 0;
    }
  }
}

typedef struct npyRows {
  FILE *file;
  off_t dataStart;
  int failed;
} npyRows;

static void readRow(const soaprt_binding_t *b, int64_t first, int64_t at,
                    int64_t length, void *context) {
  npyRows *rows = (npyRows *)context;
  int64_t size = soaprt_dtype_size(b->dtype);
  if (rows->failed)
    return;
  if ((b->hasRegion &&
       fseeko(rows->file, rows->dataStart + (off_t)(first * size), SEEK_SET)) ||
      (int64_t)fread(b->data + at * size, 1, (size_t)(length * size),
                     rows->file) != length * size)
    rows->failed = 1;
}

/* Reads `path` into b->data (the part this rank holds), checking dtype and
 * shape. 0 or an error. */
static int readNpy(const char *path, soaprt_binding_t *b, int64_t index,
                   char *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, MESSAGE_BYTES, "cannot open input %lld '%s': %s",
             (long long)index, path, strerror(errno));
    return 1;
  }
  unsigned char magic[8];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0 ||
      magic[6] < 1 || magic[6] > 3) {
    snprintf(err, MESSAGE_BYTES, "input %lld '%s' is not a .npy file",
             (long long)index, path);
    fclose(f);
    return 1;
  }
  uint32_t headerLen = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  size_t lenBytes = magic[6] == 1 ? 2 : 4;
  if (fread(len, 1, lenBytes, f) != lenBytes) {
    snprintf(err, MESSAGE_BYTES, "input %lld '%s': truncated header",
             (long long)index, path);
    fclose(f);
    return 1;
  }
  headerLen = len[0] | (len[1] << 8) | ((uint32_t)len[2] << 16) |
              ((uint32_t)len[3] << 24);
  char *header = (char *)malloc(headerLen + 1);
  if (!header || fread(header, 1, headerLen, f) != headerLen) {
    snprintf(err, MESSAGE_BYTES, "input %lld '%s': truncated header",
             (long long)index, path);
    free(header);
    fclose(f);
    return 1;
  }
  header[headerLen] = 0;
  /* descr */
  char descr[16] = "";
  const char *d = strstr(header, "'descr'");
  if (d && (d = strchr(d + 7, '\'')) != NULL) {
    const char *end = strchr(d + 1, '\'');
    if (end && end - d - 1 < (long)sizeof(descr)) {
      memcpy(descr, d + 1, (size_t)(end - d - 1));
      descr[end - d - 1] = 0;
    }
  }
  if (descr[0] == '=')
    descr[0] = '<';
  const char *want = soaprt_dtype_npy(b->dtype);
  int descrOk = !strcmp(descr, want) ||
                (want[0] == '|' && descr[0] == '<' && !strcmp(descr + 1, want + 1));
  /* fortran_order */
  const char *fo = strstr(header, "'fortran_order'");
  int fortran = fo && strstr(fo, "True") && (!strstr(fo, "False") ||
                                              strstr(fo, "True") < strstr(fo, "False"));
  /* shape */
  int64_t shape[SOAPRT_MAX_RANK];
  int64_t rank = 0;
  int shapeOk = 0;
  const char *s = strstr(header, "'shape'");
  if (s && (s = strchr(s, '(')) != NULL) {
    ++s;
    shapeOk = 1;
    while (*s && *s != ')') {
      while (*s == ' ' || *s == ',')
        ++s;
      if (*s == ')')
        break;
      char *end;
      long long v = strtoll(s, &end, 10);
      if (end == s || rank == SOAPRT_MAX_RANK) {
        shapeOk = 0;
        break;
      }
      shape[rank++] = v;
      s = end;
    }
  }
  free(header);
  char wantShape[256], gotShape[256];
  describeShape(wantShape, sizeof(wantShape), wholeShape(b), b->rank);
  if (!descrOk || fortran || !shapeOk) {
    snprintf(err, MESSAGE_BYTES,
             "input %lld '%s': expected dtype %s and shape %s in C order, got "
             "dtype %s%s",
             (long long)index, path, want, wantShape, descr[0] ? descr : "?",
             fortran ? " in Fortran order" : "");
    fclose(f);
    return 1;
  }
  int match = rank == b->rank;
  for (int64_t i = 0; match && i < rank; ++i)
    match = shape[i] == wholeShape(b)[i];
  if (!match) {
    describeShape(gotShape, sizeof(gotShape), shape, rank);
    snprintf(err, MESSAGE_BYTES, "input %lld '%s': expected shape %s, got %s",
             (long long)index, path, wantShape, gotShape);
    fclose(f);
    return 1;
  }
  int64_t bytes = soaprt_dtype_size(b->dtype);
  for (int64_t i = 0; i < rank; ++i)
    bytes *= shape[i];
  npyRows rows = {f, ftello(f), 0};
  forEachRow(b, readRow, &rows);
  if (rows.failed) {
    snprintf(err, MESSAGE_BYTES,
             "input %lld '%s': file holds fewer than the %lld bytes of data "
             "its header promises",
             (long long)index, path, (long long)bytes);
    fclose(f);
    return 1;
  }
  fclose(f);
  return 0;
}

static int writeNpy(const char *path, const soaprt_binding_t *b) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return 1;
  char shape[256];
  describeShape(shape, sizeof(shape), b->sizes, b->rank);
  char dict[512];
  int n = snprintf(dict, sizeof(dict),
                   "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   soaprt_dtype_npy(b->dtype), shape);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  int headerLen = n + pad + 1;
  pre[8] = (unsigned char)(headerLen & 0xff);
  pre[9] = (unsigned char)(headerLen >> 8);
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
  for (int i = 0; ok && i < pad; ++i)
    ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF;
  int64_t bytes = soaprt_num_elements(b) * soaprt_dtype_size(b->dtype);
  ok = ok && (int64_t)fwrite(b->data, 1, (size_t)bytes, f) == bytes;
  return (fclose(f) != 0 || !ok) ? 1 : 0;
}

/* ------------------------------------------------------- random inputs */

/* SplitMix64's output number i + 1 from `state`: counter-based, so any
 * element of an input can be made without the ones before it. */
static uint64_t splitmix64At(uint64_t state, uint64_t i) {
  uint64_t z = state + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

typedef struct randomRows {
  uint64_t state;
} randomRows;

static void randomRow(const soaprt_binding_t *b, int64_t first, int64_t at,
                      int64_t length, void *context) {
  uint64_t state = ((randomRows *)context)->state;
  int oneD = b->rank <= 1;
  for (int64_t j = 0; j < length; ++j) {
    int64_t i = at + j;
    uint64_t r = splitmix64At(state, (uint64_t)(first + j));
    double unit = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0,1) */
    double x = b->hasRandomRange
                   ? b->randomLow + unit * (b->randomHigh - b->randomLow)
               : oneD ? 0.5 + unit
                      : 2.0 * unit - 1.0;
    int64_t k = b->hasRandomRange ? (int64_t)floor(x) : (int64_t)(r % 1000);
    switch (b->dtype) {
    case SOAPRT_F32: ((float *)b->data)[i] = (float)x; break;
    /* float64 gets the float32 values, widened: the float64 version of a
     * model (scripts/diff-test.sh REFERENCE=f64) sees the same inputs. */
    case SOAPRT_F64: ((double *)b->data)[i] = (double)(float)x; break;
    case SOAPRT_F16:
      ((uint16_t *)b->data)[i] = soaprt_float_to_half((float)x);
      break;
    case SOAPRT_BF16:
      ((uint16_t *)b->data)[i] = soaprt_float_to_bf16((float)x);
      break;
    case SOAPRT_I32: ((int32_t *)b->data)[i] = (int32_t)k; break;
    case SOAPRT_I64: ((int64_t *)b->data)[i] = k; break;
    case SOAPRT_I16: ((int16_t *)b->data)[i] = (int16_t)k; break;
    case SOAPRT_I8:
      ((int8_t *)b->data)[i] = (int8_t)(b->hasRandomRange ? k : r % 100);
      break;
    case SOAPRT_I1:
      ((uint8_t *)b->data)[i] = (uint8_t)(b->hasRandomRange ? k & 1 : r & 1);
      break;
    default: break;
    }
  }
}

/* Same values on every rank, for any number of ranks (a rank holding a part
 * of the input gets that part of them). */
static void fillRandom(soaprt_binding_t *b, int64_t index, uint64_t seed) {
  randomRows rows = {seed * 0xD1B54A32D192ED03ull +
                     (uint64_t)index * 0x9E3779B97F4A7C15ull};
  forEachRow(b, randomRow, &rows);
}

/* The rank's part of the input's initial value. */
static void initialRow(const soaprt_binding_t *b, int64_t first, int64_t at,
                       int64_t length, void *context) {
  (void)context;
  int64_t size = soaprt_dtype_size(b->dtype);
  memcpy(b->data + at * size, b->initial + first * size,
         (size_t)(length * size));
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The training step allocates and frees the same buffers every iteration.
 * glibc would map each large one afresh (mmap above 128 KiB to 32 MiB) and
 * hand freed heap memory back, so every iteration faulted in fresh zeroed
 * pages. Freed memory stays in the process instead (as the CUDA back end's
 * memory pool keeps it): no mmap per buffer, no trimming; the heap peaks
 * at about the step's peak. SOAPRT_RETURN_FREED_MEMORY=1 keeps glibc's
 * defaults. */
static void keepFreedMemory(void) {
#ifdef __GLIBC__
  const char *env = getenv("SOAPRT_RETURN_FREED_MEMORY");
  if (env && *env && strcmp(env, "0") != 0)
    return;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
#endif
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv) {
  keepFreedMemory();
  if (soaprt_init(&argc, &argv) != 0) {
    fprintf(stderr, "soaprt: error: cannot initialize MPI\n");
    return 1;
  }
  const char *prog = argc ? argv[0] : "model";
  char message[MESSAGE_BYTES];
  const char **inputFiles = (const char **)calloc((size_t)argc + 1, sizeof(char *));
  int numInputFiles = 0, haveInputs = 0, haveSeed = 0;
  uint64_t seed = 1;
  long iterations = 1;
  const char *outputDir = ".";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    char *end;
    if (!strcmp(a, "--inputs")) {
      haveInputs = 1;
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
        inputFiles[numInputFiles++] = argv[++i];
    } else if (!strncmp(a, "--random-inputs=", 16)) {
      haveSeed = 1;
      seed = strtoull(a + 16, &end, 10);
      if (end == a + 16 || *end) {
        snprintf(message, sizeof(message), "bad seed in '%s'", a);
        return failAll(message, 0);
      }
    } else if (!strncmp(a, "--output-dir=", 13)) {
      outputDir = a + 13;
    } else if (!strncmp(a, "--iterations=", 13)) {
      iterations = strtol(a + 13, &end, 10);
      if (end == a + 13 || *end || iterations < 1) {
        snprintf(message, sizeof(message),
                 "bad '%s' (expected a positive number)", a);
        return failAll(message, 0);
      }
    } else if (!strcmp(a, "--quiet")) {
      gQuiet = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (soaprt_rank() == 0)
        usage(stdout, prog);
      soaprt_finalize();
      return 0;
    } else {
      if (soaprt_rank() == 0)
        usage(stderr, prog);
      snprintf(message, sizeof(message), "unknown argument '%s'", a);
      return failAll(message, 0);
    }
  }
  if (haveInputs && haveSeed)
    return failAll("give either --inputs or --random-inputs, not both", 0);

  /* The number of ranks, before any work. */
  int64_t devices = soap_num_devices();
  if (soaprt_size() != devices) {
    snprintf(message, sizeof(message),
             "this program was partitioned for %lld devices but runs on %lld "
             "ranks: run it as 'mpirun -np %lld %s'",
             (long long)devices, (long long)soaprt_size(), (long long)devices,
             prog);
    return failAll(message, 1);
  }

  /* Inputs. */
  soap_setup();
  int64_t numInputs = soap_num_inputs(), numOutputs = soap_num_outputs();
  for (int64_t i = 0; i < numInputs; ++i)
    if (!soaprt_input_binding(i)->bound)
      return failAll("internal error: the program did not bind all inputs", 1);
  /* Inputs with an initial value (weights lifted from the model's
     constants) take it unless --inputs names a file for every input. */
  int64_t numInitial = 0;
  for (int64_t i = 0; i < numInputs; ++i)
    numInitial += soaprt_input_binding(i)->initial != NULL;
  const char **fileOf = (const char **)calloc((size_t)numInputs + 1,
                                              sizeof(char *));
  if (haveInputs) {
    /* Rank 0 checks the files (and reads its part); then every other rank
       reads its part of each. */
    int status = 0;
    message[0] = 0;
    if (numInputFiles == numInputs) {
      for (int64_t i = 0; i < numInputs; ++i)
        fileOf[i] = inputFiles[i];
    } else if (numInitial > 0 && numInputFiles == numInputs - numInitial) {
      int next = 0;
      for (int64_t i = 0; i < numInputs; ++i)
        if (!soaprt_input_binding(i)->initial)
          fileOf[i] = inputFiles[next++];
    } else if (numInitial > 0) {
      status = 1;
      snprintf(message, sizeof(message),
               "the model has %lld inputs, %lld of them with initial values, "
               "but --inputs gives %d files (expected %lld, or %lld for the "
               "inputs without initial values)",
               (long long)numInputs, (long long)numInitial, numInputFiles,
               (long long)numInputs, (long long)(numInputs - numInitial));
    } else {
      status = 1;
      snprintf(message, sizeof(message),
               "the model has %lld inputs but --inputs gives %d files",
               (long long)numInputs, numInputFiles);
    }
    if (soaprt_rank() == 0)
      for (int64_t i = 0; !status && i < numInputs; ++i)
        if (fileOf[i])
          status = readNpy(fileOf[i], soaprt_input_binding(i), i, message);
    soaprt_bcast(&status, sizeof(status), 0);
    if (status)
      return failAll(message, 0);
    if (soaprt_rank() != 0)
      for (int64_t i = 0; !status && i < numInputs; ++i)
        if (fileOf[i])
          status = readNpy(fileOf[i], soaprt_input_binding(i), i, message);
    if (soaprt_max_over_ranks(status)) {
      if (status)
        return failAll(message, 1);
      soaprt_finalize(); /* the failing rank says why */
      return 1;
    }
  }
  for (int64_t i = 0; i < numInputs; ++i) {
    soaprt_binding_t *b = soaprt_input_binding(i);
    if (!fileOf[i] && b->initial)
      forEachRow(b, initialRow, NULL);
    else if (!fileOf[i])
      fillRandom(b, i, seed);
    b->initial = NULL; /* read once */
  }
  free(fileOf);
  free(inputFiles);

  /* Run. The first iteration also makes the library plans (cuDNN tries
     its algorithms with workspaces of their own): the device memory peak
     of the iterations after it is kept apart. */
  int64_t firstPeak = -1;
  for (long it = 0; it < iterations; ++it) {
    if (it == 1) {
      firstPeak = soaprt_device_peak_bytes();
      soaprt_device_reset_peak();
    }
    soaprt_barrier();
    double start = now();
    soap_main();
    soaprt_device_synchronize(); /* the GPU's work, not just its queueing */
    soaprt_barrier();
    double seconds = now() - start;
    if (iterations > 1 && soaprt_rank() == 0) {
      printf("iteration %ld: %.3f ms\n", it, seconds * 1e3);
      fflush(stdout);
    }
  }

  /* Device memory (CUDA back end): the peak over ranks, and that of the
     iterations after the first with the library workspaces in it. */
  int64_t peak = soaprt_device_peak_bytes();
  if (peak >= 0) {
    int64_t later = firstPeak >= 0 ? soaprt_max_over_ranks(peak) : -1;
    int64_t workspaces = soaprt_max_over_ranks(soaprt_device_workspace_bytes());
    peak = soaprt_max_over_ranks(peak > firstPeak ? peak : firstPeak);
    if (!gQuiet && soaprt_rank() == 0) {
      printf("peak device memory: %.1f MiB\n", (double)peak / 1048576.0);
      if (later >= 0)
        printf("peak device memory after the first iteration: %.1f MiB "
               "(library workspaces: %.1f MiB)\n",
               (double)later / 1048576.0, (double)workspaces / 1048576.0);
      fflush(stdout);
    }
  }

  /* Outputs (rank 0). */
  int status = 0;
  message[0] = 0;
  if (soaprt_rank() == 0) {
    if (mkdir(outputDir, 0777) != 0 && errno != EEXIST) {
      status = 1;
      snprintf(message, sizeof(message), "cannot create '%s': %s", outputDir,
               strerror(errno));
    }
    for (int64_t i = 0; !status && i < numOutputs; ++i) {
      soaprt_binding_t *b = soaprt_output_binding(i);
      char path[4096];
      snprintf(path, sizeof(path), "%s/result%lld.npy", outputDir,
               (long long)i);
      if (!b->bound) {
        status = 1;
        snprintf(message, sizeof(message),
                 "internal error: result %lld was not bound", (long long)i);
      } else if (writeNpy(path, b) != 0) {
        status = 1;
        snprintf(message, sizeof(message), "cannot write '%s': %s", path,
                 strerror(errno));
      } else if (!gQuiet) {
        char shape[256];
        describeShape(shape, sizeof(shape), b->sizes, b->rank);
        printf("soaprt: wrote %s (%s %s)\n", path, soaprt_dtype_npy(b->dtype),
               shape);
      }
    }
    fflush(stdout);
  }

  /* Inputs the program updated in place (a training step's parameters):
     gathered from every rank's part, written by rank 0 as input<i>.npy. */
  for (int64_t i = 0; i < numInputs; ++i) {
    soaprt_binding_t *b = soaprt_input_binding(i);
    if (!b->updated)
      continue;
    char *whole = soaprt_gather_input(i); /* collective */
    if (soaprt_rank() != 0)
      continue;
    soaprt_binding_t all = *b;
    all.hasRegion = 0;
    for (int64_t d = 0; d < b->rank; ++d)
      all.sizes[d] = wholeShape(b)[d];
    all.data = whole;
    char path[4096];
    snprintf(path, sizeof(path), "%s/input%lld.npy", outputDir, (long long)i);
    if (status) {
      /* the outputs failed already */
    } else if (writeNpy(path, &all) != 0) {
      status = 1;
      snprintf(message, sizeof(message), "cannot write '%s': %s", path,
               strerror(errno));
    } else if (!gQuiet) {
      char shape[256];
      describeShape(shape, sizeof(shape), all.sizes, all.rank);
      printf("soaprt: wrote %s (%s %s, updated in place)\n", path,
             soaprt_dtype_npy(all.dtype), shape);
    }
    free(whole);
  }
  if (soaprt_rank() == 0)
    fflush(stdout);
  soaprt_bcast(&status, sizeof(status), 0);
  if (status)
    return failAll(message, 0);
  soaprt_finalize();
  return 0;
}
