/*===- nccl_mpi.c - Emulated NCCL over MPI point-to-point -----------------===*
 *
 * Part of the host emulation of the CUDA libraries (cuda_emulation.h), which
 * exists to test the CUDA lowering and libsoaprt_cuda without a GPU: the
 * "GPUs" of a run are its MPI processes, and NCCL's operations become MPI
 * messages on MPI_COMM_WORLD, completed before each call returns.
 *
 * Unique ids hold the creator's MPI_COMM_WORLD rank and a per-process
 * counter. ncclCommInitRank: every member sends (rank, world rank, nranks)
 * to the creator, which checks the ranks and sends the table back (so the
 * creator must be a member, as in libsoaprt). Messages only use tags from a
 * reserved range above 32767 (libsoaprt's MPI_Comm_create_group tags stay
 * below), with the communicator's id in the tag, so that traffic of
 * different communicators never matches.
 *
 * ncclAllReduce: sum, prod, max, min, avg of every type but fp8 (f16/bf16
 * through float, rounded after each step), in place or not; deterministic
 * and identical on every member (member 0 reduces in member order and sends
 * the result back). ncclReduceScatter: the same reduction, member 0 sending
 * each member its chunk; ncclAllGather: member 0 collects the chunks and
 * sends every member all of them; both in place (NCCL's in-place offsets)
 * or not. ncclSend / ncclRecv between ncclGroupStart/End are
 * queued and run at the outermost ncclGroupEnd (MPI_Irecv, MPI_Isend,
 * MPI_Waitall); outside a group they run at once. Collectives inside a group
 * (libsoaprt's buckets of all-reduces) run at once too, in call order, which
 * every member shares. Buffers must be device
 * memory of the emulation and the stream alive (ncclInvalidArgument).
 *
 *===----------------------------------------------------------------------===*/

#include "cuda_emulation.h"

#include <mpi.h>
#include <nccl.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID_MAGIC "SOAPEMU1"
#define TAG_FIRST 32768
#define CHUNK (1 << 30) /* bytes per MPI message */

enum { TAG_INIT_UP, TAG_INIT_DOWN, TAG_P2P, TAG_REDUCE_UP, TAG_REDUCE_DOWN,
       TAG_KINDS = 8 };

typedef struct emuId {
  char magic[8];
  int32_t creator; /* MPI_COMM_WORLD rank */
  int32_t pad;
  uint64_t counter;
} emuId_t;

struct ncclComm {
  int rank, size;
  int *world; /* MPI_COMM_WORLD rank of each member */
  int tag;    /* first of this communicator's TAG_KINDS tags */
};
static soaprt_emu_registry_t gComms;
static char gLastError[512];
static uint64_t gIdCounter = 0;

