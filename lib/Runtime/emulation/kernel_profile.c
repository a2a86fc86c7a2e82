/*===- kernel_profile.c - Emulated kernels: how their accesses coalesce ---===*
 *
 * Part of libsoaprt_cuda_emu. A program compiled with `soapc --target=cuda
 * --cuda-host-emulation --cuda-emulation-profile` runs its kernels as host
 * loops (soap-cuda-emulate-kernels) and calls, for every launch, thread and
 * load or store of those kernels:
 *
 *   soaprt_emu_profile_launch(name, sites)   before the launch's loops
 *   soaprt_emu_profile_thread(block, thread) as each thread starts
 *   soaprt_emu_profile_access(site, address, bytes, is_store)
 *   soaprt_emu_profile_launch_end()          after them
 *
 * A GPU issues each load or store of a warp (32 consecutive threads of a
 * block) as one request, and the memory system serves it in 32-byte
 * sectors. The profiler does the same with the emulated threads: the k-th
 * access of a site by each lane of a warp is one request; it counts the
 * sectors the request touches against the fewest that could hold the bytes
 * it reads (ceil(distinct bytes / 32)): a warp reading 32 consecutive floats
 * needs 4 sectors, 32 floats a row apart need 32 (coalescing 12.5%), and 32
 * lanes reading one float need 1. It also counts each launch's footprint
 * (distinct sectors touched: the DRAM traffic if every sector were read
 * once).
 *
 * At exit the table, one row per launch site (kernel and source location),
 * most sectors first, goes to $SOAPRT_EMU_PROFILE (rank r > 0 of an MPI
 * job: $SOAPRT_EMU_PROFILE.r) or, when that is unset, its top rows to
 * stderr; a file that cannot be written makes the exit status 1. Not
 * thread-safe: emulated kernels run on the host thread.
 *
 *===----------------------------------------------------------------------===*/

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void soaprt_emu_profile_launch(const char *name, int64_t sites);
void soaprt_emu_profile_thread(int64_t block, int64_t thread);
void soaprt_emu_profile_access(int64_t site, int64_t address, int64_t bytes,
                               int64_t isStore);
void soaprt_emu_profile_launch_end(void);

enum { WARP = 32, SECTOR = 32, STDERR_ROWS = 15 };

typedef struct {
  const char *name;
  uint64_t launches, threads;
  uint64_t requests, sectors, idealSectors, footprint;
} KernelStats;

typedef struct {
  uint32_t site, seq, bytes;
  uint64_t address;
} Access;

static struct {
  /* Launch sites, keyed by their name's address (one string per site). */
  KernelStats *kernels;
  size_t numKernels, capKernels;
  KernelStats *current;
  int64_t sites;
  /* The warp whose accesses are being collected. */
  int64_t block, warp;
  uint32_t lane;
  uint32_t *seq; /* [WARP][sites]: accesses so far of each lane and site */
  Access *accesses;
  size_t numAccesses, capAccesses;
  /* The current launch's distinct sectors: open addressing, an entry is in
     the set when its generation is the launch's. */
  uint64_t *setKeys;
  uint32_t *setGens;
  size_t setCap, setCount;
  uint32_t generation;
  int rank, reported;
} gProfile = {.block = -1, .warp = -1};

static void *checkedRealloc(void *p, size_t bytes) {
  void *q = realloc(p, bytes);
  if (!q && bytes) {
    fprintf(stderr, "soaprt-emu: kernel profile: out of memory\n");
    exit(1);
  }
  return q;
}

/* Adds `sector` to the launch's footprint set. */
static void addToFootprint(uint64_t sector) {
  if (2 * (gProfile.setCount + 1) > gProfile.setCap) {
    size_t oldCap = gProfile.setCap;
    uint64_t *oldKeys = gProfile.setKeys;
    uint32_t *oldGens = gProfile.setGens;
    gProfile.setCap = oldCap ? 2 * oldCap : 1 << 16;
    gProfile.setKeys = checkedRealloc(NULL, gProfile.setCap * sizeof(uint64_t));
    gProfile.setGens = checkedRealloc(NULL, gProfile.setCap * sizeof(uint32_t));
    memset(gProfile.setGens, 0, gProfile.setCap * sizeof(uint32_t));
    gProfile.setCount = 0;
    for (size_t i = 0; i < oldCap; ++i)
      if (oldGens[i] == gProfile.generation)
        addToFootprint(oldKeys[i]);
    free(oldKeys);
    free(oldGens);
  }
  size_t mask = gProfile.setCap - 1;
  size_t i = (size_t)(sector * 0x9E3779B97F4A7C15ull >> 17) & mask;
  while (gProfile.setGens[i] == gProfile.generation) {
    if (gProfile.setKeys[i] == sector)
      return;
    i = (i + 1) & mask;
  }
  gProfile.setGens[i] = gProfile.generation;
  gProfile.setKeys[i] = sector;
  ++gProfile.setCount;
}

