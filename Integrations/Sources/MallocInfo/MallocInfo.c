#include "MallocInfo.h"

#if defined(__linux__)
#include <features.h>  // defines __GLIBC__ on glibc
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
size_t malloc_info_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
size_t malloc_info_bytes_free(void) { return mallinfo2().fordblks; }
int malloc_info_trim(void) { return malloc_trim(0); }
#else
size_t malloc_info_bytes_in_use(void) { return 0; }
size_t malloc_info_bytes_free(void) { return 0; }
int malloc_info_trim(void) { return 0; }
#endif
