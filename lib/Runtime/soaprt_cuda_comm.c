/*===- soaprt_cuda_comm.c - NCCL: transfers and collectives ---------------===*
 *
 * soaprt_init creates the world communicator (rank 0 makes the unique id,
 * MPI_Bcast hands it out). A transfer is an ncclSend / ncclRecv pair on it,
 * between the two ranks that call soaprt_transfer. An all-reduce (and a
 * reduce-scatter, an all-gather) runs on a
 * communicator of exactly the listed devices, in list order: the world one
 * when the list is 0..N-1, else the group's own, made by its members only
 * (soaprt_group's MPI communicator, then an id broadcast over it) when
 * soap_setup prepares the program's groups (soaprt_prepare_group), or at
 * first use otherwise, and cached. Strided regions go through a packed device
 * temporary.
 * All of it runs on the rank's communication stream (soaprt_comm.c brackets
 * each operation with soaprt_cuda_comm_begin / _end): it starts after the
 * work issued before it and overlaps the work issued after it, which waits
 * for it only where compiled code calls soaprt_comm_wait (an event per
 * ticket, in a ring: a re-recorded event belongs to a later ticket, which
 * completes after the earlier one anyway). NCCL enqueues and returns;
 * nothing here waits on the host.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_cuda_internal.h"

#include <mpi.h>
#include <nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ncclComm_t gWorld = NULL;

/* The communication stream and its events (made with the world
 * communicator: one rank never communicates). */
#define TICKET_EVENTS 64
static cudaStream_t gCommStream = NULL;
static cudaEvent_t gIssuedEvent = NULL;          /* work before a start */
static cudaEvent_t gTicketEvents[TICKET_EVENTS]; /* ticket t: [t % N] */
static int gGroupDepth = 0;

/* Copies back out of (and frees of) packed buffers of the open group's
 * transfers: they follow its ncclGroupEnd. */
typedef struct unpack {
  soaprt_region_t region;
  int64_t sizes[SOAPRT_MAX_RANK], strides[SOAPRT_MAX_RANK];
  char *packed;
  int store;
} unpack_t;
static unpack_t *gUnpacks = NULL;
static size_t gUnpackCount = 0, gUnpackCapacity = 0;

static void ncclCheck(ncclResult_t result, const char *call, const char *op) {
  if (result == ncclSuccess)
    return;
  const char *last = ncclGetLastError(NULL);
  char detail[1024];
  snprintf(detail, sizeof(detail), "%s%s%s", ncclGetErrorString(result),
           last && *last ? ": " : "", last ? last : "");
  soaprt_cuda_fail(call, op, detail);
}
#define SOAPRT_NCCL_CHECK(call, op) ncclCheck((call), #call, (op))

/* A communicator of the `comm` ranks, made by all of them. */
static ncclComm_t createComm(MPI_Comm comm, const char *op) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ncclUniqueId id;
  memset(&id, 0, sizeof(id));
  if (rank == 0)
    SOAPRT_NCCL_CHECK(ncclGetUniqueId(&id), op);
  if (MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, comm) != MPI_SUCCESS)
    soaprt_fatal("%s: MPI_Bcast of the NCCL id failed", op);
  ncclComm_t nccl = NULL;
  SOAPRT_NCCL_CHECK(ncclCommInitRank(&nccl, size, id, rank), op);
  return nccl;
}

void soaprt_cuda_comm_init(void) {
  /* One rank never communicates: no NCCL at all. */
  if (soaprt_cuda.size <= 1)
    return;
  const char *op = "soaprt_init";
  gWorld = createComm(MPI_COMM_WORLD, op);
  SOAPRT_CUDA_CHECK(cudaStreamCreateWithFlags(&gCommStream,
                                              cudaStreamNonBlocking),
                    op);
  SOAPRT_CUDA_CHECK(
      cudaEventCreateWithFlags(&gIssuedEvent, cudaEventDisableTiming), op);
  for (int i = 0; i < TICKET_EVENTS; ++i)
    SOAPRT_CUDA_CHECK(cudaEventCreateWithFlags(&gTicketEvents[i],
                                               cudaEventDisableTiming),
                      op);
}

