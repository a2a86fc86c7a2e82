/*===- soaprt_comm.c - Communication: starts, tickets, waits, deferral ----===*
 *
 * The public communication functions of soaprt.h. A start checks its
 * arguments and, unless this rank takes no part, gets the next ticket and
 * starts the operation: soaprt.c runs it (soaprt_run_transfer,
 * soaprt_run_all_reduce, _reduce_scatter, _all_gather), on the CPU back end
 * at once, on the CUDA back end
 * on the rank's communication stream behind everything issued so far
 * (soaprt_cuda_comm_begin / _end), where it overlaps the computation that
 * follows until soaprt_comm_wait(ticket) makes later work wait for it.
 *
 * Deferred mode (SOAPRT_COMM_DEFER=1; the default of the CUDA host
 * emulation, SOAPRT_COMM_DEFER_DEFAULT): a start only records the operation
 * (a copy of the region's descriptor and of the device list) and a wait runs
 * the recorded operations up to its ticket, in order, then waits as above.
 * That is a schedule the asynchronous contract allows, and one in which
 * compiled code that touches a region before its wait computes with stale
 * data: the emulated diff tests check the compiler's waits this way.
 *
 *===----------------------------------------------------------------------===*/

#include "soaprt_internal.h"

#include <stdlib.h>
#include <string.h>

#ifdef SOAPRT_HAVE_CUDA
#include "soaprt_cuda_internal.h"
#endif

#ifndef SOAPRT_COMM_DEFER_DEFAULT
#define SOAPRT_COMM_DEFER_DEFAULT 0
#endif

enum {
  TRANSFER,
  ALL_REDUCE,
  REDUCE_SCATTER,
  ALL_GATHER,
  GROUP_BEGIN,
  GROUP_END
};

/* A started operation, recorded in deferred mode. */
typedef struct pending {
  int what;
  int64_t ticket; /* 0 for group markers */
  soaprt_region_t region;
  int64_t sizes[SOAPRT_MAX_RANK], strides[SOAPRT_MAX_RANK];
  int64_t dtype, kind, from, to, n, dim;
  int64_t *devices;
} pending_t;

static struct {
  int configured, deferred;
  int64_t issued;   /* last ticket handed out */
  int64_t waited;   /* every ticket up to this one has been waited for */
  int groupDepth;   /* open soaprt_comm_group_begin calls */
  int64_t groupFirst; /* first ticket of the open group (0: none yet) */
  pending_t *queue; /* deferred mode: queue[head, count) not yet run */
  size_t head, count, capacity;
} gComm;

static int deferred(void) {
  if (!gComm.configured) {
    const char *env = getenv("SOAPRT_COMM_DEFER");
    gComm.deferred = env && *env ? strcmp(env, "0") != 0
                                 : SOAPRT_COMM_DEFER_DEFAULT;
    gComm.configured = 1;
  }
  return gComm.deferred;
}

/* --- Running an operation now -------------------------------------------- */

/* Before running operation `ticket`: inside a group, the group holds the
 * communication stream (and notes its first ticket); else take it. */
static void begin(int64_t ticket) {
  if (gComm.groupDepth > 0) {
    if (gComm.groupFirst == 0)
      gComm.groupFirst = ticket;
    return;
  }
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_comm_begin();
#endif
}

static void end(int64_t ticket) {
#ifdef SOAPRT_HAVE_CUDA
  if (gComm.groupDepth == 0)
    soaprt_cuda_comm_end(ticket, ticket);
#else
  (void)ticket;
#endif
}

/* One rank has no communication stream (and nothing to group). */
static void runGroupBegin(void) {
  if (gComm.groupDepth++ == 0) {
    gComm.groupFirst = 0;
#ifdef SOAPRT_HAVE_CUDA
    if (soaprt_size() > 1) {
      soaprt_cuda_comm_begin();
      soaprt_cuda_group_begin();
    }
#endif
  }
}

static void runGroupEnd(int64_t last) {
  if (--gComm.groupDepth > 0)
    return;
#ifdef SOAPRT_HAVE_CUDA
  if (soaprt_size() > 1) {
    soaprt_cuda_group_end();
    soaprt_cuda_comm_end(gComm.groupFirst, last);
  }
#else
  (void)last;
#endif
}

static void run(const pending_t *p) {
  if (p->what == GROUP_BEGIN) {
    runGroupBegin();
    return;
  }
  if (p->what == GROUP_END) {
    runGroupEnd(p->ticket);
    return;
  }
  begin(p->ticket);
  if (p->what == TRANSFER)
    soaprt_run_transfer(&p->region, p->from, p->to);
  else if (p->what == ALL_REDUCE)
    soaprt_run_all_reduce(&p->region, p->dtype, p->kind, p->devices, p->n);
  else if (p->what == REDUCE_SCATTER)
    soaprt_run_reduce_scatter(&p->region, p->dtype, p->kind, p->dim, p->devices,
                              p->n);
  else
    soaprt_run_all_gather(&p->region, p->dtype, p->dim, p->devices, p->n);
  end(p->ticket);
}

