// gifpack-loader-memory-bench is a tool of `make bench` (bench/run.sh, part 11), built and run on
// Linux only (it reads /proc/self/status); an app uses GifPackClient itself. Fail the build elsewhere.
#if !os(Linux)
    #error("gifpack-loader-memory-bench builds on Linux only; see bench/README.md")
#endif
