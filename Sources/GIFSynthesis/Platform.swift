// GIFSynthesis is built and tested on Linux only, like the fixture server it feeds (giflib from
// Debian's libgif-dev). Fail the build with a clear message instead of a page of missing-symbol
// errors. README.md, "Platforms", says what an app on an Apple platform can use instead.
#if !os(Linux)
    #error("GIFSynthesis builds on Linux only (giflib); see README.md, \"Platforms\"")
#endif
