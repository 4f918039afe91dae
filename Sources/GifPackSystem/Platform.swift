// GifPackSystem's one platform file, and the one home of what differs between the C libraries the
// portable client is written for: Glibc on Linux (built and tested here), Darwin on Apple platforms
// (written for, not compiled by this project's CI). Anything else fails the build here with a clear
// message. The other files reach the plain POSIX calls both libraries share (open, read, fstat, …)
// through Foundation, and call the typed wrappers below for the rest; no file but this one imports
// the C library (ClientPortabilityTests checks it).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#else
#error("GifPackSystem supports Linux (Glibc) and Apple platforms (Darwin) only; see README.md, \"Platforms\"")
#endif

/// Thin typed wrappers over the C library calls whose spelling or presence differs by platform.
package enum SystemCalls {
    /// The C library's text for an errno value ("No such file or directory").
    package static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// `fsync(2)`; 0 or -1 with errno.
    package static func fsync(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.fsync(fd)
        #else
        Darwin.fsync(fd)
        #endif
    }

    /// Lowers the calling thread's scheduling priority by `niceness`. Linux applies nice per thread
    /// (`setpriority(PRIO_PROCESS, 0, …)` names the calling thread); on Apple platforms that call
    /// would renice the whole process, so it is not made there (the worker runs at the default).
    package static func lowerCurrentThreadPriority(_ niceness: Int32) {
        #if canImport(Glibc)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
    }

    /// An unnamed, linkable file in `directory` (`O_TMPFILE`), or nil where the platform or the
    /// file system has none (then the caller makes a named file and unlinks it). Throws the errno
    /// of any other failure.
    package static func openUnnamedFile(in directory: String) throws(Errno) -> Int32? {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        // glibc's O_TMPFILE (__O_TMPFILE | O_DIRECTORY), which Swift does not import: 0o20000000 on these architectures.
        let unnamed = open(directory, O_RDWR | O_CLOEXEC | O_DIRECTORY | 0o20000000, 0o600)
        if unnamed >= 0 { return unnamed }
        guard errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL else { throw .current }
        #endif
        return nil
    }

    /// Gives the open file `descriptor` (from ``openUnnamedFile(in:)``) the name `path`:
    /// `linkat` of `/proc/self/fd/<n>` on Linux; `ENOTSUP` where there is no such file.
    package static func linkDescriptor(_ descriptor: Int32, to path: String) throws(Errno) {
        #if os(Linux)
        guard linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 else { throw .current }
        #else
        throw Errno(ENOTSUP)
        #endif
    }

    /// `syncfs(2)` of the file system holding `fd`, looked up at run time (it is not in Swift's
    /// Glibc module); nil where the platform has none (the caller fsyncs file by file).
    package static func syncFileSystem(_ fd: Int32) -> Int32? {
        #if os(Linux)
        guard let call = syncfs else { return nil }
        return call(fd)
        #else
        return nil
        #endif
    }

    /// A `stat`'s modification time: `st_mtim` in glibc, `st_mtimespec` in Darwin.
    package static func modificationTime(_ info: stat) -> timespec {
        #if canImport(Glibc)
        info.st_mtim
        #else
        info.st_mtimespec
        #endif
    }

    /// Sets the file's access and modification times to now (`utimensat` with `UTIME_NOW`, whose
    /// value differs: `(1 << 30) - 1` in glibc, a macro Swift does not import; -1 in Darwin).
    /// 0, or -1 with errno.
    package static func touch(_ path: String) -> Int32 {
        #if canImport(Glibc)
        let now = (1 << 30) - 1
        #else
        let now = -1
        #endif
        var times = [timespec(tv_sec: 0, tv_nsec: now), timespec(tv_sec: 0, tv_nsec: now)]
        return utimensat(AT_FDCWD, path, &times, 0)
    }

    #if os(Linux)
    private static let syncfs: (@convention(c) (Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()
    #endif
}
