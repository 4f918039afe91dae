#ifndef GIFPACK_CMALLOC_SHIM_H
#define GIFPACK_CMALLOC_SHIM_H
#include <malloc.h>

/* How gifpack's process uses malloc. Call before any thread starts.
   - glibc gives each thread that allocates its own malloc arena (up to 8 per core); freed memory
     stays in them. gifpack's handful of threads need no more than two, which keeps resident memory
     near what is really in use.
   - Blocks of 1 MiB and more (pieces of the catalog spool, zstd's windows, large GIFs) are mapped
     on their own and given back when freed, and free memory at the top of a heap is given back past
     1 MiB. glibc's default starts at 128 KiB but raises both bounds each time such a block is freed
     (up to 32 MB), after which the heaps keep what a large catalog once needed: at 100,000
     exercises that was 3 to 6 MB of resident memory more than the build was using. (Fixed at
     128 KiB, every GIF's decoding buffers were mapped and unmapped: the realistic 1,324-GIF build
     took 14-15 s instead of 11.6; at 1 MiB it took 11.6 s, as with glibc's default.) */
static inline void gp_tune_malloc(void) {
    mallopt(M_ARENA_MAX, 2);
    mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}
#endif
