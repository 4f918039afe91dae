// GifPack is built and tested on Linux only: it calls glibc directly (and the package uses
// Synchronization's Mutex, which Apple platforms have only from macOS 15 / iOS 18 on). Fail the
// build with a clear message instead of a page of missing-symbol errors. README.md, "Platforms",
// says what an app on an Apple platform can use instead.
#if !os(Linux)
    #error("GifPack builds on Linux only (glibc); see README.md, \"Platforms\"")
#endif

import Glibc

/// The builder's C library calls that are not file work (files go through GifPackSystem's
/// `FileSystem`, `RegularFile` and `SystemCalls`): processes, the environment, a pause, and byte
/// comparisons (``MemoryCalls``). No other file of GifPack calls the C library.
enum ProcessCalls {
    /// True when no process has id `pid` (`kill(pid, 0)` fails with `ESRCH`).
    static func isGone(_ pid: Int32) -> Bool {
        kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Ends this process at once, as a crash would (`SIGKILL`).
    static func killSelf() {
        kill(getpid(), SIGKILL)
    }

    /// The environment variable `name` as the process started with it (`getenv`).
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Blocks the calling thread for `microseconds` (`usleep`).
    static func pause(microseconds: UInt32) {
        usleep(microseconds)
    }
}

/// Byte comparisons over memory (`memcmp`, `memchr`), for the hot loops that compare ids and search
/// bytes.
enum MemoryCalls {
    /// `memcmp`: negative, 0 or positive as `a`'s first `count` bytes sort before, equal or after `b`'s.
    static func compare(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Int32 {
        memcmp(a, b, count)
    }

    /// `memchr`: the first `byte` in `count` bytes from `start`, or nil.
    static func find(_ byte: UInt8, from start: UnsafeRawPointer, count: Int) -> UnsafeRawPointer? {
        memchr(start, Int32(byte), count).map { UnsafeRawPointer($0) }
    }
}