/* --- Deferred mode -------------------------------------------------------- */

static pending_t *record(int what, int64_t ticket) {
  if (gComm.head > 0 && gComm.head == gComm.count)
    gComm.head = gComm.count = 0;
  if (gComm.count == gComm.capacity) {
    size_t capacity = gComm.capacity ? 2 * gComm.capacity : 64;
    pending_t *grown =
        (pending_t *)realloc(gComm.queue, capacity * sizeof(pending_t));
    if (!grown)
      soaprt_fatal("soaprt_comm: out of memory");
    gComm.queue = grown;
    gComm.capacity = capacity;
    /* Each recorded region points at its own copy of the sizes and
       strides, which moved with the queue. */
    for (size_t i = gComm.head; i < gComm.count; ++i) {
      gComm.queue[i].region.sizes = gComm.queue[i].sizes;
      gComm.queue[i].region.strides = gComm.queue[i].strides;
    }
  }
  pending_t *p = &gComm.queue[gComm.count++];
  memset(p, 0, sizeof(*p));
  p->what = what;
  p->ticket = ticket;
  return p;
}

/* An operation on the region `m` of `dtype` elements (its sizes and strides
 * copied into `p`); 0 when the region is empty (nothing to do). */
static int describe(pending_t *p, int what, soaprt_unranked_memref_t *m,
                    int64_t dtype, const char *who) {
  soaprt_region_t r = soaprt_view(m, soaprt_checked_dtype_size(dtype, who));
  if (soaprt_region_elements(&r) == 0)
    return 0;
  if (r.rank > SOAPRT_MAX_RANK)
    soaprt_fatal("%s: regions of rank %lld are not supported", who,
                 (long long)r.rank);
  memset(p, 0, sizeof(*p));
  p->what = what;
  p->dtype = dtype;
  p->region = r;
  memcpy(p->sizes, r.sizes, (size_t)r.rank * sizeof(int64_t));
  memcpy(p->strides, r.strides, (size_t)r.rank * sizeof(int64_t));
  p->region.sizes = p->sizes;
  p->region.strides = p->strides;
  return 1;
}

/* Gives `p` the next ticket and runs it now, or in deferred mode records a
 * copy (with its own device list) to run at a wait. */
static int64_t start(pending_t *p) {
  p->ticket = ++gComm.issued;
  if (!deferred()) {
    run(p);
    return p->ticket;
  }
  pending_t *q = record(p->what, p->ticket);
  *q = *p;
  q->region.sizes = q->sizes;
  q->region.strides = q->strides;
  if (p->devices) {
    q->devices = (int64_t *)malloc((size_t)p->n * sizeof(int64_t));
    if (!q->devices)
      soaprt_fatal("soaprt_comm: out of memory");
    memcpy(q->devices, p->devices, (size_t)p->n * sizeof(int64_t));
  }
  return q->ticket;
}

/* Runs the recorded operations up to `ticket` (and to the end of a group
 * they open). The queue may grow while it runs: nothing here starts more. */
static void runRecorded(int64_t ticket) {
  int depth = 0;
  while (gComm.head < gComm.count) {
    pending_t *p = &gComm.queue[gComm.head];
    int isOperation = p->what != GROUP_BEGIN && p->what != GROUP_END;
    if (isOperation && p->ticket > ticket && depth == 0)
      break;
    ++gComm.head;
    depth += p->what == GROUP_BEGIN ? 1 : p->what == GROUP_END ? -1 : 0;
    run(p);
    free(p->devices);
    p->devices = NULL;
  }
}

/* --- The public functions ------------------------------------------------ */

int64_t soaprt_transfer_start(soaprt_unranked_memref_t *m, int64_t dtype,
                              int64_t from, int64_t to) {
  const char *who = "soaprt_transfer";
  soaprt_check_device(from, who);
  soaprt_check_device(to, who);
  int64_t rank = soaprt_rank();
  if (from == to || (rank != from && rank != to))
    return 0;
  pending_t op;
  if (!describe(&op, TRANSFER, m, dtype, who))
    return 0;
  op.from = from;
  op.to = to;
  return start(&op);
}

int64_t soaprt_all_reduce_start(soaprt_unranked_memref_t *m, int64_t dtype,
                                int64_t kind,
                                soaprt_unranked_memref_t *devicesRef) {
  const char *who = "soaprt_all_reduce";
  int64_t devices[1024];
  int member = 0;
  int64_t n = soaprt_read_devices(devicesRef, devices, &member, who);
  if (kind < SOAPRT_SUM || kind > SOAPRT_MIN)
    soaprt_fatal("%s: unknown reduction %lld", who, (long long)kind);
  if (!member || n <= 1)
    return 0;
  pending_t op;
  if (!describe(&op, ALL_REDUCE, m, dtype, who))
    return 0;
  op.kind = kind;
  op.n = n;
  op.devices = devices;
  return start(&op);
}

