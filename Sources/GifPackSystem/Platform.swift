// GifPackSystem's one platform file, and the one home of what differs between the C libraries the
// portable client is written for: Glibc on Linux (built and tested here), Darwin on Apple platforms
// (written for, not compiled by this project's CI). Anything else fails the build here with a clear
// message. Every C library call the client closure makes (open, read, fstat, flock, rename, …),
// and every C constant it needs (open flags, file types, errno values), is here, behind the thin
// typed wrappers below (`SystemCalls`, `OpenFlags`, `FileType`, `Errno`); no other file of the
// closure imports the C library or calls it through Foundation's re-export (ClientPortabilityTests
// checks both).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#else
    #error("GifPackSystem supports Linux (Glibc) and Apple platforms (Darwin) only; see README.md, \"Platforms\"")
#endif

/// Thin typed wrappers over the C library calls of the client closure: those whose spelling or
/// presence differs by platform, and (in the extension below) the plain POSIX calls.
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
            let unnamed = cOpen(directory, O_RDWR | O_CLOEXEC | O_DIRECTORY | 0o20000000, 0o600)
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

    /// Asks the kernel to start writing the file's dirty pages now, without waiting for them
    /// (`sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`, looked up at run time like `syncfs`), so
    /// that a later `syncfs` finds them written. It only moves work earlier: nothing is promised,
    /// and where the call is missing (Apple platforms, an old C library) nothing is done.
    package static func startWriteback(_ fd: Int32) {
        #if os(Linux)
            _ = syncFileRange?(fd, 0, 0, 2)  // SYNC_FILE_RANGE_WRITE
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

    /// A `stat`'s last access time: `st_atim` in glibc, `st_atimespec` in Darwin.
    package static func accessTime(_ info: stat) -> timespec {
        #if canImport(Glibc)
            info.st_atim
        #else
            info.st_atimespec
        #endif
    }

    /// Sets the file's access and modification times (`utimensat`, following a final symbolic
    /// link); 0, or -1 with errno.
    package static func setTimes(_ path: String, access: timespec, modification: timespec) -> Int32 {
        var times = [access, modification]
        return utimensat(AT_FDCWD, path, &times, 0)
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
        private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
            guard let symbol = dlsym(nil, "sync_file_range") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
        }()
    #endif
}

// MARK: - The POSIX calls the client closure makes (swift-system style: typed flags, file types and
// errno values; the C spelling stays in this file). Each wrapper makes exactly one C call and
// reports failure as the call does (-1, nil or false, with `Errno.current` set), so callers keep
// their own errno handling and EINTR loops.

/// A `stat` record (`st_mode`, `st_size`, `st_dev`, `st_ino`; times through ``SystemCalls/modificationTime(_:)``).
package typealias FileStatus = stat

/// `open(2)` flags.
package struct OpenFlags: OptionSet, Sendable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    package static let readOnly = OpenFlags(rawValue: O_RDONLY)
    package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    package static let readWrite = OpenFlags(rawValue: O_RDWR)
    package static let create = OpenFlags(rawValue: O_CREAT)
    package static let exclusive = OpenFlags(rawValue: O_EXCL)
    package static let truncate = OpenFlags(rawValue: O_TRUNC)
    package static let append = OpenFlags(rawValue: O_APPEND)
    package static let closeOnExec = OpenFlags(rawValue: O_CLOEXEC)
    package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    package static let noControllingTerminal = OpenFlags(rawValue: O_NOCTTY)
    package static let directory = OpenFlags(rawValue: O_DIRECTORY)
}

/// The type of file a ``FileStatus`` describes (`st_mode & S_IFMT`).
package enum FileType: Sendable, Equatable {
    case regular, directory, symbolicLink, fifo, socket, characterDevice, blockDevice, unknown
}

extension Errno {
    /// The calling thread's current `errno`.
    package static var current: Errno { Errno(errno) }

    package static let noSuchFileOrDirectory = Errno(ENOENT)
    package static let interrupted = Errno(EINTR)
    package static let fileExists = Errno(EEXIST)
    package static let invalidArgument = Errno(EINVAL)
    package static let wouldBlock = Errno(EWOULDBLOCK)
    package static let improperLink = Errno(EXDEV)
    package static let notPermitted = Errno(EPERM)
    package static let tooManyLinks = Errno(EMLINK)
    package static let notSupported = Errno(ENOTSUP)
    package static let notSupportedOnSocket = Errno(EOPNOTSUPP)
    package static let permissionDenied = Errno(EACCES)
    package static let ioError = Errno(EIO)
    package static let badDescriptor = Errno(EBADF)
    package static let fileTooLarge = Errno(EFBIG)

    /// True for a full disk or an exhausted quota (ENOSPC, EDQUOT).
    package var meansDiskFull: Bool { code == ENOSPC || code == EDQUOT }
}

extension SystemCalls {
    /// `open(2)`; a descriptor, or -1 with errno.
    package static func open(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0) -> Int32 {
        cOpen(path, flags.rawValue, mode_t(truncatingIfNeeded: mode))
    }

    /// `close(2)`; 0 or -1 with errno.
    @discardableResult
    package static func close(_ fd: Int32) -> Int32 { cClose(fd) }

    /// One `read(2)`; the count read, 0 at end of file, or -1 with errno.
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { cRead(fd, buffer, count) }

