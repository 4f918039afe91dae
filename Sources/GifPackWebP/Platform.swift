// GifPackWebP is the builder's: built and tested on Linux only, like GifPackGIF (giflib and libwebp
// through Debian's -dev packages). README.md, "Platforms".
#if !os(Linux)
    #error("GifPackWebP builds on Linux only; see README.md, \"Platforms\"")
#endif
