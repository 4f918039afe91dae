import GifPackSystem
import Foundation
import Glibc

/// An exclusive, non-blocking `flock` on a directory, held for the life of the value. The kernel
/// drops it when the process dies, even on `kill -9`, so a crash never leaves a stale lock; a
/// second process is told the holder's pid.
///
/// ```swift
/// switch FileLock.acquire(directory: "dist") {
/// case .locked(let lock): defer { withExtendedLifetime(lock) {} }; build()
/// case .held(let note): print("held by pid \(note ?? "?")")
/// case .failed(let error): print(error)
/// }
/// ```
package final class FileLock: Sendable {
    /// The outcome of ``acquire(directory:)``.
    package enum Attempt: Sendable {
        case locked(FileLock)
        /// Another process holds the lock; its pid, when `/proc/locks` names it.
        case held(note: String?)
        case failed(FileSystemError)
    }

    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Locks the directory's own descriptor: nothing is written into the directory. When another
    /// process holds it, the note is that process's pid, read from `/proc/locks`.
    package static func acquire(directory: String) -> Attempt {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return .failed(.io(operation: "open", path: directory, errno: errno)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var info = stat()
            let inode = fstat(fd, &info) == 0 ? UInt64(info.st_ino) : nil
            close(fd)
            guard code == EWOULDBLOCK else { return .failed(.io(operation: "flock", path: directory, errno: code)) }
            return .held(note: inode.flatMap(holder(inode:)).map(String.init))
        }
        return .locked(FileLock(descriptor: fd))
    }

    /// The pid holding a `flock` on the inode, from `/proc/locks`
    /// (`1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF`). Read to its end with `read(2)`:
    /// the file reports size 0, and Foundation's `String(contentsOfFile:)` stops after its first
    /// 4 KiB, which on a busy host misses the holder.
    private static func holder(inode: UInt64) -> Int32? {
        guard let bytes = try? FileSystem.readAll("/proc/locks") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", !fields.contains("->"),
                fields[5].split(separator: ":").last.flatMap({ UInt64($0) }) == inode
            else { continue }
            return Int32(fields[4])
        }
        return nil
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
