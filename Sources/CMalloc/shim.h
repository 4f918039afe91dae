#ifndef GIFPACK_CMALLOC_SHIM_H
#define GIFPACK_CMALLOC_SHIM_H
#include <malloc.h>

/* glibc gives each thread that allocates its own malloc arena (up to 8 per core); freed memory
   stays in them. gifpack's handful of threads need no more than two, which keeps resident memory
   near what is really in use. Call before any thread starts. */
static inline void gp_limit_malloc_arenas(void) { mallopt(M_ARENA_MAX, 2); }
#endif
