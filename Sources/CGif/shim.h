#ifndef GIFPACK_CGIF_SHIM_H
#define GIFPACK_CGIF_SHIM_H
#include <gif_lib.h>
#endif