static cudaStream_t commStream(const char *op) {
  if (!gCommStream)
    soaprt_fatal("%s: no communication stream (one rank)", op);
  return gCommStream;
}

void soaprt_cuda_comm_begin(void) {
  const char *op = "soaprt_comm";
  cudaStream_t comm = commStream(op);
  cudaStream_t compute = soaprt_cuda_stream(op);
  if (compute == comm)
    soaprt_fatal("%s: communication issued twice at once", op);
  SOAPRT_CUDA_CHECK(cudaEventRecord(gIssuedEvent, compute), op);
  SOAPRT_CUDA_CHECK(cudaStreamWaitEvent(comm, gIssuedEvent, 0), op);
  soaprt_cuda.current = comm;
}

void soaprt_cuda_comm_end(int64_t first, int64_t last) {
  const char *op = "soaprt_comm";
  cudaStream_t comm = commStream(op);
  /* Only the last TICKET_EVENTS tickets can still be told apart. */
  if (first > 0 && last - first >= TICKET_EVENTS)
    first = last - TICKET_EVENTS + 1;
  for (int64_t t = first; first > 0 && t <= last; ++t)
    SOAPRT_CUDA_CHECK(cudaEventRecord(gTicketEvents[t % TICKET_EVENTS], comm),
                      op);
  soaprt_cuda_after_call(op);
  soaprt_cuda.current = soaprt_cuda.stream;
}

void soaprt_cuda_comm_wait(int64_t ticket) {
  const char *op = "soaprt_comm_wait";
  (void)commStream(op);
  SOAPRT_CUDA_CHECK(cudaStreamWaitEvent(soaprt_cuda_stream(op),
                                        gTicketEvents[ticket % TICKET_EVENTS],
                                        0),
                    op);
}

void soaprt_cuda_group_begin(void) {
  const char *op = "soaprt_comm_group_begin";
  if (gGroupDepth++ == 0)
    SOAPRT_NCCL_CHECK(ncclGroupStart(), op);
}

void soaprt_cuda_group_end(void) {
  const char *op = "soaprt_comm_group_end";
  if (--gGroupDepth > 0)
    return;
  SOAPRT_NCCL_CHECK(ncclGroupEnd(), op);
  for (size_t i = 0; i < gUnpackCount; ++i) {
    unpack_t *u = &gUnpacks[i];
    u->region.sizes = u->sizes;
    u->region.strides = u->strides;
    soaprt_cuda_unpack(&u->region, u->packed, u->store, op);
  }
  gUnpackCount = 0;
}

/* After a transfer's NCCL call: now, or after the open group. */
static void unpackLater(const soaprt_region_t *r, char *packed, int store,
                        const char *op) {
  if (gGroupDepth == 0) {
    soaprt_cuda_unpack(r, packed, store, op);
    return;
  }
  if (packed == r->base)
    return; /* nothing to copy or free */
  if (gUnpackCount == gUnpackCapacity) {
    size_t capacity = gUnpackCapacity ? 2 * gUnpackCapacity : 16;
    unpack_t *grown =
        (unpack_t *)realloc(gUnpacks, capacity * sizeof(unpack_t));
    if (!grown)
      soaprt_fatal("%s: out of memory", op);
    gUnpacks = grown;
    gUnpackCapacity = capacity;
  }
  unpack_t *u = &gUnpacks[gUnpackCount++];
  u->region = *r;
  memcpy(u->sizes, r->sizes, (size_t)r->rank * sizeof(int64_t));
  memcpy(u->strides, r->strides, (size_t)r->rank * sizeof(int64_t));
  u->packed = packed;
  u->store = store;
}

