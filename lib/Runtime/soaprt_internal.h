/*===- soaprt_internal.h - What soaprt_main.c needs from soaprt.c ---------===*/

#ifndef SOAP_RUNTIME_SOAPRT_INTERNAL_H
#define SOAP_RUNTIME_SOAPRT_INTERNAL_H

#include "soap/Runtime/soaprt.h"

#include <stddef.h>

#define SOAPRT_MAX_RANK 16
#define SOAPRT_MAX_BINDINGS 4096

/* A bound input or output: a contiguous buffer of `rank` dims. */
typedef struct soaprt_binding {
  int bound;
  int64_t dtype;
  int64_t rank;
  int64_t sizes[SOAPRT_MAX_RANK];
  /* Inputs: the buffer holds the region [offsets, offsets + sizes) of an
     input of shape `whole` (soaprt_input_region); without one, all of it. */
  int hasRegion;
  int64_t whole[SOAPRT_MAX_RANK];
  int64_t offsets[SOAPRT_MAX_RANK];
  char *data;       /* inputs: the program's buffer (host); outputs: a copy */
  int64_t capacity; /* outputs: bytes allocated for the copy */
  /* CUDA back end, inputs only: the device copy (soaprt_cuda_input), whether
     it holds the data yet, and whether `data` is a host shadow the runtime
     allocated because the program bound a device buffer. */
  void *device;
  int uploaded;
  int ownsData;
  /* Inputs: written by soaprt_update_input (on every rank alike), and, on
     the CUDA back end, whether `device` is newer than `data`. */
  int updated;
  int deviceNewer;
  /* Inputs updated in place: where each rank's valid parts are
     (soaprt_input_parts: per part its rank, offsets and sizes; malloc'ed),
     or none. */
  int64_t *parts;
  int64_t numPartValues;
  /* Inputs: the whole initial value (soaprt_input_initial: the program's
     constant, host memory), or NULL. */
  const char *initial;
  /* Inputs: where --random-inputs draws the values from
     (soaprt_input_random_range), when the program says. */
  int hasRandomRange;
  double randomLow, randomHigh;
} soaprt_binding_t;

soaprt_binding_t *soaprt_input_binding(int64_t index);
soaprt_binding_t *soaprt_output_binding(int64_t index);
int64_t soaprt_num_elements(const soaprt_binding_t *b);
/* Collective: on rank 0, a malloc'ed buffer holding the whole of input
 * `index` assembled from every rank's part (the parts of an updated input
 * as they are now); NULL on the other ranks. */
char *soaprt_gather_input(int64_t index);

/* Collectives over all ranks (no-ops with one rank / without MPI). */
void soaprt_bcast(void *data, int64_t bytes, int root);
void soaprt_barrier(void);
/* 1 on every rank if `flag` is nonzero on any rank. */
int soaprt_any(int flag);
/* The largest `value` over all ranks. */
int64_t soaprt_max_over_ranks(int64_t value);

/* Peak bytes of device memory the program allocated on this rank (tensors,
   inputs, constants, library workspaces); -1 on the CPU back end. */
int64_t soaprt_device_peak_bytes(void);
/* Starts the peak over again from what is allocated now (no-op on the CPU
   back end). */
void soaprt_device_reset_peak(void);
/* Device memory the libraries hold now as workspace (cuBLAS's fixed one and
   cuDNN's shared one), included in the peak; 0 on the CPU back end. */
int64_t soaprt_device_workspace_bytes(void);

#ifdef SOAPRT_HAVE_MPI
#include <mpi.h>
/* A device group's MPI communicator (exactly the listed world ranks, in list
 * order), made by its members (only they call soaprt_group) the first time
 * and cached; `backend` holds a back end's own communicator on top (NCCL),
 * NULL until it sets it. Members must meet their groups in the same order. */
typedef struct soaprt_group {
  int64_t size;
  int64_t *devices;
  MPI_Comm comm;
  void *backend;
  struct soaprt_group *next; /* creation order */
} soaprt_group_t;
soaprt_group_t *soaprt_group(const int64_t *devices, int64_t n,
                             const char *op);
/* The first group made (then ->next), or NULL. */
soaprt_group_t *soaprt_groups(void);
#endif

/* A strided view: `rank` dims of `sizes` elements, `strides` in elements. */
typedef struct soaprt_region {
  char *base; /* first element */
  int64_t rank;
  const int64_t *sizes;
  const int64_t *strides; /* elements */
  int64_t elemSize;
} soaprt_region_t;

/* --- Communication (soaprt.c runs it, soaprt_comm.c starts and waits) --- */
/* Fatal unless 0 <= device < ranks. */
void soaprt_check_device(int64_t device, const char *who);
/* Bytes per element of `dtype`; fatal if unknown. */
int64_t soaprt_checked_dtype_size(int64_t dtype, const char *who);
/* The device list of a group (at most 1024, each checked) into `devices`;
 * returns its length and sets `member` if this rank is in it. */
int64_t soaprt_read_devices(soaprt_unranked_memref_t *devicesRef,
                            int64_t devices[1024], int *member,
                            const char *who);
/* Run now (blocking on the CPU back end; on the current stream of the CUDA
 * one): this rank is `from` or `to` (from != to) / one of `devices` (n > 1),
 * and the region is not empty. */
void soaprt_run_transfer(const soaprt_region_t *r, int64_t from, int64_t to);
void soaprt_run_all_reduce(const soaprt_region_t *r, int64_t dtype,
                           int64_t kind, const int64_t *devices, int64_t n);
/* The region cut along `dim` into n equal chunks, chunk i for devices[i]
 * (the callers checked that they divide it). */
void soaprt_run_reduce_scatter(const soaprt_region_t *r, int64_t dtype,
                               int64_t kind, int64_t dim,
                               const int64_t *devices, int64_t n);
void soaprt_run_all_gather(const soaprt_region_t *r, int64_t dtype, int64_t dim,
                           const int64_t *devices, int64_t n);
/* The region with `dim` moved to the front (sizes and strides written to
 * the arrays given): packed row-major, chunk i along `dim` is then the i-th
 * run of elements/n. */
soaprt_region_t soaprt_region_dim_first(const soaprt_region_t *r, int64_t dim,
                                        int64_t *sizes, int64_t *strides);
/* Chunk i of n of a soaprt_region_dim_first view (sizes written to
 * `sizes`). */
soaprt_region_t soaprt_region_chunk(const soaprt_region_t *r, int64_t n,
                                    int64_t i, int64_t *sizes);
/* This rank's index in a device list (-1 when not in it). */
int64_t soaprt_index_in(const int64_t *devices, int64_t n);
/* Runs every started operation and waits for it (soaprt_finalize). */
void soaprt_comm_drain(void);

soaprt_region_t soaprt_view(const soaprt_unranked_memref_t *m,
                            int64_t elemSize);
int64_t soaprt_region_elements(const soaprt_region_t *r);
/* Row-major contiguous (dims of size 1 may have any stride). */
int soaprt_region_contiguous(const soaprt_region_t *r);
/* Copies between a strided region and a packed row-major buffer of its
 * elements (toPacked: gather; else scatter). The host back end's (the CUDA
 * back end copies on the device: soaprt_cuda_copy_region). */
void soaprt_copy_region(const soaprt_region_t *r, char *packed, int toPacked);

#endif /* SOAP_RUNTIME_SOAPRT_INTERNAL_H */
