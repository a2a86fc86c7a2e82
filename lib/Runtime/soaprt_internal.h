/*===- soaprt_internal.h - What soaprt_main.c needs from soaprt.c ---------===*/

#ifndef SOAP_RUNTIME_SOAPRT_INTERNAL_H
#define SOAP_RUNTIME_SOAPRT_INTERNAL_H

#include "soap/Runtime/soaprt.h"

#include <stddef.h>

#define SOAPRT_MAX_RANK 16

/* A bound input or output: a contiguous buffer of `rank` dims. */
typedef struct soaprt_binding {
  int bound;
  int64_t dtype;
  int64_t rank;
  int64_t sizes[SOAPRT_MAX_RANK];
  char *data;       /* inputs: the program's buffer; outputs: a copy */
  int64_t capacity; /* outputs: bytes allocated for the copy */
} soaprt_binding_t;

soaprt_binding_t *soaprt_input_binding(int64_t index);
soaprt_binding_t *soaprt_output_binding(int64_t index);
int64_t soaprt_num_elements(const soaprt_binding_t *b);

/* Collectives over all ranks (no-ops with one rank / without MPI). */
void soaprt_bcast(void *data, int64_t bytes, int root);
void soaprt_barrier(void);
/* 1 on every rank if `flag` is nonzero on any rank. */
int soaprt_any(int flag);

#endif /* SOAP_RUNTIME_SOAPRT_INTERNAL_H */