void soaprt_cuda_comm_finalize(void) {
  /* Every rank's stream is idle after the barrier: no operation is in
     flight on any communicator. Members release each communicator in the
     same order (creation order is program order). */
  const char *op = "soaprt_finalize";
  if (gCommStream) {
    SOAPRT_CUDA_CHECK(cudaStreamSynchronize(gCommStream), op);
    SOAPRT_CUDA_CHECK(cudaEventDestroy(gIssuedEvent), op);
    for (int i = 0; i < TICKET_EVENTS; ++i)
      SOAPRT_CUDA_CHECK(cudaEventDestroy(gTicketEvents[i]), op);
    SOAPRT_CUDA_CHECK(cudaStreamDestroy(gCommStream), op);
    gCommStream = NULL;
  }
  free(gUnpacks);
  gUnpacks = NULL;
  gUnpackCount = gUnpackCapacity = 0;
  if (soaprt_cuda.size > 1)
    MPI_Barrier(MPI_COMM_WORLD);
  if (gWorld)
    SOAPRT_NCCL_CHECK(ncclCommDestroy(gWorld), op);
  gWorld = NULL;
  /* The MPI communicators stay until MPI_Finalize. */
  for (soaprt_group_t *g = soaprt_groups(); g; g = g->next) {
    if (g->backend)
      SOAPRT_NCCL_CHECK(ncclCommDestroy((ncclComm_t)g->backend), op);
    g->backend = NULL;
  }
}

/* The communicator of exactly `devices` (this rank is one of them): the
 * world one for 0..N-1, else the group's, made on first use (soap_setup
 * asks for every group of the program: soaprt_prepare_group). */
static ncclComm_t groupComm(const int64_t *devices, int64_t n, const char *op) {
  int world = n == soaprt_cuda.size;
  for (int64_t i = 0; world && i < n; ++i)
    world = devices[i] == i;
  if (world)
    return gWorld;
  soaprt_group_t *g = soaprt_group(devices, n, op);
  if (!g->backend)
    g->backend = createComm(g->comm, op);
  return (ncclComm_t)g->backend;
}

void soaprt_cuda_prepare_group(const int64_t *devices, int64_t n) {
  (void)groupComm(devices, n, "soaprt_prepare_group");
}

void soaprt_cuda_transfer(const soaprt_region_t *r, int64_t from, int64_t to) {
  const char *op = "soaprt_transfer";
  cudaStream_t stream = soaprt_cuda_stream(op);
  if (!gWorld)
    soaprt_fatal("%s: no communicator (one rank)", op);
  size_t bytes = (size_t)(soaprt_region_elements(r) * r->elemSize);
  int sending = soaprt_cuda.rank == from;
  char *buffer = soaprt_cuda_pack(r, sending, op);
  SOAPRT_NCCL_CHECK(ncclGroupStart(), op);
  if (sending)
    SOAPRT_NCCL_CHECK(
        ncclSend(buffer, bytes, ncclUint8, (int)to, gWorld, stream), op);
  else
    SOAPRT_NCCL_CHECK(
        ncclRecv(buffer, bytes, ncclUint8, (int)from, gWorld, stream), op);
  SOAPRT_NCCL_CHECK(ncclGroupEnd(), op);
  unpackLater(r, buffer, !sending, op);
  soaprt_cuda_after_call(op);
}

/* NCCL's type and reduction for a libsoaprt dtype and reduction. */
static void ncclTypeOf(int64_t dtype, int64_t kind, ncclDataType_t *type,
                       ncclRedOp_t *reduction, const char *op) {
  *reduction = kind == SOAPRT_SUM   ? ncclSum
               : kind == SOAPRT_MAX ? ncclMax
                                    : ncclMin;
  switch (dtype) {
  case SOAPRT_F32:
    *type = ncclFloat32;
    return;
  case SOAPRT_F64:
    *type = ncclFloat64;
    return;
  case SOAPRT_F16:
    *type = ncclFloat16;
    return;
  case SOAPRT_BF16:
    *type = ncclBfloat16;
    return;
  case SOAPRT_I32:
    *type = ncclInt32;
    return;
  case SOAPRT_I64:
    *type = ncclInt64;
    return;
  case SOAPRT_I8:
    *type = ncclInt8;
    return;
  case SOAPRT_I1:
    /* Bytes 0/1: a sum is a logical or (as the CPU back end), i.e. max. */
    *type = ncclUint8;
    if (kind == SOAPRT_SUM)
      *reduction = ncclMax;
    return;
  default:
    soaprt_fatal("%s: element type %s is not supported on the CUDA back end "
                 "(NCCL reduces f32, f64, f16, bf16, i1, i8, i32, i64)",
                 op, soaprt_dtype_npy(dtype));
  }
}