    /// One `write(2)`; the count written, or -1 with errno.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { cWrite(fd, bytes, count) }

    /// One `pread(2)` at `offset`; the count read, 0 at end of file, or -1 with errno.
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, at offset: Int64) -> Int {
        cPread(fd, buffer, count, off_t(offset))
    }

    /// One `pwrite(2)` at `offset`; the count written, or -1 with errno.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, at offset: Int64) -> Int {
        cPwrite(fd, bytes, count, off_t(offset))
    }

    /// `access(2)` with `R_OK`: true when the file may be read; false with errno.
    package static func canRead(_ path: String) -> Bool { cAccess(path, R_OK) == 0 }

    /// `fstat(2)`; nil with errno.
    package static func status(descriptor fd: Int32) -> FileStatus? {
        var info = FileStatus()
        return cFstat(fd, &info) == 0 ? info : nil
    }

    /// `stat(2)` (following a final symbolic link); nil with errno.
    package static func status(_ path: String) -> FileStatus? {
        var info = FileStatus()
        return cStat(path, &info) == 0 ? info : nil
    }

    /// `lstat(2)` (not following a final symbolic link); nil with errno.
    package static func linkStatus(_ path: String) -> FileStatus? {
        var info = FileStatus()
        return cLstat(path, &info) == 0 ? info : nil
    }

    /// The file type in a status's `st_mode`.
    package static func fileType(_ info: FileStatus) -> FileType { fileType(mode: UInt32(info.st_mode)) }

    /// The file type in an `st_mode` value.
    package static func fileType(mode: UInt32) -> FileType {
        switch mode_t(truncatingIfNeeded: mode) & S_IFMT {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFLNK: .symbolicLink
        case S_IFIFO: .fifo
        case S_IFSOCK: .socket
        case S_IFCHR: .characterDevice
        case S_IFBLK: .blockDevice
        default: .unknown
        }
    }

    /// `mkdir(2)`; 0 or -1 with errno.
    package static func makeDirectory(_ path: String, mode: UInt32) -> Int32 { cMkdir(path, mode_t(truncatingIfNeeded: mode)) }

    /// `rmdir(2)`; 0 or -1 with errno.
    @discardableResult
    package static func removeDirectory(_ path: String) -> Int32 { cRmdir(path) }

    /// `unlink(2)`; 0 or -1 with errno.
    @discardableResult
    package static func unlink(_ path: String) -> Int32 { cUnlink(path) }

    /// `rename(2)`; 0 or -1 with errno.
    package static func rename(_ source: String, to destination: String) -> Int32 { cRename(source, destination) }

    /// `link(2)` (a hard link); 0 or -1 with errno.
    package static func link(_ source: String, to target: String) -> Int32 { cLink(source, target) }

    /// `symlink(2)`: a symbolic link at `path` holding `target`; 0 or -1 with errno.
    package static func symbolicLink(_ target: String, at path: String) -> Int32 { cSymlink(target, path) }

    /// `ftruncate(2)`; 0 or -1 with errno.
    package static func truncate(_ fd: Int32, size: Int64) -> Int32 { cFtruncate(fd, off_t(size)) }

    /// `flock(2)` exclusive lock, waiting unless `wait` is false (then `wouldBlock` when held); 0 or -1 with errno.
    package static func lockExclusive(_ fd: Int32, wait: Bool) -> Int32 { cFlock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) }

    /// `flock(2)` unlock; 0 or -1 with errno.
    @discardableResult
    package static func unlock(_ fd: Int32) -> Int32 { cFlock(fd, LOCK_UN) }

    /// The names in a directory but `.` and `..` (`opendir`/`readdir`), unsorted; nil with errno when it cannot be opened.
    package static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// `realpath(3)`: the absolute path with every symbolic link resolved; nil with errno.
    package static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// This process's id (`getpid`).
    package static func processID() -> Int32 { getpid() }

    /// The current time in whole seconds since 1970 (`time(nil)`).
    package static func currentTime() -> Int { Int(time(nil)) }
}

// The C calls, at file scope where SystemCalls' own names do not shadow them.
private func cOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func cClose(_ fd: Int32) -> Int32 { close(fd) }
private func cRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func cWrite(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, bytes, count) }
private func cPread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: off_t) -> Int { pread(fd, buffer, count, offset) }
private func cPwrite(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int { pwrite(fd, bytes, count, offset) }
private func cAccess(_ path: String, _ mode: Int32) -> Int32 { access(path, mode) }
private func cFstat(_ fd: Int32, _ info: inout FileStatus) -> Int32 { fstat(fd, &info) }
private func cStat(_ path: String, _ info: inout FileStatus) -> Int32 { stat(path, &info) }
private func cLstat(_ path: String, _ info: inout FileStatus) -> Int32 { lstat(path, &info) }
private func cMkdir(_ path: String, _ mode: mode_t) -> Int32 { mkdir(path, mode) }
private func cRmdir(_ path: String) -> Int32 { rmdir(path) }
private func cUnlink(_ path: String) -> Int32 { unlink(path) }
private func cRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func cLink(_ source: String, _ target: String) -> Int32 { link(source, target) }
private func cSymlink(_ target: String, _ path: String) -> Int32 { symlink(target, path) }
private func cFtruncate(_ fd: Int32, _ size: off_t) -> Int32 { ftruncate(fd, size) }
private func cFlock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }
