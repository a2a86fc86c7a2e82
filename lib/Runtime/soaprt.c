/*===- soaprt.c - libsoaprt: communication and bindings (CPU, MPI) --------===*
 *
 * Regions are strided views of a tensor; they are packed into a contiguous
 * buffer for MPI and unpacked after. all_reduce runs on a sub-communicator of
 * exactly the listed devices (soaprt_group), made when soap_setup prepares
 * the program's groups (soaprt_prepare_group), or at first use, and cached.
 * Without SOAPRT_HAVE_MPI this is a one-rank stub.
 *
 * Compiled a second time with SOAPRT_HAVE_CUDA into libsoaprt_cuda.a: then
 * init/finalize, transfer, all_reduce, the bindings and memrefCopy hand
 * device memory to the CUDA back end (soaprt_cuda*.c), and everything else
 * (rank, errors, dtypes, argument checks) stays as here.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_float16.h"
#include "soaprt_internal.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SOAPRT_HAVE_MPI
#include <mpi.h>
#endif

#ifdef SOAPRT_HAVE_CUDA
#include "soaprt_cuda_internal.h"
#endif

static int gRank = 0;
static int gSize = 1;
static int gInitialized = 0;

/* ---------------------------------------------------------------- errors */

void soaprt_fatal(const char *fmt, ...) {
  /* One write: mpirun forwards each write of a rank's stderr on its own, and
     its MPI_Abort banner could land between the parts of the line. */
  char line[4096];
  int prefix = snprintf(line, sizeof(line), "soaprt: error: [rank %d] ", gRank);
  va_list args;
  va_start(args, fmt);
  vsnprintf(line + prefix, sizeof(line) - (size_t)prefix - 1, fmt, args);
  va_end(args);
  size_t length = strlen(line);
  line[length++] = '\n';
  fwrite(line, 1, length, stderr);
  fflush(stderr);
#ifdef SOAPRT_HAVE_MPI
  int up = 0;
  MPI_Initialized(&up);
  if (up)
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  exit(1);
}

/* ---------------------------------------------------------------- dtypes */

int64_t soaprt_dtype_size(int64_t dtype) {
  switch (dtype) {
  case SOAPRT_F32: case SOAPRT_I32: return 4;
  case SOAPRT_F64: case SOAPRT_I64: return 8;
  case SOAPRT_I8: case SOAPRT_I1: return 1;
  case SOAPRT_I16: case SOAPRT_F16: case SOAPRT_BF16: return 2;
  default: return 0;
  }
}

const char *soaprt_dtype_npy(int64_t dtype) {
  switch (dtype) {
  case SOAPRT_F32: return "<f4";
  case SOAPRT_F64: return "<f8";
  case SOAPRT_I32: return "<i4";
  case SOAPRT_I64: return "<i8";
  case SOAPRT_I8: return "|i1";
  case SOAPRT_I16: return "<i2";
  case SOAPRT_I1: return "|b1";
  case SOAPRT_F16: return "<f2";
  case SOAPRT_BF16: return "<u2"; /* numpy has no bfloat16: raw bits */
  default: return "?";
  }
}

int64_t soaprt_checked_dtype_size(int64_t dtype, const char *who) {
  int64_t size = soaprt_dtype_size(dtype);
  if (size == 0)
    soaprt_fatal("%s: unknown element type code %lld", who, (long long)dtype);
  return size;
}

/* ------------------------------------------------------- strided regions */

typedef soaprt_region_t region_t;

region_t soaprt_view(const soaprt_unranked_memref_t *m, int64_t elemSize) {
  region_t r;
  const int64_t *d = (const int64_t *)m->descriptor;
  char *aligned = (char *)((void *const *)m->descriptor)[1];
  r.rank = m->rank;
  r.base = aligned + d[2] * elemSize;
  r.sizes = d + 3;
  r.strides = d + 3 + m->rank;
  r.elemSize = elemSize;
  return r;
}

int64_t soaprt_region_elements(const region_t *r) {
  int64_t n = 1;
  for (int64_t i = 0; i < r->rank; ++i)
    n *= r->sizes[i];
  return n;
}

int soaprt_region_contiguous(const region_t *r) {
  int64_t expected = 1;
  for (int64_t i = r->rank - 1; i >= 0; --i) {
    if (r->sizes[i] != 1 && r->strides[i] != expected)
      return 0;
    expected *= r->sizes[i];
  }
  return 1;
}

soaprt_region_t soaprt_region_dim_first(const region_t *r, int64_t dim,
                                        int64_t *sizes, int64_t *strides) {
  region_t p = *r;
  sizes[0] = r->sizes[dim];
  strides[0] = r->strides[dim];
  for (int64_t d = 0, k = 1; d < r->rank; ++d)
    if (d != dim) {
      sizes[k] = r->sizes[d];
      strides[k++] = r->strides[d];
    }
  p.sizes = sizes;
  p.strides = strides;
  return p;
}

soaprt_region_t soaprt_region_chunk(const region_t *r, int64_t n, int64_t i,
                                    int64_t *sizes) {
  region_t c = *r;
  memcpy(sizes, r->sizes, (size_t)r->rank * sizeof(int64_t));
  sizes[0] = r->sizes[0] / n;
  c.base = r->base + i * sizes[0] * r->strides[0] * r->elemSize;
  c.sizes = sizes;
  return c;
}

int64_t soaprt_index_in(const int64_t *devices, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (devices[i] == gRank)
      return i;
  return -1;
}

