import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a directory, held for the life of the value. The lock file
/// (`.gifpack.lock`) holds the holder's pid so a second run can say who has it. The kernel drops
/// the lock when the process dies, even on `kill -9`, so a crash never leaves a stale lock.
///
/// ```swift
/// let lock = try BuildLock(directory: "dist")   // throws .held(pid:) while another run builds
/// ```
public final class BuildLock: Sendable {
    /// Why the lock was not taken: another run holds it (with its pid when known), or the lock file failed.
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
        let path = "\(directory)/.gifpack.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(directory: directory, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(fd, &buffer, 31, 0)
            close(fd)
            if code == EWOULDBLOCK {
                let pid = count > 0 ? Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : nil
                throw .held(directory: directory, pid: pid)
            }
            throw .io(directory: directory, errno: code)
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, text.count, 0) }
        descriptor = fd
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
