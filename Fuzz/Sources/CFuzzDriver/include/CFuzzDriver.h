#ifndef GIFPACK_CFUZZDRIVER_H
#define GIFPACK_CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry for a program with its own main (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library).
/// SwiftPM names an executable's Swift entry point `<module>_main` and links it as `main`, so libFuzzer's
/// own main is never linked; each target's `@main` calls this instead.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