static ncclResult_t fail(ncclResult_t result, const char *call,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static ncclResult_t fail(ncclResult_t result, const char *call,
                         const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(gLastError, sizeof(gLastError), fmt, args);
  va_end(args);
  soaprt_emu_diag(call, "%s", gLastError);
  return result;
}

static int mpiUp(void) {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  return up && !down;
}

static int worldRank(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/* The first tag of the communicator made from `id`: the same on every
 * member, different for different ids (up to a hash collision in a range
 * of millions with OpenMPI's MPI_TAG_UB). */
static int tagFor(const emuId_t *id) {
  static long long slots = 0;
  if (!slots) {
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    long long top = flag && ub ? *ub : 32767;
    slots = top > TAG_FIRST + TAG_KINDS ? (top - TAG_FIRST) / TAG_KINDS : 0;
  }
  uint64_t h = ((uint64_t)(uint32_t)id->creator << 40) ^ id->counter;
  h *= 0x9E3779B97F4A7C15ull;
  if (!slots) /* the smallest MPI_TAG_UB allowed: 30001..32767 */
    return 30001 + (int)((h >> 20) % 345) * TAG_KINDS;
  return TAG_FIRST + (int)((h >> 20) % (uint64_t)slots) * TAG_KINDS;
}

/* ------------------------------------------------------ communicators */

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (!uniqueId)
    return fail(ncclInvalidArgument, "ncclGetUniqueId", "NULL id");
  if (!mpiUp())
    return fail(ncclInvalidUsage, "ncclGetUniqueId",
                "the NCCL emulation needs MPI to be initialized");
  emuId_t id;
  memset(&id, 0, sizeof(id));
  memcpy(id.magic, ID_MAGIC, 8);
  id.creator = worldRank();
  id.counter = ++gIdCounter;
  memset(uniqueId, 0, sizeof(*uniqueId));
  memcpy(uniqueId->internal, &id, sizeof(id));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                              int rank) {
  const char *call = "ncclCommInitRank";
  emuId_t id;
  memcpy(&id, commId.internal, sizeof(id));
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks ||
      memcmp(id.magic, ID_MAGIC, 8) != 0)
    return fail(ncclInvalidArgument, call,
                "rank %d of %d, or an id not made by ncclGetUniqueId", rank,
                nranks);
  if (!mpiUp())
    return fail(ncclInvalidUsage, call, "MPI is not initialized");
  if (soaprt_emu_need_device() != cudaSuccess)
    return fail(ncclUnhandledCudaError, call, "no GPU");
  int me = worldRank(), worldSize = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (id.creator < 0 || id.creator >= worldSize)
    return fail(ncclInvalidArgument, call, "the id's creator is rank %d",
                id.creator);
  int tag = tagFor(&id);
  /* table[0]: status (0 ok), table[1 + r]: world rank of member r */
  int *table = (int *)malloc((size_t)(nranks + 1) * sizeof(int));
  if (!table)
    return fail(ncclSystemError, call, "out of memory");
  if (me == id.creator) {
    table[0] = 0;
    for (int r = 0; r < nranks; ++r)
      table[1 + r] = -1;
    table[1 + rank] = me;
    for (int i = 1; i < nranks; ++i) {
      int msg[3];
      MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, tag + TAG_INIT_UP,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (msg[2] != nranks || msg[0] < 0 || msg[0] >= nranks ||
          table[1 + msg[0]] != -1)
        table[0] = 1; /* inconsistent: every member fails */
      else
        table[1 + msg[0]] = msg[1];
    }
    for (int r = 0; r < nranks; ++r)
      if (r != rank && table[1 + r] >= 0)
        MPI_Send(table, nranks + 1, MPI_INT, table[1 + r], tag + TAG_INIT_DOWN,
                 MPI_COMM_WORLD);
  } else {
    int msg[3] = {rank, me, nranks};
    MPI_Send(msg, 3, MPI_INT, id.creator, tag + TAG_INIT_UP, MPI_COMM_WORLD);
    MPI_Recv(table, nranks + 1, MPI_INT, id.creator, tag + TAG_INIT_DOWN,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (table[0] != 0) {
    free(table);
    return fail(ncclInvalidUsage, call,
                "the members disagree on the ranks or their number (%d)",
                nranks);
  }
  struct ncclComm *c = (struct ncclComm *)calloc(1, sizeof(struct ncclComm));
  int *world = (int *)malloc((size_t)nranks * sizeof(int));
  if (!c || !world || !soaprt_emu_registry_add(&gComms, c)) {
    free(c);
    free(world);
    free(table);
    return fail(ncclSystemError, call, "out of memory");
  }
  memcpy(world, table + 1, (size_t)nranks * sizeof(int));
  free(table);
  c->rank = rank;
  c->size = nranks;
  c->world = world;
  c->tag = tag;
  *comm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!soaprt_emu_registry_remove(&gComms, comm))
    return fail(ncclInvalidArgument, "ncclCommDestroy",
                "communicator %p is not live", (void *)comm);
  free(comm->world);
  free(comm);
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error";
  case ncclSystemError: return "unhandled system error";
  case ncclInternalError: return "internal error";
  case ncclInvalidArgument: return "invalid argument";
  case ncclInvalidUsage: return "invalid usage";
  case ncclRemoteError: return "remote process exited or network error";
  case ncclInProgress: return "operation in progress";
  default: return "unknown result code";
  }
}

const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return gLastError;
}

/* ------------------------------------------------------- messages */

typedef struct p2p {
  int send;
  char *buffer;
  size_t bytes;
  int peer; /* world rank */
  int tag;
} p2p_t;
static p2p_t *gQueue = NULL;
static size_t gQueued = 0, gQueueCapacity = 0;
static int gGroupDepth = 0;