void soaprt_cuda_all_reduce(const soaprt_region_t *r, int64_t dtype,
                            int64_t kind, const int64_t *devices, int64_t n) {
  const char *op = "soaprt_all_reduce";
  cudaStream_t stream = soaprt_cuda_stream(op);
  ncclDataType_t type;
  ncclRedOp_t reduction;
  ncclTypeOf(dtype, kind, &type, &reduction, op);
  ncclComm_t comm = groupComm(devices, n, op);
  if (!comm)
    soaprt_fatal("%s: no communicator", op);
  size_t count = (size_t)soaprt_region_elements(r);
  char *buffer = soaprt_cuda_pack(r, 1, op);
  SOAPRT_NCCL_CHECK(
      ncclAllReduce(buffer, buffer, count, type, reduction, comm, stream), op);
  /* In a group (a bucket of gradients), NCCL runs it at the group's end. */
  unpackLater(r, buffer, 1, op);
  soaprt_cuda_after_call(op);
}

/* Both chunked collectives work on the region with `dim` first, packed (a
 * temporary unless that view is contiguous), where chunk i is the i-th run
 * of count = elements / n, and use NCCL's in-place forms. */
void soaprt_cuda_reduce_scatter(const soaprt_region_t *r, int64_t dtype,
                                int64_t kind, int64_t dim,
                                const int64_t *devices, int64_t n) {
  const char *op = "soaprt_reduce_scatter";
  cudaStream_t stream = soaprt_cuda_stream(op);
  ncclDataType_t type;
  ncclRedOp_t reduction;
  ncclTypeOf(dtype, kind, &type, &reduction, op);
  ncclComm_t comm = groupComm(devices, n, op);
  int64_t sizes[SOAPRT_MAX_RANK], strides[SOAPRT_MAX_RANK];
  soaprt_region_t p = soaprt_region_dim_first(r, dim, sizes, strides);
  size_t count = (size_t)(soaprt_region_elements(r) / n);
  size_t chunkBytes = count * (size_t)r->elemSize;
  int64_t i = soaprt_index_in(devices, n);
  char *buffer = soaprt_cuda_pack(&p, 1, op);
  SOAPRT_NCCL_CHECK(ncclReduceScatter(buffer, buffer + (size_t)i * chunkBytes,
                                      count, type, reduction, comm, stream),
                    op);
  unpackLater(&p, buffer, 1, op);
  soaprt_cuda_after_call(op);
}

void soaprt_cuda_all_gather(const soaprt_region_t *r, int64_t dim,
                            const int64_t *devices, int64_t n) {
  const char *op = "soaprt_all_gather";
  cudaStream_t stream = soaprt_cuda_stream(op);
  ncclComm_t comm = groupComm(devices, n, op);
  int64_t sizes[SOAPRT_MAX_RANK], strides[SOAPRT_MAX_RANK];
  soaprt_region_t p = soaprt_region_dim_first(r, dim, sizes, strides);
  size_t chunkBytes =
      (size_t)(soaprt_region_elements(r) / n) * (size_t)r->elemSize;
  int64_t i = soaprt_index_in(devices, n);
  char *buffer = soaprt_cuda_pack(&p, 1, op);
  SOAPRT_NCCL_CHECK(ncclAllGather(buffer + (size_t)i * chunkBytes, buffer,
                                  chunkBytes, ncclUint8, comm, stream),
                    op);
  unpackLater(&p, buffer, 1, op);
  soaprt_cuda_after_call(op);
}
