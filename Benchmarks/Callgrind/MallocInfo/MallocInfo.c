#include "MallocInfo.h"

#if defined(__linux__)
#include <features.h>  // defines __GLIBC__ on glibc
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
size_t malloc_info_bytes_in_use(void) { return mallinfo2().uordblks; }
size_t malloc_info_bytes_mapped(void) { return mallinfo2().hblkhd; }
#else
size_t malloc_info_bytes_in_use(void) { return 0; }
size_t malloc_info_bytes_mapped(void) { return 0; }
#endif