/* Runs ops: every receive posted, then every send (in chunks of at most
 * CHUNK bytes), then one wait. */
static ncclResult_t run(const char *call, const p2p_t *ops, size_t n) {
  size_t requests = 0;
  for (size_t i = 0; i < n; ++i)
    requests += ops[i].bytes / CHUNK + 1;
  MPI_Request *req = (MPI_Request *)malloc(requests * sizeof(MPI_Request));
  if (!req)
    return fail(ncclSystemError, call, "out of memory");
  size_t k = 0;
  int ok = 1;
  for (int send = 0; send < 2; ++send)
    for (size_t i = 0; i < n; ++i) {
      if (ops[i].send != send)
        continue;
      size_t done = 0;
      do {
        size_t left = ops[i].bytes - done;
        int chunk = left > CHUNK ? CHUNK : (int)left;
        ok &= (send ? MPI_Isend(ops[i].buffer + done, chunk, MPI_BYTE,
                                ops[i].peer, ops[i].tag, MPI_COMM_WORLD,
                                &req[k++])
                    : MPI_Irecv(ops[i].buffer + done, chunk, MPI_BYTE,
                                ops[i].peer, ops[i].tag, MPI_COMM_WORLD,
                                &req[k++])) == MPI_SUCCESS;
        done += (size_t)chunk;
      } while (done < ops[i].bytes);
    }
  ok &= MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
  free(req);
  return ok ? ncclSuccess : fail(ncclSystemError, call, "an MPI call failed");
}

/* ------------------------------------------------------- element types */