static int byRequest(const void *a, const void *b) {
  const Access *x = a, *y = b;
  if (x->site != y->site)
    return x->site < y->site ? -1 : 1;
  if (x->seq != y->seq)
    return x->seq < y->seq ? -1 : 1;
  return x->address < y->address ? -1 : x->address > y->address;
}

/* The collected warp's requests into the current kernel's counts. */
static void flushWarp(void) {
  KernelStats *k = gProfile.current;
  if (!k || !gProfile.numAccesses)
    return;
  qsort(gProfile.accesses, gProfile.numAccesses, sizeof(Access), byRequest);
  for (size_t i = 0; i < gProfile.numAccesses;) {
    size_t j = i;
    /* One request: the same site and sequence number, lanes by address. */
    uint64_t sectors = 0, distinctBytes = 0, lastSector = UINT64_MAX;
    uint64_t coveredTo = 0; /* distinct bytes: merged [address, +bytes) */
    for (; j < gProfile.numAccesses &&
           gProfile.accesses[j].site == gProfile.accesses[i].site &&
           gProfile.accesses[j].seq == gProfile.accesses[i].seq;
         ++j) {
      const Access *a = &gProfile.accesses[j];
      uint64_t end = a->address + a->bytes;
      uint64_t from = a->address > coveredTo ? a->address : coveredTo;
      if (end > from)
        distinctBytes += end - from;
      if (end > coveredTo)
        coveredTo = end;
      /* Sorted by address: a sector repeats only right after itself. */
      for (uint64_t s = a->address / SECTOR; s <= (end - 1) / SECTOR; ++s)
        if (s != lastSector) {
          ++sectors;
          addToFootprint(s);
          lastSector = s;
        }
    }
    k->requests += 1;
    k->sectors += sectors;
    k->idealSectors += (distinctBytes + SECTOR - 1) / SECTOR;
    i = j;
  }
  gProfile.numAccesses = 0;
}

static int bySectors(const void *a, const void *b) {
  const KernelStats *x = a, *y = b;
  return x->sectors > y->sectors ? -1 : x->sectors < y->sectors;
}

static void writeRow(FILE *out, const KernelStats *k) {
  fprintf(out, "%llu\t%llu\t%.2f\t%.1f%%\t%llu\t%llu\t%llu\t%s\n",
          (unsigned long long)k->sectors, (unsigned long long)k->requests,
          k->requests ? (double)k->sectors / (double)k->requests : 0.0,
          k->sectors ? 100.0 * (double)k->idealSectors / (double)k->sectors
                     : 100.0,
          (unsigned long long)k->footprint, (unsigned long long)k->launches,
          (unsigned long long)k->threads, k->name);
}

