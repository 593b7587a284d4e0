// An LD_PRELOAD shim for `make test-wide`: the process sees WIDE_MACHINE_PROCESSORS processors
// (default 8) wherever it counts them: `sysconf` (Dispatch sizes itself by it, and so the
// cooperative pool's width), `sched_getaffinity` (Foundation's `activeProcessorCount`, which the
// tests size their threads by), and the cgroup's CPU quota files, which read as absent (`fopen`):
// FutureLib's worker pool and registration stripes take the smallest of all three
// (`CurrentProcessor.count`), so a CI container with a CPU limit would otherwise cap them below 8.
// Nothing else changes: the threads still share the real processors.
//
// Why: CI runs on a wider machine than the 2 cores this project is developed on, and a test that
// assumes how many threads run at once (or when a task resumes) fails there first. Linux only.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long wideProcessors(void) {
    const char *text = getenv("WIDE_MACHINE_PROCESSORS");
    long count = text ? atol(text) : 8;
    return count > 0 && count <= CPU_SETSIZE ? count : 8;
}

long sysconf(int name) {
    static long (*real)(int);
    if (!real) real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) return wideProcessors();
    return real(name);
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set) {
    static int (*real)(pid_t, size_t, cpu_set_t *);
    if (!real) real = (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "sched_getaffinity");
    int result = real(pid, size, set);
    if (result == 0) {
        CPU_ZERO_S(size, set);
        for (long index = 0; index < wideProcessors() && (size_t)index < size * 8; index++) CPU_SET_S(index, size, set);
    }
    return result;
}

// A cgroup's CPU quota file (v2 `cpu.max`, v1 `cpu.cfs_quota_us`): reads as if it did not exist.
static int isQuotaFile(const char *path) {
    static const char *const names[] = {"/cpu.max", "/cpu.cfs_quota_us"};
    if (!path || strncmp(path, "/sys/fs/cgroup/", 15) != 0) return 0;
    size_t length = strlen(path);
    for (size_t index = 0; index < sizeof names / sizeof *names; index++) {
        size_t nameLength = strlen(names[index]);
        if (length >= nameLength && strcmp(path + length - nameLength, names[index]) == 0) return 1;
    }
    return 0;
}

typedef FILE *(*OpenFunction)(const char *, const char *);

// Opens `path` with the C library's `name` (looked up once into `*real`), unless it is a quota file.
static FILE *openUnlessQuotaFile(OpenFunction *real, const char *name, const char *path, const char *mode) {
    if (!*real) *real = (OpenFunction)dlsym(RTLD_NEXT, name);
    if (isQuotaFile(path)) {
        errno = ENOENT;
        return NULL;
    }
    return (*real)(path, mode);
}

FILE *fopen(const char *path, const char *mode) {
    static OpenFunction real;
    return openUnlessQuotaFile(&real, "fopen", path, mode);
}

FILE *fopen64(const char *path, const char *mode) {
    static OpenFunction real;
    return openUnlessQuotaFile(&real, "fopen64", path, mode);
}
