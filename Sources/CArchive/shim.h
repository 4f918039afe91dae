#ifndef GIFPACK_CARCHIVE_SHIM_H
#define GIFPACK_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