#ifndef SOAPRT_HAVE_CUDA /* the CUDA back end copies on the device */
void soaprt_copy_region(const region_t *r, char *packed, int toPacked) {
  int64_t n = soaprt_region_elements(r);
  if (n == 0)
    return;
  if (soaprt_region_contiguous(r)) {
    if (toPacked)
      memcpy(packed, r->base, (size_t)(n * r->elemSize));
    else
      memcpy(r->base, packed, (size_t)(n * r->elemSize));
    return;
  }
  if (r->rank > SOAPRT_MAX_RANK)
    soaprt_fatal("regions of rank %lld are not supported", (long long)r->rank);
  /* Rows along the innermost dimension; contiguous rows are one memcpy. */
  int64_t inner = r->rank ? r->sizes[r->rank - 1] : 1;
  int64_t innerStride = r->rank ? r->strides[r->rank - 1] : 1;
  int64_t rows = n / inner;
  int64_t index[SOAPRT_MAX_RANK] = {0};
  size_t rowBytes = (size_t)(inner * r->elemSize);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int64_t d = 0; d + 1 < r->rank; ++d)
      offset += index[d] * r->strides[d];
    char *src = r->base + offset * r->elemSize;
    char *dst = packed + row * (int64_t)rowBytes;
    if (innerStride == 1) {
      if (toPacked)
        memcpy(dst, src, rowBytes);
      else
        memcpy(src, dst, rowBytes);
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        char *e = src + i * innerStride * r->elemSize;
        if (toPacked)
          memcpy(dst + i * r->elemSize, e, (size_t)r->elemSize);
        else
          memcpy(e, dst + i * r->elemSize, (size_t)r->elemSize);
      }
    }
    for (int64_t d = r->rank - 2; d >= 0; --d) {
      if (++index[d] < r->sizes[d])
        break;
      index[d] = 0;
    }
  }
}

/* A packed copy of the region (or the region itself when contiguous). */
static char *packRegion(const region_t *r, int *owned) {
  if (soaprt_region_contiguous(r)) {
    *owned = 0;
    return r->base;
  }
  int64_t bytes = soaprt_region_elements(r) * r->elemSize;
  char *buffer = (char *)malloc(bytes ? (size_t)bytes : 1);
  if (!buffer)
    soaprt_fatal("out of memory (%lld bytes)", (long long)bytes);
  soaprt_copy_region(r, buffer, 1);
  *owned = 1;
  return buffer;
}
#endif

/* memref.copy on non-identity layouts lowers to this (CRunnerUtils ABI). */
void memrefCopy(int64_t elemSize, soaprt_unranked_memref_t *src,
                soaprt_unranked_memref_t *dst) {
  region_t s = soaprt_view(src, elemSize), d = soaprt_view(dst, elemSize);
#ifdef SOAPRT_HAVE_CUDA
  /* Device (or host) memory on either side, in stream order. */
  soaprt_cuda_copy_region(&d, &s, "memref.copy");
#else
  int owned;
  char *packed = packRegion(&s, &owned);
  soaprt_copy_region(&d, packed, 0);
  if (owned)
    free(packed);
#endif
}

/* -------------------------------------------------------- initialization */

