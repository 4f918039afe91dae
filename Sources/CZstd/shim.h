#ifndef GIFPACK_CZSTD_SHIM_H
#define GIFPACK_CZSTD_SHIM_H
#include <zstd.h>
#include <zstd_errors.h>
#endif
