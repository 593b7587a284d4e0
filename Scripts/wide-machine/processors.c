// An LD_PRELOAD shim for `make test-wide`: the process sees WIDE_MACHINE_PROCESSORS processors
// (default 8) wherever it counts them: `sysconf` (what FutureLib's worker pool, its registration
// stripes and Dispatch size themselves by, and so the cooperative pool's width) and
// `sched_getaffinity` (Foundation's `activeProcessorCount`, which the tests size their threads by).
// Nothing else changes: the threads still share the real processors.
//
// Why: CI runs on a wider machine than the 2 cores this project is developed on, and a test that
// assumes how many threads run at once (or when a task resumes) fails there first. Linux only.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
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