int soaprt_init(int *argc, char ***argv) {
  if (gInitialized)
    return 0;
#ifdef SOAPRT_HAVE_MPI
  int up = 0;
  MPI_Initialized(&up);
  if (!up && MPI_Init(argc, argv) != MPI_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
#else
  (void)argc;
  (void)argv;
#endif
#ifdef SOAPRT_HAVE_CUDA
  /* Selects the GPU, creates the stream and NCCL; exits with status 1 on
     every rank when a rank has no usable GPU. */
  soaprt_cuda_init(gRank, gSize);
#endif
  gInitialized = 1;
  return 0;
}

int64_t soaprt_rank(void) { return gRank; }
int64_t soaprt_size(void) { return gSize; }

void soaprt_bcast(void *data, int64_t bytes, int root) {
#ifdef SOAPRT_HAVE_MPI
  char *p = (char *)data;
  while (bytes > 0) {
    int chunk = bytes > (1 << 30) ? (1 << 30) : (int)bytes;
    MPI_Bcast(p, chunk, MPI_BYTE, root, MPI_COMM_WORLD);
    p += chunk;
    bytes -= chunk;
  }
#else
  (void)data;
  (void)bytes;
  (void)root;
#endif
}

void soaprt_barrier(void) {
#ifdef SOAPRT_HAVE_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

int soaprt_any(int flag) {
#ifdef SOAPRT_HAVE_MPI
  int any = 0;
  MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return any != 0;
#else
  return flag != 0;
#endif
}

int64_t soaprt_max_over_ranks(int64_t value) {
#ifdef SOAPRT_HAVE_MPI
  int64_t max = value;
  MPI_Allreduce(&value, &max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return max;
#else
  return value;
#endif
}

#ifndef SOAPRT_HAVE_CUDA
/* The CPU back end has no device work to wait for nor device memory. */
void soaprt_device_synchronize(void) {}
int64_t soaprt_device_peak_bytes(void) { return -1; }
void soaprt_device_reset_peak(void) {}
int64_t soaprt_device_workspace_bytes(void) { return 0; }
#endif

/* ------------------------------------------------------------ transfers */

#if defined(SOAPRT_HAVE_MPI)
/* Blocking byte messages of any length (one message even for none). */
static void sendBytes(const char *p, int64_t bytes, int to) {
  do {
    int chunk = bytes > (1 << 30) ? (1 << 30) : (int)bytes;
    MPI_Send(p, chunk, MPI_BYTE, to, 0, MPI_COMM_WORLD);
    p += chunk;
    bytes -= chunk;
  } while (bytes > 0);
}

static void recvBytes(char *p, int64_t bytes, int from) {
  do {
    int chunk = bytes > (1 << 30) ? (1 << 30) : (int)bytes;
    MPI_Recv(p, chunk, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    p += chunk;
    bytes -= chunk;
  } while (bytes > 0);
}
#endif

void soaprt_check_device(int64_t device, const char *who) {
  if (device < 0 || device >= gSize)
    soaprt_fatal("%s: device %lld does not exist (the program runs on %d "
                 "ranks)",
                 who, (long long)device, gSize);
}

void soaprt_run_transfer(const region_t *r, int64_t from, int64_t to) {
#if defined(SOAPRT_HAVE_CUDA)
  soaprt_cuda_transfer(r, from, to);
#elif defined(SOAPRT_HAVE_MPI)
  int64_t bytes = soaprt_region_elements(r) * r->elemSize;
  int owned;
  if (gRank == from) {
    char *packed = packRegion(r, &owned);
    sendBytes(packed, bytes, (int)to);
    if (owned)
      free(packed);
  } else {
    if (soaprt_region_contiguous(r)) {
      recvBytes(r->base, bytes, (int)from);
    } else {
      char *packed = (char *)malloc((size_t)bytes);
      if (!packed)
        soaprt_fatal("out of memory (%lld bytes)", (long long)bytes);
      recvBytes(packed, bytes, (int)from);
      soaprt_copy_region(r, packed, 0);
      free(packed);
    }
  }
#else
  (void)r;
  (void)from;
  (void)to;
#endif
}

/* ----------------------------------------------------------- all-reduce */

#ifdef SOAPRT_HAVE_MPI
static soaprt_group_t *gGroups = NULL, **gGroupsEnd = &gGroups;

soaprt_group_t *soaprt_groups(void) { return gGroups; }

soaprt_group_t *soaprt_group(const int64_t *devices, int64_t n,
                             const char *op) {
  for (soaprt_group_t *g = gGroups; g; g = g->next)
    if (g->size == n && !memcmp(g->devices, devices, (size_t)n * 8))
      return g;
  int *ranks = (int *)malloc((size_t)n * sizeof(int));
  soaprt_group_t *g = (soaprt_group_t *)calloc(1, sizeof(soaprt_group_t));
  int64_t *copy = (int64_t *)malloc((size_t)n * 8);
  if (!ranks || !g || !copy)
    soaprt_fatal("%s: out of memory", op);
  uint64_t hash = 1469598103934665603ull;
  for (int64_t i = 0; i < n; ++i) {
    ranks[i] = (int)devices[i];
    hash = (hash ^ (uint64_t)devices[i]) * 1099511628211ull;
  }
  MPI_Group world, sub;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (MPI_Group_incl(world, (int)n, ranks, &sub) != MPI_SUCCESS)
    soaprt_fatal("%s: bad device list", op);
  /* Only the members call this; the tag keeps overlapping groups apart. */
  if (MPI_Comm_create_group(MPI_COMM_WORLD, sub, (int)(hash % 30000) + 1,
                            &g->comm) != MPI_SUCCESS)
    soaprt_fatal("%s: cannot create a communicator for %lld devices", op,
                 (long long)n);
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  free(ranks);
  memcpy(copy, devices, (size_t)n * 8);
  g->size = n;
  g->devices = copy;
  *gGroupsEnd = g;
  gGroupsEnd = &g->next;
  return g;
}
#endif

#if defined(SOAPRT_HAVE_MPI) && !defined(SOAPRT_HAVE_CUDA)
/* MPI has no bf16 or f16: they travel as 16-bit integers and reduce by
 * user operations that combine each pair in float and round once (to
 * nearest even), as NCCL does. */
static void combine16(const uint16_t *in, uint16_t *inout, int len, int bf16,
                      int64_t kind) {
  for (int i = 0; i < len; ++i) {
    float a = bf16 ? soaprt_bf16_to_float(in[i]) : soaprt_half_to_float(in[i]);
    float b =
        bf16 ? soaprt_bf16_to_float(inout[i]) : soaprt_half_to_float(inout[i]);
    float r = kind == SOAPRT_SUM   ? a + b
              : kind == SOAPRT_MAX ? (a > b || a != a ? a : b)
                                   : (a < b || a != a ? a : b);
    inout[i] = bf16 ? soaprt_float_to_bf16(r) : soaprt_float_to_half(r);
  }
}
#define SOAPRT_OP16(name, bf16, kind)                                          \
  static void name(void *in, void *inout, int *len, MPI_Datatype *type) {      \
    (void)type;                                                                \
    combine16((const uint16_t *)in, (uint16_t *)inout, *len, bf16, kind);      \
  }
SOAPRT_OP16(sumF16, 0, SOAPRT_SUM)
SOAPRT_OP16(maxF16, 0, SOAPRT_MAX)
SOAPRT_OP16(minF16, 0, SOAPRT_MIN)
SOAPRT_OP16(sumBF16, 1, SOAPRT_SUM)
SOAPRT_OP16(maxBF16, 1, SOAPRT_MAX)
SOAPRT_OP16(minBF16, 1, SOAPRT_MIN)
#undef SOAPRT_OP16

/* The reduction `kind` of `dtype` elements: MPI's own, or one of the 16-bit
 * float operations above (made once). */
static MPI_Op mpiOp(int64_t dtype, int64_t kind) {
  if (dtype == SOAPRT_F16 || dtype == SOAPRT_BF16) {
    static MPI_Op ops[2][3];
    static int made[2][3];
    static MPI_User_function *const fns[2][3] = {{sumF16, maxF16, minF16},
                                                 {sumBF16, maxBF16, minBF16}};
    int b = dtype == SOAPRT_BF16;
    int k = kind == SOAPRT_SUM ? 0 : kind == SOAPRT_MAX ? 1 : 2;
    if (!made[b][k]) {
      if (MPI_Op_create(fns[b][k], /*commute=*/1, &ops[b][k]) != MPI_SUCCESS)
        soaprt_fatal("soaprt: cannot make the MPI reduction of %s",
                     b ? "bf16" : "f16");
      made[b][k] = 1;
    }
    return ops[b][k];
  }
  if (dtype == SOAPRT_I1 && kind == SOAPRT_SUM)
    return MPI_BOR;
  return kind == SOAPRT_SUM ? MPI_SUM : kind == SOAPRT_MAX ? MPI_MAX : MPI_MIN;
}

static MPI_Datatype mpiType(int64_t dtype) {
  switch (dtype) {
  case SOAPRT_F32: return MPI_FLOAT;
  case SOAPRT_F16:
  case SOAPRT_BF16:
    return MPI_UINT16_T; /* reduced by mpiOp's operations */
  case SOAPRT_F64: return MPI_DOUBLE;
  case SOAPRT_I32: return MPI_INT32_T;
  case SOAPRT_I64: return MPI_INT64_T;
  case SOAPRT_I8: return MPI_INT8_T;
  case SOAPRT_I16: return MPI_INT16_T;
  case SOAPRT_I1: return MPI_UINT8_T;
  default:
    soaprt_fatal("soaprt_all_reduce: element type %s is not supported "
                 "(f32, f64, f16, bf16, i1, i8, i16, i32, i64 are)",
                 soaprt_dtype_npy(dtype));
  }
}
#endif

int64_t soaprt_read_devices(soaprt_unranked_memref_t *devicesRef,
                            int64_t devices[1024], int *member,
                            const char *who) {
  region_t dv = soaprt_view(devicesRef, 8);
  int64_t n = soaprt_region_elements(&dv);
  if (n > 1024)
    soaprt_fatal("%s: more than 1024 devices", who);
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_download(&dv, devices, who); /* host or device */
#else
  soaprt_copy_region(&dv, (char *)devices, 1);
#endif
  *member = 0;
  for (int64_t i = 0; i < n; ++i) {
    soaprt_check_device(devices[i], who);
    *member |= devices[i] == gRank;
  }
  return n;
}

void soaprt_prepare_group(soaprt_unranked_memref_t *devicesRef) {
  int64_t devices[1024];
  int member = 0;
  int64_t n =
      soaprt_read_devices(devicesRef, devices, &member, "soaprt_prepare_group");
  if (!member || n <= 1)
    return;
#if defined(SOAPRT_HAVE_CUDA)
  soaprt_cuda_prepare_group(devices, n);
#elif defined(SOAPRT_HAVE_MPI)
  (void)soaprt_group(devices, n, "soaprt_prepare_group");
#endif
}

void _mlir_ciface_soaprt_prepare_group(soaprt_unranked_memref_t *devices) {
  soaprt_prepare_group(devices);
}

void soaprt_run_all_reduce(const region_t *r, int64_t dtype, int64_t kind,
                           const int64_t *devices, int64_t n) {
#if defined(SOAPRT_HAVE_CUDA)
  soaprt_cuda_all_reduce(r, dtype, kind, devices, n);
#elif defined(SOAPRT_HAVE_MPI)
  int64_t count = soaprt_region_elements(r);
  MPI_Datatype type = mpiType(dtype);
  MPI_Op op = mpiOp(dtype, kind);
  MPI_Comm comm = soaprt_group(devices, n, "soaprt_all_reduce")->comm;
  int owned;
  char *packed = packRegion(r, &owned);
  for (int64_t done = 0; done < count;) {
    int chunk = count - done > (1 << 28) ? (1 << 28) : (int)(count - done);
    MPI_Allreduce(MPI_IN_PLACE, packed + done * r->elemSize, chunk, type, op,
                  comm);
    done += chunk;
  }
  if (owned) {
    soaprt_copy_region(r, packed, 0);
    free(packed);
  }
#else
  (void)r;
  (void)dtype;
  (void)kind;
  (void)devices;
  (void)n;
#endif
}

/* ------------------------------------------------------------- bindings */

static soaprt_binding_t gInputs[SOAPRT_MAX_BINDINGS];
static soaprt_binding_t gOutputs[SOAPRT_MAX_BINDINGS];

soaprt_binding_t *soaprt_input_binding(int64_t index) {
  return index >= 0 && index < SOAPRT_MAX_BINDINGS ? &gInputs[index] : NULL;
}
soaprt_binding_t *soaprt_output_binding(int64_t index) {
  return index >= 0 && index < SOAPRT_MAX_BINDINGS ? &gOutputs[index] : NULL;
}

int64_t soaprt_num_elements(const soaprt_binding_t *b) {
  int64_t n = 1;
  for (int64_t i = 0; i < b->rank; ++i)
    n *= b->sizes[i];
  return n;
}

static soaprt_binding_t *bind(soaprt_binding_t *table, int64_t index,
                              soaprt_unranked_memref_t *m, int64_t dtype,
                              const char *who, region_t *view) {
  if (index < 0 || index >= SOAPRT_MAX_BINDINGS)
    soaprt_fatal("%s: index %lld out of range", who, (long long)index);
  if (m->rank > SOAPRT_MAX_RANK)
    soaprt_fatal("%s: rank %lld tensors are not supported", who,
                 (long long)m->rank);
  *view = soaprt_view(m, soaprt_checked_dtype_size(dtype, who));
  soaprt_binding_t *b = &table[index];
  b->bound = 1;
  b->dtype = dtype;
  b->rank = m->rank;
  for (int64_t i = 0; i < m->rank; ++i)
    b->sizes[i] = view->sizes[i];
  return b;
}

/* The i64 list `ref` (host or device memory) that soap_setup passes for
 * input `index`: a malloc'ed copy, its length in `*count`. */
static int64_t *inputList(int64_t index, soaprt_unranked_memref_t *ref,
                          int64_t *count, const char *who) {
  if (index < 0 || index >= SOAPRT_MAX_BINDINGS)
    soaprt_fatal("%s: index %lld out of range", who, (long long)index);
  region_t rv = soaprt_view(ref, 8);
  int64_t n = soaprt_region_elements(&rv);
  int64_t *values = (int64_t *)malloc(n ? (size_t)n * 8 : 1);
  if (!values)
    soaprt_fatal("%s: out of memory", who);
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_download(&rv, values, who); /* host or device */
#else
  soaprt_copy_region(&rv, (char *)values, 1);
#endif
  *count = n;
  return values;
}

void soaprt_input_region(int64_t index, soaprt_unranked_memref_t *regionRef) {
  int64_t n;
  int64_t *values = inputList(index, regionRef, &n, "soaprt_input_region");
  if (n % 2 || n > 2 * SOAPRT_MAX_RANK)
    soaprt_fatal("soaprt_input_region: input %lld: %lld values (expected "
                 "the whole sizes, then the offsets)",
                 (long long)index, (long long)n);
  soaprt_binding_t *b = &gInputs[index];
  b->hasRegion = 1;
  for (int64_t d = 0; d < n / 2; ++d) {
    b->whole[d] = values[d];
    b->offsets[d] = values[n / 2 + d];
  }
  b->rank = n / 2; /* checked against the buffer by soaprt_bind_input */
  free(values);
}

void soaprt_input_parts(int64_t index, soaprt_unranked_memref_t *partsRef) {
  int64_t n;
  int64_t *values = inputList(index, partsRef, &n, "soaprt_input_parts");
  soaprt_binding_t *b = &gInputs[index];
  free(b->parts);
  b->parts = values;
  b->numPartValues = n;
}

void _mlir_ciface_soaprt_input_parts(int64_t index,
                                     soaprt_unranked_memref_t *parts) {
  soaprt_input_parts(index, parts);
}

void _mlir_ciface_soaprt_input_region(int64_t index,
                                      soaprt_unranked_memref_t *region) {
  soaprt_input_region(index, region);
}

void soaprt_bind_input(int64_t index, soaprt_unranked_memref_t *m,
                       int64_t dtype) {
  region_t view;
  int64_t regionRank = index >= 0 && index < SOAPRT_MAX_BINDINGS
                           ? gInputs[index].rank
                           : 0;
  soaprt_binding_t *b = bind(gInputs, index, m, dtype, "soaprt_bind_input",
                             &view);
  if (!soaprt_region_contiguous(&view))
    soaprt_fatal("soaprt_bind_input: input %lld is not contiguous",
                 (long long)index);
  if (b->hasRegion) {
    int fits = regionRank == b->rank;
    for (int64_t d = 0; fits && d < b->rank; ++d)
      fits = b->offsets[d] >= 0 && b->offsets[d] + b->sizes[d] <= b->whole[d];
    if (!fits)
      soaprt_fatal("soaprt_bind_input: input %lld: the buffer does not fit "
                   "in the region soaprt_input_region gave",
                   (long long)index);
  }
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_bind_input(b, &view); /* a host buffer, or a device one */
#else
  b->data = view.base;
#endif
}

void soaprt_bind_output(int64_t index, soaprt_unranked_memref_t *m,
                        int64_t dtype) {
  region_t view;
  soaprt_binding_t *b = bind(gOutputs, index, m, dtype, "soaprt_bind_output",
                             &view);
  if (gRank != 0) /* results are valid on rank 0 only */
    return;
  int64_t bytes = soaprt_region_elements(&view) * view.elemSize;
  if (bytes > b->capacity) {
    free(b->data);
    b->data = (char *)malloc(bytes ? (size_t)bytes : 1);
    if (!b->data)
      soaprt_fatal("out of memory (%lld bytes)", (long long)bytes);
    b->capacity = bytes;
  }
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_download(&view, b->data, "soaprt_bind_output");
#else
  soaprt_copy_region(&view, b->data, 1);
#endif
}

/* Bound input `index`, which holds `dtype` elements, and the view of `m`
 * (a value for it) for `who`. */
/* Input `index`, which soaprt_bind_input must have bound. */
static soaprt_binding_t *boundInputAt(int64_t index, const char *who) {
  if (index < 0 || index >= SOAPRT_MAX_BINDINGS || !gInputs[index].bound)
    soaprt_fatal("%s: input %lld is not bound", who, (long long)index);
  return &gInputs[index];
}

static soaprt_binding_t *boundInput(int64_t index, soaprt_unranked_memref_t *m,
                                    int64_t dtype, const char *who,
                                    region_t *view) {
  soaprt_binding_t *b = boundInputAt(index, who);
  if (dtype != b->dtype)
    soaprt_fatal("%s: input %lld holds %s, not %s", who, (long long)index,
                 soaprt_dtype_npy(b->dtype), soaprt_dtype_npy(dtype));
  *view = soaprt_view(m, soaprt_checked_dtype_size(dtype, who));
  return b;
}

void soaprt_update_input(int64_t index, soaprt_unranked_memref_t *m,
                         int64_t dtype) {
  const char *who = "soaprt_update_input";
  region_t view;
  soaprt_binding_t *b = boundInput(index, m, dtype, who, &view);
  /* The new value is the part this rank holds (the compiled code's rank
     function returns only that part) or the whole input. */
  const int64_t *whole = b->hasRegion ? b->whole : b->sizes;
  int isPart = view.rank == b->rank, isWhole = view.rank == b->rank;
  for (int64_t d = 0; d < view.rank && (isPart || isWhole); ++d) {
    isPart = isPart && view.sizes[d] == b->sizes[d];
    isWhole = isWhole && view.sizes[d] == whole[d];
  }
  if (!isPart && !isWhole)
    soaprt_fatal("%s: the new value of input %lld has neither the input's "
                 "shape nor that of the part this rank holds",
                 who, (long long)index);
  b->updated = 1;
  if (soaprt_num_elements(b) == 0)
    return;
  region_t part = view;
  part.sizes = b->sizes;
  if (!isPart && b->hasRegion)
    for (int64_t d = 0; d < b->rank; ++d)
      part.base += b->offsets[d] * view.strides[d] * view.elemSize;
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_update_input(index, &part);
#else
  if (part.base != b->data)
    soaprt_copy_region(&part, b->data, 1);
#endif
}

void soaprt_input_initial(int64_t index, soaprt_unranked_memref_t *m,
                          int64_t dtype) {
  const char *who = "soaprt_input_initial";
  region_t view;
  soaprt_binding_t *b = boundInput(index, m, dtype, who, &view);
  const int64_t *whole = b->hasRegion ? b->whole : b->sizes;
  int fits = view.rank == b->rank;
  for (int64_t d = 0; fits && d < view.rank; ++d)
    fits = view.sizes[d] == whole[d];
  if (!fits)
    soaprt_fatal("%s: the initial value of input %lld does not have the "
                 "input's shape", who, (long long)index);
  if (!soaprt_region_contiguous(&view))
    soaprt_fatal("%s: the initial value of input %lld is not contiguous", who,
                 (long long)index);
  /* The program's constant, in host memory on every target: no copy (the
     executable's pages are shared by the ranks of a machine). */
  b->initial = view.base;
}

void soaprt_input_random_range(int64_t index, double low, double high) {
  const char *who = "soaprt_input_random_range";
  soaprt_binding_t *b = boundInputAt(index, who);
  if (!isfinite(low) || !isfinite(high) || !(low < high))
    soaprt_fatal("%s: input %lld: [%g, %g) is no range", who, (long long)index,
                 low, high);
  b->hasRandomRange = 1;
  b->randomLow = low;
  b->randomHigh = high;
}

/* Copies the box [pieceOffsets, + pieceSizes) of the whole input (shape
 * `whole`) from `part`, a row-major box [partOffsets, + partSizes) of it
 * that covers the piece, into `out` (the whole input, row-major). */
static void placePiece(char *out, const int64_t *whole, int64_t rank,
                       const int64_t *partOffsets, const int64_t *partSizes,
                       const char *part, const int64_t *pieceOffsets,
                       const int64_t *pieceSizes, int64_t elemSize) {
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    count *= pieceSizes[d];
  if (count == 0)
    return;
  int64_t length = rank ? pieceSizes[rank - 1] : 1;
  int64_t index[SOAPRT_MAX_RANK] = {0};
  for (int64_t at = 0; at < count; at += length) {
    int64_t to = 0, from = 0;
    for (int64_t d = 0; d < rank; ++d) {
      to = to * whole[d] + pieceOffsets[d] + index[d];
      from = from * partSizes[d] + pieceOffsets[d] - partOffsets[d] + index[d];
    }
    memcpy(out + to * elemSize, part + from * elemSize,
           (size_t)(length * elemSize));
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < pieceSizes[d])
        break;
      index[d] = 0;
    }
  }
}

/* Copies `part`, the box [offsets, + sizes) of the whole input (shape
 * `whole`, row-major), into `out`. */
static void placePart(char *out, const int64_t *whole, int64_t rank,
                      const int64_t *offsets, const int64_t *sizes,
                      const char *part, int64_t elemSize) {
  placePiece(out, whole, rank, offsets, sizes, part, offsets, sizes, elemSize);
}

/* Places rank `r`'s pieces of `b` (soaprt_input_parts) from its part, a
 * box [offsets, + sizes) of the whole input. */
static void placeHeldParts(char *out, const soaprt_binding_t *b,
                           const int64_t *whole, int r, const int64_t *offsets,
                           const int64_t *sizes, const char *part,
                           int64_t elemSize) {
  int64_t stride = 1 + 2 * b->rank;
  if (b->numPartValues % stride)
    soaprt_fatal("soaprt_gather_input: %lld part values do not describe "
                 "parts of rank %lld",
                 (long long)b->numPartValues, (long long)b->rank);
  for (int64_t at = 0; at < b->numPartValues; at += stride) {
    const int64_t *pieceOffsets = b->parts + at + 1;
    const int64_t *pieceSizes = pieceOffsets + b->rank;
    if (b->parts[at] != r)
      continue;
    for (int64_t d = 0; d < b->rank; ++d)
      if (pieceOffsets[d] < offsets[d] ||
          pieceOffsets[d] + pieceSizes[d] > offsets[d] + sizes[d])
        soaprt_fatal("soaprt_gather_input: a part of rank %d is not in the "
                     "region the rank holds",
                     r);
    placePiece(out, whole, b->rank, offsets, sizes, part, pieceOffsets,
               pieceSizes, elemSize);
  }
}

char *soaprt_gather_input(int64_t index) {
  soaprt_binding_t *b = &gInputs[index];
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_fetch_input(b);
#endif
  int64_t elemSize = soaprt_dtype_size(b->dtype);
  const int64_t *whole = b->hasRegion ? b->whole : b->sizes;
  static const int64_t zeros[SOAPRT_MAX_RANK] = {0};
  /* Each rank's part: its offsets and sizes, then its data. */
  int64_t meta[2 * SOAPRT_MAX_RANK];
  for (int64_t d = 0; d < b->rank; ++d) {
    meta[d] = b->hasRegion ? b->offsets[d] : 0;
    meta[SOAPRT_MAX_RANK + d] = b->sizes[d];
  }
  char *out = NULL;
  if (gRank == 0) {
    int64_t count = 1;
    for (int64_t d = 0; d < b->rank; ++d)
      count *= whole[d];
    out = (char *)calloc(count ? (size_t)count : 1, (size_t)elemSize);
    if (!out)
      soaprt_fatal("soaprt_gather_input: out of memory");
    placePart(out, whole, b->rank, b->hasRegion ? b->offsets : zeros,
              b->sizes, b->data, elemSize);
  }
  /* With held parts, each rank's are placed over every rank's region (a
     later rank's may hold stale elements there): the regions are kept. */
  int keep = b->parts != NULL;
#ifdef SOAPRT_HAVE_MPI
  char **kept = NULL;
  int64_t(*keptMeta)[2 * SOAPRT_MAX_RANK] = NULL;
  if (keep && gRank == 0) {
    kept = (char **)calloc((size_t)gSize, sizeof(char *));
    keptMeta = calloc((size_t)gSize, sizeof(*keptMeta));
    if (!kept || !keptMeta)
      soaprt_fatal("soaprt_gather_input: out of memory");
  }
  for (int r = 1; r < gSize; ++r) {
    if (gRank == r) {
      sendBytes((const char *)meta, (int64_t)sizeof(meta), 0);
      sendBytes(b->data, soaprt_num_elements(b) * elemSize, 0);
    } else if (gRank == 0) {
      int64_t theirs[2 * SOAPRT_MAX_RANK];
      recvBytes((char *)theirs, (int64_t)sizeof(theirs), r);
      int64_t count = 1;
      for (int64_t d = 0; d < b->rank; ++d)
        count *= theirs[SOAPRT_MAX_RANK + d];
      char *part = (char *)malloc(count ? (size_t)(count * elemSize) : 1);
      if (!part)
        soaprt_fatal("soaprt_gather_input: out of memory");
      recvBytes(part, count * elemSize, r);
      placePart(out, whole, b->rank, theirs, theirs + SOAPRT_MAX_RANK, part,
                elemSize);
      if (keep) {
        kept[r] = part;
        memcpy(keptMeta[r], theirs, sizeof(theirs));
      } else {
        free(part);
      }
    }
  }
#endif
  if (keep && gRank == 0) {
    placeHeldParts(out, b, whole, 0, b->hasRegion ? b->offsets : zeros,
                   b->sizes, b->data, elemSize);
#ifdef SOAPRT_HAVE_MPI
    for (int r = 1; r < gSize; ++r) {
      placeHeldParts(out, b, whole, r, keptMeta[r],
                     keptMeta[r] + SOAPRT_MAX_RANK, kept[r], elemSize);
      free(kept[r]);
    }
    free(kept);
    free(keptMeta);
#endif
  }
  return out;
}

/* ------------------------------------------ reduce-scatter, all-gather */

#if defined(SOAPRT_HAVE_MPI) && !defined(SOAPRT_HAVE_CUDA)
/* The chunk's element count as an MPI count (fatal past INT_MAX). */
static int chunkCount(const region_t *r, int64_t n, const char *op) {
  int64_t count = soaprt_region_elements(r) / n;
  if (count > INT_MAX)
    soaprt_fatal("%s: chunks of %lld elements are more than MPI counts hold",
                 op, (long long)count);
  return (int)count;
}
#endif

void soaprt_run_reduce_scatter(const region_t *r, int64_t dtype, int64_t kind,
                               int64_t dim, const int64_t *devices, int64_t n) {
#if defined(SOAPRT_HAVE_CUDA)
  soaprt_cuda_reduce_scatter(r, dtype, kind, dim, devices, n);
#elif defined(SOAPRT_HAVE_MPI)
  const char *op = "soaprt_reduce_scatter";
  int64_t sizes[SOAPRT_MAX_RANK], strides[SOAPRT_MAX_RANK],
      chunkSizes[SOAPRT_MAX_RANK];
  region_t p = soaprt_region_dim_first(r, dim, sizes, strides);
  int count = chunkCount(r, n, op);
  MPI_Datatype type = mpiType(dtype);
  MPI_Op reduction = mpiOp(dtype, kind);
  MPI_Comm comm = soaprt_group(devices, n, op)->comm;
  int owned;
  char *packed = packRegion(&p, &owned);
  char *mine = (char *)malloc(count ? (size_t)count * (size_t)r->elemSize : 1);
  if (!mine)
    soaprt_fatal("%s: out of memory", op);
  if (MPI_Reduce_scatter_block(packed, mine, count, type, reduction, comm) !=
      MPI_SUCCESS)
    soaprt_fatal("%s: MPI_Reduce_scatter_block failed", op);
  region_t c =
      soaprt_region_chunk(&p, n, soaprt_index_in(devices, n), chunkSizes);
  soaprt_copy_region(&c, mine, 0);
  free(mine);
  if (owned)
    free(packed);
#else
  (void)r;
  (void)dtype;
  (void)kind;
  (void)dim;
  (void)devices;
  (void)n;
#endif
}

void soaprt_run_all_gather(const region_t *r, int64_t dtype, int64_t dim,
                           const int64_t *devices, int64_t n) {
  (void)dtype;
#if defined(SOAPRT_HAVE_CUDA)
  soaprt_cuda_all_gather(r, dim, devices, n);
#elif defined(SOAPRT_HAVE_MPI)
  const char *op = "soaprt_all_gather";
  int64_t sizes[SOAPRT_MAX_RANK], strides[SOAPRT_MAX_RANK];
  region_t p = soaprt_region_dim_first(r, dim, sizes, strides);
  int count = chunkCount(r, n, op);
  MPI_Comm comm = soaprt_group(devices, n, op)->comm;
  MPI_Datatype element;
  MPI_Type_contiguous((int)r->elemSize, MPI_BYTE, &element);
  MPI_Type_commit(&element);
  int owned;
  char *packed = packRegion(&p, &owned);
  /* In place: this rank's chunk is already at its place in `packed`. */
  if (MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packed, count, element,
                    comm) != MPI_SUCCESS)
    soaprt_fatal("%s: MPI_Allgather failed", op);
  MPI_Type_free(&element);
  if (owned) {
    soaprt_copy_region(&p, packed, 0);
    free(packed);
  }
#else
  (void)r;
  (void)dim;
  (void)devices;
  (void)n;
#endif
}

/* ------------------------------------------- per-element-type C entries */

/* MLIR's unranked memref types include the element type, so compiled code
 * calls one entry per type (soaprt_transfer_f32, ...); all forward to the
 * generic functions above, which take the type from `dtype`. */
#define SOAPRT_ENTRIES(T)                                                      \
  void _mlir_ciface_soaprt_transfer_##T(                                       \
      soaprt_unranked_memref_t *m, int64_t dtype, int64_t from, int64_t to) {  \
    soaprt_transfer(m, dtype, from, to);                                       \
  }                                                                            \
  void _mlir_ciface_soaprt_all_reduce_##T(soaprt_unranked_memref_t *m,         \
                                          int64_t dtype, int64_t kind,         \
                                          soaprt_unranked_memref_t *devices) { \
    soaprt_all_reduce(m, dtype, kind, devices);                                \
  }                                                                            \
  int64_t _mlir_ciface_soaprt_transfer_start_##T(                              \
      soaprt_unranked_memref_t *m, int64_t dtype, int64_t from, int64_t to) {  \
    return soaprt_transfer_start(m, dtype, from, to);                          \
  }                                                                            \
  int64_t _mlir_ciface_soaprt_all_reduce_start_##T(                            \
      soaprt_unranked_memref_t *m, int64_t dtype, int64_t kind,                \
      soaprt_unranked_memref_t *devices) {                                     \
    return soaprt_all_reduce_start(m, dtype, kind, devices);                   \
  }                                                                            \
  void _mlir_ciface_soaprt_reduce_scatter_##T(                                 \
      soaprt_unranked_memref_t *m, int64_t dtype, int64_t kind, int64_t dim,   \
      soaprt_unranked_memref_t *devices) {                                     \
    soaprt_reduce_scatter(m, dtype, kind, dim, devices);                       \
  }                                                                            \
  int64_t _mlir_ciface_soaprt_reduce_scatter_start_##T(                        \
      soaprt_unranked_memref_t *m, int64_t dtype, int64_t kind, int64_t dim,   \
      soaprt_unranked_memref_t *devices) {                                     \
    return soaprt_reduce_scatter_start(m, dtype, kind, dim, devices);          \
  }                                                                            \
  void _mlir_ciface_soaprt_all_gather_##T(soaprt_unranked_memref_t *m,         \
                                          int64_t dtype, int64_t dim,          \
                                          soaprt_unranked_memref_t *devices) { \
    soaprt_all_gather(m, dtype, dim, devices);                                 \
  }                                                                            \
  int64_t _mlir_ciface_soaprt_all_gather_start_##T(                            \
      soaprt_unranked_memref_t *m, int64_t dtype, int64_t dim,                 \
      soaprt_unranked_memref_t *devices) {                                     \
    return soaprt_all_gather_start(m, dtype, dim, devices);                    \
  }                                                                            \
  void _mlir_ciface_soaprt_bind_input_##T(                                     \
      int64_t index, soaprt_unranked_memref_t *m, int64_t dtype) {             \
    soaprt_bind_input(index, m, dtype);                                        \
  }                                                                            \
  void _mlir_ciface_soaprt_bind_output_##T(                                    \
      int64_t index, soaprt_unranked_memref_t *m, int64_t dtype) {             \
    soaprt_bind_output(index, m, dtype);                                       \
  }                                                                            \
  void _mlir_ciface_soaprt_update_input_##T(                                   \
      int64_t index, soaprt_unranked_memref_t *m, int64_t dtype) {             \
    soaprt_update_input(index, m, dtype);                                      \
  }                                                                            \
  void _mlir_ciface_soaprt_input_initial_##T(                                  \
      int64_t index, soaprt_unranked_memref_t *m, int64_t dtype) {             \
    soaprt_input_initial(index, m, dtype);                                     \
  }
