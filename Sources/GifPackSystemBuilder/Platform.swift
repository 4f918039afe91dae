// GifPackSystemBuilder holds the builder's own system helpers (the build lock,
// write-behind flushing); it is built and tested on Linux only: it calls glibc directly (flock,
// fdatasync, /proc/locks). Fail the build with a clear message instead of a page of
// missing-symbol errors. README.md, "Platforms", says what an app on an Apple platform can use.
#if !os(Linux)
    #error("GifPackSystemBuilder builds on Linux only (glibc); see README.md, \"Platforms\"")
#endif
