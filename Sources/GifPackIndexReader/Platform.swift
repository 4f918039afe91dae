// GifPackIndexReader is portable: built and tested on Linux here, written for Apple platforms, where it needs no
// system library (not compiled for them by this project's CI; see README.md, "Platforms"). It
// imports no C library and calls none: the system calls it needs are GifPackSystem's typed
// wrappers (`SystemCalls`, `OpenFlags`, `FileType`, `Errno`; its Platform.swift imports Glibc or Darwin).
// Anything but Linux and Apple platforms fails the build here with a clear message.
#if !(os(Linux) || canImport(Darwin))
    #error("GifPackIndexReader supports Linux and Apple platforms only; see README.md, \"Platforms\"")
#endif
