// Heap bytes in use as glibc's malloc counts them (`mallinfo2().uordblks`): what was requested, rounded up to
// malloc's chunk sizes. The Glibc module of Swift does not export <malloc.h>, hence this C shim. 0 elsewhere.
#ifndef MALLOC_INFO_H
#define MALLOC_INFO_H

#include <stddef.h>

size_t malloc_info_bytes_in_use(void);

// Bytes in the chunks glibc maps apart for large blocks (`mallinfo2().hblkhd`, 128 KiB and up by default), which
// `uordblks` leaves out: a large array's storage. 0 elsewhere.
size_t malloc_info_bytes_mapped(void);

#endif