static void report(void) {
  if (gProfile.reported)
    return;
  gProfile.reported = 1;
  qsort(gProfile.kernels, gProfile.numKernels, sizeof(KernelStats), bySectors);
  KernelStats total = {.name = "(all kernels)"};
  for (size_t i = 0; i < gProfile.numKernels; ++i) {
    const KernelStats *k = &gProfile.kernels[i];
    total.launches += k->launches;
    total.threads += k->threads;
    total.requests += k->requests;
    total.sectors += k->sectors;
    total.idealSectors += k->idealSectors;
    total.footprint += k->footprint;
  }
  const char *path = getenv("SOAPRT_EMU_PROFILE");
  FILE *out = stderr;
  char *name = NULL;
  if (path && *path) {
    name = malloc(strlen(path) + 16);
    if (!name)
      return;
    if (gProfile.rank > 0)
      sprintf(name, "%s.%d", path, gProfile.rank);
    else
      strcpy(name, path);
    out = fopen(name, "w");
    if (!out) {
      /* At exit: the status is the only way left to say it failed. */
      fprintf(stderr, "soaprt-emu: cannot write the kernel profile to %s\n",
              name);
      free(name);
      _exit(1);
    }
  }
  fprintf(out,
          "# soaprt-emu kernel access profile, rank %d: %zu launch sites. "
          "sectors: 32-byte sectors of the warp-wide requests; coalescing: "
          "fewest sectors that hold the bytes / sectors; footprint: "
          "distinct sectors of each launch, summed\n",
          gProfile.rank, gProfile.numKernels);
  fprintf(out, "sectors\trequests\tsectors/request\tcoalescing\t"
               "footprint\tlaunches\tthreads\tkernel\n");
  writeRow(out, &total);
  size_t rows = out == stderr && gProfile.numKernels > STDERR_ROWS
                    ? STDERR_ROWS
                    : gProfile.numKernels;
  for (size_t i = 0; i < rows; ++i)
    writeRow(out, &gProfile.kernels[i]);
  if (out != stderr) {
    fclose(out);
    fprintf(stderr, "soaprt-emu: kernel access profile written to %s\n", name);
  }
  free(name);
}

void soaprt_emu_profile_launch(const char *name, int64_t sites) {
  if (!gProfile.capKernels) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
      MPI_Comm_rank(MPI_COMM_WORLD, &gProfile.rank);
    atexit(report);
  }
  KernelStats *k = NULL;
  for (size_t i = gProfile.numKernels; i-- > 0;)
    if (gProfile.kernels[i].name == name) {
      k = &gProfile.kernels[i];
      break;
    }
  if (!k) {
    if (gProfile.numKernels == gProfile.capKernels) {
      gProfile.capKernels = gProfile.capKernels ? 2 * gProfile.capKernels : 256;
      gProfile.kernels = checkedRealloc(
          gProfile.kernels, gProfile.capKernels * sizeof(KernelStats));
    }
    k = &gProfile.kernels[gProfile.numKernels++];
    memset(k, 0, sizeof(*k));
    k->name = name;
  }
  k->launches += 1;
  gProfile.current = k;
  gProfile.sites = sites;
  gProfile.seq = checkedRealloc(gProfile.seq,
                                (size_t)(sites ? sites : 1) * WARP *
                                    sizeof(uint32_t));
  gProfile.block = gProfile.warp = -1;
  gProfile.numAccesses = 0;
  gProfile.setCount = 0;
  if (++gProfile.generation == 0) { /* wrapped: clear the old generations */
    if (gProfile.setGens)
      memset(gProfile.setGens, 0, gProfile.setCap * sizeof(uint32_t));
    gProfile.generation = 1;
  }
}

void soaprt_emu_profile_thread(int64_t block, int64_t thread) {
  int64_t warp = thread / WARP;
  if (block != gProfile.block || warp != gProfile.warp) {
    flushWarp();
    gProfile.block = block;
    gProfile.warp = warp;
    memset(gProfile.seq, 0,
           (size_t)(gProfile.sites ? gProfile.sites : 1) * WARP *
               sizeof(uint32_t));
  }
  gProfile.lane = (uint32_t)(thread % WARP);
  if (gProfile.current)
    gProfile.current->threads += 1;
}

void soaprt_emu_profile_access(int64_t site, int64_t address, int64_t bytes,
                               int64_t isStore) {
  (void)isStore; /* loads and stores are requests alike */
  if (!gProfile.current || site < 0 || site >= gProfile.sites || bytes <= 0)
    return;
  if (gProfile.numAccesses == gProfile.capAccesses) {
    gProfile.capAccesses = gProfile.capAccesses ? 2 * gProfile.capAccesses
                                                : 4096;
    gProfile.accesses = checkedRealloc(
        gProfile.accesses, gProfile.capAccesses * sizeof(Access));
  }
  uint32_t *seq = &gProfile.seq[(size_t)gProfile.lane * gProfile.sites + site];
  Access *a = &gProfile.accesses[gProfile.numAccesses++];
  a->site = (uint32_t)site;
  a->seq = (*seq)++;
  a->bytes = (uint32_t)bytes;
  a->address = (uint64_t)address;
}

void soaprt_emu_profile_launch_end(void) {
  flushWarp();
  if (gProfile.current)
    gProfile.current->footprint += gProfile.setCount;
  gProfile.current = NULL;
}
