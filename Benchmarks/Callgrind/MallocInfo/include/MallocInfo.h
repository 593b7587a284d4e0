// Heap bytes in use as glibc's malloc counts them (`mallinfo2().uordblks`): what was requested, rounded up to
// malloc's chunk sizes. The Glibc module of Swift does not export <malloc.h>, hence this C shim. 0 elsewhere.
#ifndef MALLOC_INFO_H
#define MALLOC_INFO_H

#include <stddef.h>

size_t malloc_info_bytes_in_use(void);

#endif
