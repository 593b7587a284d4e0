// Counts the calls to `malloc` and its relatives made by the whole process while counting is on, for
// GRPCCancellationBenchmark's allocations per call (a copy of Benchmarks/Allocations' MallocCounter: the packages
// share no target). The benchmark's executable defines `malloc`, `calloc`, `realloc`, `free`,
// `posix_memalign`, `aligned_alloc` and `memalign` itself (MallocCounter.c), so every library in the process, the
// Swift runtime included, calls these, which forward to glibc's own (`__libc_malloc`, …). Linux (glibc) only;
// elsewhere nothing is interposed and the counts stay 0.
#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#include <stdint.h>

/// Resets the counters and starts counting; with `GRPC_MALLOC_TRACE=<file>` in the environment, also writes the
/// call stack of each allocation counted to `<file>` (Scripts/malloc-trace-report.py names and counts them). Not meant to overlap with timing: counting costs an atomic add per
/// allocation, on a line that every thread shares.
void malloc_counter_start(void);

/// Stops counting and returns the number of allocations (malloc, calloc, realloc of nothing, the aligned forms)
/// since `malloc_counter_start()`.
uint64_t malloc_counter_stop(void);

/// Whether this build interposes `malloc` (1) or counts nothing (0).
int malloc_counter_is_available(void);

#endif