SOAPRT_ENTRIES(f32)
SOAPRT_ENTRIES(f64)
SOAPRT_ENTRIES(i32)
SOAPRT_ENTRIES(i64)
SOAPRT_ENTRIES(i8)
SOAPRT_ENTRIES(i16)
SOAPRT_ENTRIES(i1)
SOAPRT_ENTRIES(f16)
SOAPRT_ENTRIES(bf16)

void soaprt_finalize(void) {
  /* Communication still in flight (or, deferred, not yet run) first. */
  if (gInitialized)
    soaprt_comm_drain();
#ifdef SOAPRT_HAVE_CUDA
  /* Waits for the stream, releases NCCL, the libraries and the stream. */
  soaprt_cuda_finalize();
  for (int i = 0; i < SOAPRT_MAX_BINDINGS; ++i)
    if (gInputs[i].ownsData) {
      free(gInputs[i].data);
      gInputs[i].data = NULL;
      gInputs[i].ownsData = 0;
    }
#endif
#ifdef SOAPRT_HAVE_MPI
  /* After the back end released what it made on top of them. */
  while (gGroups) {
    soaprt_group_t *g = gGroups;
    gGroups = g->next;
    if (g->comm != MPI_COMM_NULL)
      MPI_Comm_free(&g->comm);
    free(g->devices);
    free(g);
  }
  gGroupsEnd = &gGroups;
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down)
    MPI_Finalize();
#endif
  for (int i = 0; i < SOAPRT_MAX_BINDINGS; ++i) {
    free(gOutputs[i].data);
    gOutputs[i].data = NULL;
    gOutputs[i].capacity = 0;
    gInputs[i].initial = NULL;
  }
}
