import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a directory's own descriptor, held for the life of the value. Nothing is
/// written into the directory, so a published output directory holds only what clients fetch. A
/// second run that finds the lock held names the holder's pid (read from `/proc/locks`). The kernel
/// drops the lock when the process dies, even on `kill -9`, so a crash never leaves a stale lock.
///
/// ```swift
/// let lock = try BuildLock(directory: "dist")   // throws .held(pid:) while another run builds
/// ```
public final class BuildLock: Sendable {
    /// Why the lock was not taken: another run holds it (with its pid when known), or the directory could not be opened.
    public enum LockError: Error, Sendable, Equatable, CustomStringConvertible {
        case held(directory: String, pid: Int32?)
        case io(directory: String, errno: Int32)

        public var description: String {
            switch self {
            case .held(let directory, let pid):
                "another gifpack run\(pid.map { " (pid \($0))" } ?? "") holds the lock on \(directory); try again when it has finished"
            case .io(let directory, let code): "cannot lock \(directory): \(String(cString: strerror(code)))"
            }
        }
    }

    private let descriptor: Int32

    public init(directory: String) throws(LockError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(directory: directory, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var info = stat()
            let inode = fstat(fd, &info) == 0 ? UInt64(info.st_ino) : nil
            close(fd)
            if code == EWOULDBLOCK { throw .held(directory: directory, pid: inode.flatMap(Self.holder(inode:))) }
            throw .io(directory: directory, errno: code)
        }
        descriptor = fd
        // Earlier versions left a lock file here; it is no part of the published directory.
        unlink("\(directory)/.gifpack.lock")
    }

    /// The pid holding a `flock` on the inode, from `/proc/locks` (`1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF`).
    private static func holder(inode: UInt64) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", !fields.contains("->"),
                  fields[5].split(separator: ":").last.flatMap({ UInt64($0) }) == inode else { continue }
            return Int32(fields[4])
        }
        return nil
    }

    /// Locks each distinct directory once (the output and cache directories may be the same).
    public static func acquire(_ directories: [String]) throws(LockError) -> [BuildLock] {
        var seen: Set<String> = []
        var locks: [BuildLock] = []
        for directory in directories {
            let key = realpath(directory, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? directory
            guard seen.insert(key).inserted else { continue }
            locks.append(try BuildLock(directory: directory))
        }
        return locks
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
