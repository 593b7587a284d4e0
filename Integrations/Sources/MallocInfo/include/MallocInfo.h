// glibc's malloc statistics for `make integrations-soak`, which tells a leak (the heap in use grows) from the
// allocator (the resident set moves while the heap in use stays flat). The Glibc module of Swift does not export
// <malloc.h>, hence this C shim. Each returns 0 (and trims nothing) where there is no glibc.
#ifndef MALLOC_INFO_H
#define MALLOC_INFO_H

#include <stddef.h>

// Heap bytes in use (`mallinfo2().uordblks`, what was requested rounded up to malloc's chunk sizes) plus the bytes
// of the chunks glibc maps apart for large blocks (`mallinfo2().hblkhd`, 128 KiB and up by default).
size_t malloc_info_bytes_in_use(void);

// Bytes of the arenas' free chunks (`mallinfo2().fordblks`): what malloc holds without anyone using it.
size_t malloc_info_bytes_free(void);

// Gives the free memory at the top of every arena and the free pages inside them back to the system
// (`malloc_trim(0)`); returns whether any was released.
int malloc_info_trim(void);

#endif
