// ExerciseDBFixture is built and tested on Linux only: it calls glibc directly (and the package uses
// Synchronization's Mutex, which Apple platforms have only from macOS 15 / iOS 18 on). Fail the
// build with a clear message instead of a page of missing-symbol errors. README.md, "Platforms",
// says what an app on an Apple platform can use instead.
#if !os(Linux)
    #error("ExerciseDBFixture builds on Linux only (glibc); see README.md, \"Platforms\"")
#endif
