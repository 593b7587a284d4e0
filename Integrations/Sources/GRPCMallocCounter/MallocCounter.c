// See include/MallocCounter.h. While counting is off, each wrapper costs one relaxed load of a flag that no one
// writes, and a call: the same for FutureLib and its peer, which alternate in one process.
#include "MallocCounter.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <errno.h>
#include <stdatomic.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_int counting;
static atomic_uint_fast64_t allocations;

// Tracing (GRPC_MALLOC_TRACE=<file>, read by malloc_counter_start): each allocation counted also writes its call
// stack, as hexadecimal return addresses on one line, to <file>; the process's mappings go to <file>.maps, so that
// Scripts/malloc-trace-report.py can name the frames. For finding where allocations go, never while timing.
static int trace_fd = -1;
static _Thread_local int tracing_here;

static void trace_one(void) {
    if (tracing_here) return;  // backtrace() may allocate on its first call
    tracing_here = 1;
    void *frames[24];
    int count = backtrace(frames, 24);
    char line[24 * 19 + 2];
    size_t length = 0;
    for (int index = 0; index < count; index++) {
        length += (size_t)snprintf(line + length, sizeof line - length, "%lx ", (unsigned long)frames[index]);
    }
    line[length++] = '\n';
    (void)!write(trace_fd, line, length);
    tracing_here = 0;
}

static inline void count_one(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        if (trace_fd >= 0) trace_one();
    }
}

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) count_one();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

static void trace_open(void) {
    const char *path = getenv("GRPC_MALLOC_TRACE");
    if (path == NULL || trace_fd >= 0) return;
    char maps_path[4096];
    snprintf(maps_path, sizeof maps_path, "%s.maps", path);
    int maps_out = open(maps_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int maps_in = open("/proc/self/maps", O_RDONLY);
    char buffer[4096];
    ssize_t read_count;
    while (maps_in >= 0 && maps_out >= 0 && (read_count = read(maps_in, buffer, sizeof buffer)) > 0) {
        (void)!write(maps_out, buffer, (size_t)read_count);
    }
    if (maps_in >= 0) close(maps_in);
    if (maps_out >= 0) close(maps_out);
    trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
}

void malloc_counter_start(void) {
    trace_open();
    atomic_store(&allocations, 0);
    atomic_store(&counting, 1);
}

uint64_t malloc_counter_stop(void) {
    atomic_store(&counting, 0);
    return atomic_load(&allocations);
}

int malloc_counter_is_available(void) { return 1; }

#else

void malloc_counter_start(void) {}
uint64_t malloc_counter_stop(void) { return 0; }
int malloc_counter_is_available(void) { return 0; }

#endif
