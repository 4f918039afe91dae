// The command line's library is built and tested on Linux only, as the builder it drives is (it
// calls glibc directly). Fail the build with a clear message instead of a page of missing-symbol
// errors. README.md, "Platforms", says what an app on an Apple platform can use instead.
#if !os(Linux)
    #error("GifPackCLI builds on Linux only (glibc); see README.md, \"Platforms\"")
#endif
