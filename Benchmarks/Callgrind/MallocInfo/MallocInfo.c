#include "MallocInfo.h"

#if defined(__linux__)
#include <features.h>  // defines __GLIBC__ on glibc
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

size_t malloc_info_bytes_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}

size_t malloc_info_bytes_mapped(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return mallinfo2().hblkhd;
#else
    return 0;
#endif
}