/* A collective over chunks of the region along `dim`: fatal unless `dim`
 * is one of the region's and the devices cut it into equal chunks. */
static int64_t chunkedStart(pending_t *op, int what,
                            soaprt_unranked_memref_t *m, int64_t dtype,
                            int64_t kind, int64_t dim,
                            soaprt_unranked_memref_t *devicesRef,
                            const char *who) {
  int64_t devices[1024];
  int member = 0;
  int64_t n = soaprt_read_devices(devicesRef, devices, &member, who);
  if (kind < SOAPRT_SUM || kind > SOAPRT_MIN)
    soaprt_fatal("%s: unknown reduction %lld", who, (long long)kind);
  if (!member || n <= 1)
    return 0;
  if (!describe(op, what, m, dtype, who))
    return 0;
  if (dim < 0 || dim >= op->region.rank)
    soaprt_fatal("%s: dimension %lld of a region of rank %lld", who,
                 (long long)dim, (long long)op->region.rank);
  if (op->region.sizes[dim] % n != 0)
    soaprt_fatal("%s: %lld elements along dimension %lld do not split into "
                 "%lld equal chunks",
                 who, (long long)op->region.sizes[dim], (long long)dim,
                 (long long)n);
  op->kind = kind;
  op->dim = dim;
  op->n = n;
  op->devices = devices;
  return start(op);
}

int64_t soaprt_reduce_scatter_start(soaprt_unranked_memref_t *m, int64_t dtype,
                                    int64_t kind, int64_t dim,
                                    soaprt_unranked_memref_t *devices) {
  pending_t op;
  return chunkedStart(&op, REDUCE_SCATTER, m, dtype, kind, dim, devices,
                      "soaprt_reduce_scatter");
}

int64_t soaprt_all_gather_start(soaprt_unranked_memref_t *m, int64_t dtype,
                                int64_t dim,
                                soaprt_unranked_memref_t *devices) {
  pending_t op;
  return chunkedStart(&op, ALL_GATHER, m, dtype, SOAPRT_SUM, dim, devices,
                      "soaprt_all_gather");
}

void soaprt_comm_wait(int64_t ticket) {
  if (ticket <= 0 || ticket <= gComm.waited)
    return;
  if (ticket > gComm.issued)
    soaprt_fatal("soaprt_comm_wait: ticket %lld was never handed out (the "
                 "last is %lld)",
                 (long long)ticket, (long long)gComm.issued);
  if (gComm.groupDepth > 0)
    soaprt_fatal("soaprt_comm_wait: inside a communication group");
  if (deferred())
    runRecorded(ticket);
#ifdef SOAPRT_HAVE_CUDA
  soaprt_cuda_comm_wait(ticket);
#endif
  gComm.waited = ticket;
}

void soaprt_comm_group_begin(void) {
  if (deferred()) {
    ++gComm.groupDepth;
    (void)record(GROUP_BEGIN, 0);
    return;
  }
  runGroupBegin();
}

void soaprt_comm_group_end(void) {
  if (gComm.groupDepth == 0)
    soaprt_fatal("soaprt_comm_group_end: no group is open");
  if (deferred()) {
    --gComm.groupDepth;
    /* The group's last ticket, for the events of its operations. */
    (void)record(GROUP_END, gComm.issued);
    return;
  }
  runGroupEnd(gComm.issued);
}

void soaprt_comm_drain(void) {
  if (gComm.groupDepth > 0)
    soaprt_fatal("soaprt_finalize: a communication group is still open");
  soaprt_comm_wait(gComm.issued);
  free(gComm.queue);
  gComm.queue = NULL;
  gComm.head = gComm.count = gComm.capacity = 0;
}

/* The blocking forms: a start and its wait. */
void soaprt_transfer(soaprt_unranked_memref_t *m, int64_t dtype, int64_t from,
                     int64_t to) {
  soaprt_comm_wait(soaprt_transfer_start(m, dtype, from, to));
}

void soaprt_all_reduce(soaprt_unranked_memref_t *m, int64_t dtype, int64_t kind,
                       soaprt_unranked_memref_t *devices) {
  soaprt_comm_wait(soaprt_all_reduce_start(m, dtype, kind, devices));
}

void soaprt_reduce_scatter(soaprt_unranked_memref_t *m, int64_t dtype,
                           int64_t kind, int64_t dim,
                           soaprt_unranked_memref_t *devices) {
  soaprt_comm_wait(soaprt_reduce_scatter_start(m, dtype, kind, dim, devices));
}

void soaprt_all_gather(soaprt_unranked_memref_t *m, int64_t dtype, int64_t dim,
                       soaprt_unranked_memref_t *devices) {
  soaprt_comm_wait(soaprt_all_gather_start(m, dtype, dim, devices));
}