static size_t typeSize(ncclDataType_t type) {
  switch (type) {
  case ncclInt8: case ncclUint8: return 1;
  case ncclFloat16: case ncclBfloat16: return 2;
  case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
  case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
  default: return 0; /* fp8 and unknown types: not emulated */
  }
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 31,
           mantissa = h & 1023u, bits;
  if (exponent == 31) /* inf, NaN */
    bits = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent) /* normal */
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else { /* zero, subnormal: exact in float */
    float f = ldexpf((float)mantissa, -24);
    return sign ? -f : f;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint16_t floatToHalf(float f) { /* round to nearest even */
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  float a = fabsf(f);
  if (a != a)
    return (uint16_t)(sign | 0x7e00u);
  if (a >= 65520.0f) /* rounds to inf */
    return (uint16_t)(sign | 0x7c00u);
  if (a < 6.103515625e-05f) /* subnormal: multiples of 2^-24 */
    return (uint16_t)(sign | (uint16_t)lrintf(a * 16777216.0f));
  uint32_t ab;
  memcpy(&ab, &a, 4);
  uint32_t mantissa = ab & 0x7fffffu, exponent = (ab >> 23) - 112;
  uint32_t h = (exponent << 10) | (mantissa >> 13), rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
    ++h; /* may carry into the exponent: still right */
  return (uint16_t)(sign | h);
}

static float bf16ToFloat(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint16_t floatToBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if (f != f)
    return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

#define REDUCE_LOOP(T, CONV_IN, CONV_OUT, ACC)                                 \
  do {                                                                         \
    T *a = (T *)acc;                                                           \
    const T *b = (const T *)in;                                                \
    for (size_t i = 0; i < count; ++i) {                                       \
      ACC x = CONV_IN(a[i]), y = CONV_IN(b[i]), r;                             \
      switch (op) {                                                            \
      case ncclProd: r = x * y; break;                                         \
      case ncclMax: r = x > y || x != x ? x : y; break;                        \
      case ncclMin: r = x < y || x != x ? x : y; break;                        \
      default: r = x + y; break; /* sum, avg */                                \
      }                                                                        \
      a[i] = CONV_OUT(r);                                                      \
    }                                                                          \
  } while (0)
#define SAME(x) (x)
/* Integer sums and products wrap as on the GPU (unsigned arithmetic). */
#define WRAP_LOOP(T, U)                                                        \
  do {                                                                         \
    T *a = (T *)acc;                                                           \
    const T *b = (const T *)in;                                                \
    for (size_t i = 0; i < count; ++i)                                         \
      a[i] = op == ncclSum || op == ncclAvg ? (T)((U)a[i] + (U)b[i])           \
             : op == ncclProd               ? (T)((U)a[i] * (U)b[i])           \
             : op == ncclMax                ? (a[i] > b[i] ? a[i] : b[i])      \
                                            : (a[i] < b[i] ? a[i] : b[i]);     \
  } while (0)

/* acc := acc op in, elementwise. */
static void reduce(void *acc, const void *in, size_t count,
                   ncclDataType_t type, ncclRedOp_t op) {
  switch (type) {
  case ncclInt8: WRAP_LOOP(int8_t, uint8_t); break;
  case ncclUint8: WRAP_LOOP(uint8_t, uint8_t); break;
  case ncclInt32: WRAP_LOOP(int32_t, uint32_t); break;
  case ncclUint32: WRAP_LOOP(uint32_t, uint32_t); break;
  case ncclInt64: WRAP_LOOP(int64_t, uint64_t); break;
  case ncclUint64: WRAP_LOOP(uint64_t, uint64_t); break;
  case ncclFloat32: REDUCE_LOOP(float, SAME, SAME, float); break;
  case ncclFloat64: REDUCE_LOOP(double, SAME, SAME, double); break;
  case ncclFloat16: REDUCE_LOOP(uint16_t, halfToFloat, floatToHalf, float);
    break;
  default: REDUCE_LOOP(uint16_t, bf16ToFloat, floatToBf16, float); break;
  }
}

/* acc := acc / n (ncclAvg, floating-point types). */
static void divide(void *acc, size_t count, ncclDataType_t type, int n) {
  for (size_t i = 0; i < count; ++i)
    switch (type) {
    case ncclFloat32: ((float *)acc)[i] /= (float)n; break;
    case ncclFloat64: ((double *)acc)[i] /= n; break;
    case ncclFloat16:
      ((uint16_t *)acc)[i] =
          floatToHalf(halfToFloat(((uint16_t *)acc)[i]) / (float)n);
      break;
    default:
      ((uint16_t *)acc)[i] =
          floatToBf16(bf16ToFloat(((uint16_t *)acc)[i]) / (float)n);
      break;
    }
}

/* The checks every operation makes; 0 with the reason kept on failure. */
static ncclResult_t checkOp(const char *call, ncclComm_t comm,
                            cudaStream_t stream) {
  if (!soaprt_emu_registry_contains(&gComms, comm))
    return fail(ncclInvalidArgument, call, "communicator %p is not live",
                (void *)comm);
  if (!soaprt_emu_stream_valid(stream))
    return fail(ncclInvalidArgument, call, "stream %p was not created",
                (void *)stream);
  if (!mpiUp())
    return fail(ncclInvalidUsage, call, "MPI is not running");
  return ncclSuccess;
}

static ncclResult_t checkBuffer(const char *call, const char *what,
                                const void *p, size_t bytes) {
  if (!soaprt_emu_check_device(call, what, p, 0, (int64_t)bytes))
    return fail(ncclInvalidArgument, call, "%s is not a valid device buffer",
                what);
  return ncclSuccess;
}

/* The element size of a reduction's type; 0 if it is not emulated. */
static size_t reductionTypeSize(ncclDataType_t datatype, ncclRedOp_t op) {
  int floating = datatype == ncclFloat16 || datatype == ncclFloat32 ||
                 datatype == ncclFloat64 || datatype == ncclBfloat16;
  if ((unsigned)op >= (unsigned)ncclNumOps || (op == ncclAvg && !floating))
    return 0;
  return typeSize(datatype);
}

/* A member other than 0 of a collective: sends its `sendBytes` up to member
 * 0 and receives its `recvBytes` of the result back. */
static ncclResult_t sendUpReceiveDown(const char *call, ncclComm_t comm,
                                      const void *s, size_t sendBytes,
                                      void *recv, size_t recvBytes) {
  p2p_t ops[2] = {{1, (char *)(uintptr_t)s, sendBytes, comm->world[0],
                   comm->tag + TAG_REDUCE_UP},
                  {0, (char *)recv, recvBytes, comm->world[0],
                   comm->tag + TAG_REDUCE_DOWN}};
  return run(call, ops, 2);
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  const char *call = "ncclAllReduce";
  ncclResult_t r = checkOp(call, comm, stream);
  if (r != ncclSuccess)
    return r;
  size_t size = reductionTypeSize(datatype, op);
  if (!size)
    return fail(ncclInvalidArgument, call,
                "type %d, reduction %d: not emulated", (int)datatype, (int)op);
  size_t bytes = count * size;
  if ((r = checkBuffer(call, "sendbuff", sendbuff, bytes)) != ncclSuccess ||
      (r = checkBuffer(call, "recvbuff", recvbuff, bytes)) != ncclSuccess)
    return r;
  const char *s = (const char *)sendbuff, *d = (const char *)recvbuff;
  if (s != d && s < d + bytes && d < s + bytes)
    return fail(ncclInvalidArgument, call,
                "sendbuff and recvbuff overlap without being equal");
  ++soaprt_emu_stats.ncclAllReduces;
  if (bytes == 0)
    return ncclSuccess;
  /* Member 0 reduces in member order and sends the result back. */
  if (comm->rank != 0)
    return sendUpReceiveDown(call, comm, s, bytes, recvbuff, bytes);
  int up = comm->tag + TAG_REDUCE_UP, down = comm->tag + TAG_REDUCE_DOWN;
  char *acc = (char *)recvbuff;
  if (acc != s)
    memcpy(acc, s, bytes);
  char *in = comm->size > 1 ? (char *)malloc(bytes) : NULL;
  if (comm->size > 1 && !in)
    return fail(ncclSystemError, call, "out of memory");
  for (int m = 1; m < comm->size && r == ncclSuccess; ++m) {
    p2p_t recv = {0, in, bytes, comm->world[m], up};
    if ((r = run(call, &recv, 1)) == ncclSuccess)
      reduce(acc, in, count, datatype, op);
  }
  free(in);
  if (op == ncclAvg)
    divide(acc, count, datatype, comm->size);
  for (int m = 1; m < comm->size && r == ncclSuccess; ++m) {
    p2p_t send = {1, acc, bytes, comm->world[m], down};
    r = run(call, &send, 1);
  }
  return r;
}

/* Member 0 collects `bytes` from every member into acc (its own from s)
 * and reduces (ncclReduceScatter) or places them (ncclAllGather, gather=1:
 * acc holds size * bytes). */
static ncclResult_t collect(const char *call, ncclComm_t comm, const char *s,
                            char *acc, size_t bytes, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op,
                            int gather) {
  ncclResult_t r = ncclSuccess;
  if (acc != s)
    memmove(acc, s, bytes);
  char *in = comm->size > 1 && !gather ? (char *)malloc(bytes) : NULL;
  if (comm->size > 1 && !gather && !in)
    return fail(ncclSystemError, call, "out of memory");
  int up = comm->tag + TAG_REDUCE_UP;
  for (int m = 1; m < comm->size && r == ncclSuccess; ++m) {
    p2p_t recv = {0, gather ? acc + (size_t)m * bytes : in, bytes,
                  comm->world[m], up};
    if ((r = run(call, &recv, 1)) == ncclSuccess && !gather)
      reduce(acc, in, count, datatype, op);
  }
  free(in);
  return r;
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  const char *call = "ncclReduceScatter";
  ncclResult_t r = checkOp(call, comm, stream);
  if (r != ncclSuccess)
    return r;
  size_t size = reductionTypeSize(datatype, op);
  if (!size)
    return fail(ncclInvalidArgument, call,
                "type %d, reduction %d: not emulated", (int)datatype, (int)op);
  size_t bytes = recvcount * size, all = bytes * (size_t)comm->size;
  if ((r = checkBuffer(call, "sendbuff", sendbuff, all)) != ncclSuccess ||
      (r = checkBuffer(call, "recvbuff", recvbuff, bytes)) != ncclSuccess)
    return r;
  const char *s = (const char *)sendbuff, *d = (const char *)recvbuff;
  if (d != s + (size_t)comm->rank * bytes && s < d + bytes && d < s + all)
    return fail(ncclInvalidArgument, call,
                "recvbuff overlaps sendbuff other than at this rank's chunk");
  ++soaprt_emu_stats.ncclReduceScatters;
  if (bytes == 0)
    return ncclSuccess;
  if (comm->rank != 0)
    return sendUpReceiveDown(call, comm, s, all, recvbuff, bytes);
  int down = comm->tag + TAG_REDUCE_DOWN;
  char *acc = (char *)malloc(all);
  if (!acc)
    return fail(ncclSystemError, call, "out of memory");
  r = collect(call, comm, s, acc, all, recvcount * (size_t)comm->size, datatype,
              op, 0);
  if (r == ncclSuccess && op == ncclAvg)
    divide(acc, recvcount * (size_t)comm->size, datatype, comm->size);
  for (int m = 1; m < comm->size && r == ncclSuccess; ++m) {
    p2p_t send = {1, acc + (size_t)m * bytes, bytes, comm->world[m], down};
    r = run(call, &send, 1);
  }
  if (r == ncclSuccess)
    memmove(recvbuff, acc, bytes);
  free(acc);
  return r;
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  const char *call = "ncclAllGather";
  ncclResult_t r = checkOp(call, comm, stream);
  if (r != ncclSuccess)
    return r;
  size_t size = typeSize(datatype);
  if (!size)
    return fail(ncclInvalidArgument, call, "type %d: not emulated",
                (int)datatype);
  size_t bytes = sendcount * size, all = bytes * (size_t)comm->size;
  if ((r = checkBuffer(call, "sendbuff", sendbuff, bytes)) != ncclSuccess ||
      (r = checkBuffer(call, "recvbuff", recvbuff, all)) != ncclSuccess)
    return r;
  const char *s = (const char *)sendbuff;
  char *d = (char *)recvbuff;
  if (s != d + (size_t)comm->rank * bytes && s < d + all && d < s + bytes)
    return fail(ncclInvalidArgument, call,
                "sendbuff overlaps recvbuff other than at this rank's chunk");
  ++soaprt_emu_stats.ncclAllGathers;
  if (bytes == 0)
    return ncclSuccess;
  if (comm->rank != 0)
    return sendUpReceiveDown(call, comm, s, bytes, d, all);
  int down = comm->tag + TAG_REDUCE_DOWN;
  r = collect(call, comm, s, d, bytes, sendcount, datatype, ncclSum, 1);
  for (int m = 1; m < comm->size && r == ncclSuccess; ++m) {
    p2p_t send = {1, d, all, comm->world[m], down};
    r = run(call, &send, 1);
  }
  return r;
}

/* ---------------------------------------------- point-to-point, groups */

static ncclResult_t pointToPoint(const char *call, int send, const void *buff,
                                 size_t count, ncclDataType_t datatype,
                                 int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  ncclResult_t r = checkOp(call, comm, stream);
  if (r != ncclSuccess)
    return r;
  size_t size = typeSize(datatype);
  if (!size || peer < 0 || peer >= comm->size)
    return fail(ncclInvalidArgument, call, "type %d, peer %d of %d",
                (int)datatype, peer, comm->size);
  if ((r = checkBuffer(call, send ? "sendbuff" : "recvbuff", buff,
                       count * size)) != ncclSuccess)
    return r;
  if (send)
    ++soaprt_emu_stats.ncclSends;
  else
    ++soaprt_emu_stats.ncclRecvs;
  p2p_t op = {send, (char *)(uintptr_t)buff, count * size, comm->world[peer],
              comm->tag + TAG_P2P};
  if (gGroupDepth == 0)
    return run(call, &op, 1);
  if (gQueued == gQueueCapacity) {
    size_t capacity = gQueueCapacity ? 2 * gQueueCapacity : 16;
    p2p_t *queue = (p2p_t *)realloc(gQueue, capacity * sizeof(p2p_t));
    if (!queue)
      return fail(ncclSystemError, call, "out of memory");
    gQueue = queue;
    gQueueCapacity = capacity;
  }
  gQueue[gQueued++] = op;
  return ncclSuccess;
}

ncclResult_t ncclSend(const void *sendbuff, size_t count,
                      ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return pointToPoint("ncclSend", 1, sendbuff, count, datatype, peer, comm,
                      stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  return pointToPoint("ncclRecv", 0, recvbuff, count, datatype, peer, comm,
                      stream);
}

ncclResult_t ncclGroupStart(void) {
  ++gGroupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  if (gGroupDepth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd", "no ncclGroupStart");
  if (--gGroupDepth > 0)
    return ncclSuccess;
  ncclResult_t r =
      gQueued ? run("ncclGroupEnd", gQueue, gQueued) : ncclSuccess;
  gQueued = 0;
  return r;
}
