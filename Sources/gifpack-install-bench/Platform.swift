// gifpack-install-bench is a tool of `make bench` (bench/run.sh, part 9), built and run on Linux
// only; an app uses GifPackClient itself. Fail the build elsewhere with a clear message.
#if !os(Linux)
    #error("gifpack-install-bench builds on Linux only; see bench/README.md")
#endif
