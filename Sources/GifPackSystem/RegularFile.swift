/// The one way the client, the transports and the publisher open a file by its path: only a
/// regular file, never through a symbolic link, never blocking.
///
/// The path is opened with `O_NOFOLLOW` (a symbolic link as the last component is refused, so a
/// link planted in a cache or a web root cannot make a write land on its target) and `O_NONBLOCK`
/// (a FIFO without a writer, or a device, cannot block the open), then checked with `fstat`
/// before a byte is read or written: a FIFO, socket, device or directory is closed again and
/// refused. `O_NONBLOCK` stays set; it changes nothing for regular files. `O_CLOEXEC` and
/// `O_NOCTTY` are always added.
///
/// ```swift
/// let fd = try RegularFile.open("/cache.d/downloads/all.tar.zst.part", [.writeOnly, .create, .truncate])
/// defer { SystemCalls.close(fd) }
/// ```
package enum RegularFile {
    /// A descriptor of the regular file at `path`; ``FileSystemError/notRegularFile(path:kind:)``
    /// when something else is there, ``FileSystemError/io(operation:path:errno:)`` (operation
    /// `open`, errno `ENOENT` when nothing is there) for any other failure.
    package static func open(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0o644) throws(FileSystemError) -> Int32 {
        try open(path, flags, mode: mode, followingLinks: false)
    }

    /// ``open(_:_:mode:)``, with `followingLinks` true only for a file an operator names (a
    /// manifest, a key file: mounted config maps and secrets are links), never for a file gifpack
    /// writes or reads back.
    package static func open(
        _ path: String, _ flags: OpenFlags, mode: UInt32 = 0o644,
        followingLinks: Bool
    ) throws(FileSystemError) -> Int32 {
        let all = flags.union(
            followingLinks
                ? [.nonBlocking, .closeOnExec, .noControllingTerminal]
                : [.noFollow, .nonBlocking, .closeOnExec, .noControllingTerminal])
        var fd: Int32
        repeat { fd = SystemCalls.open(path, all, mode: mode) } while fd < 0 && Errno.current == .interrupted
        guard fd >= 0 else {
            let code = Errno.current.code
            // O_NOFOLLOW's ELOOP, a writer's ENXIO at a FIFO without a reader, EISDIR: say what is there.
            if let info = followingLinks ? SystemCalls.status(path) : SystemCalls.linkStatus(path), SystemCalls.fileType(info) != .regular {
                throw .notRegularFile(path: path, kind: SystemCalls.fileType(info).words)
            }
            throw .io(operation: "open", path: path, errno: code)
        }
        guard let info = SystemCalls.status(descriptor: fd) else {
            let code = Errno.current.code
            SystemCalls.close(fd)
            throw .io(operation: "fstat", path: path, errno: code)
        }
        guard SystemCalls.fileType(info) == .regular else {
            SystemCalls.close(fd)
            throw .notRegularFile(path: path, kind: SystemCalls.fileType(info).words)
        }
        return fd
    }
}

extension FileType {
    /// Words for messages about a path that is not a regular file ("a FIFO", "a symbolic link").
    package var words: String {
        switch self {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .fifo: "a FIFO"
        case .socket: "a socket"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .symbolicLink: "a symbolic link"
        case .unknown: "an unknown file type"
        }
    }
}
