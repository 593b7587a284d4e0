// `make bench-http`'s allocation counter: preloaded (LD_PRELOAD) into a server, it counts the heap allocations the
// process makes (malloc, calloc, realloc of nothing, the aligned forms) and, on SIGUSR1, writes the count so far
// as one decimal line to the file named by BENCH_HTTP_MALLOC_FILE. glibc only: it forwards to glibc's own
// `__libc_*` entry points, so it needs no dlsym (which itself allocates).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static uint64_t allocations;
static const char *path;

static inline void count(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    count();
    return __libc_calloc(n, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

// Async-signal-safe: formats by hand and writes with open/write/close.
static void report(int signal) {
    (void)signal;
    if (path == NULL) return;
    char text[32];
    int end = sizeof text;
    text[--end] = '\n';
    uint64_t value = __atomic_load_n(&allocations, __ATOMIC_RELAXED);
    do {
        text[--end] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    int saved = errno;
    int file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file >= 0) {
        ssize_t written = write(file, text + end, sizeof text - end);
        (void)written;
        close(file);
    }
    errno = saved;
}

__attribute__((constructor)) static void install(void) {
    path = getenv("BENCH_HTTP_MALLOC_FILE");
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &action, NULL);
}
