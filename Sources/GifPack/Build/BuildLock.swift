import Foundation
import GifPackSystemBuilder

/// An exclusive `flock` on a directory's own descriptor, held for the life of the value. Nothing is
/// written into the directory, so the output directory (what `gifpack publish` uploads) holds only
/// what clients fetch. A second run that finds the lock held names the holder's pid (read from
/// `/proc/locks`). The kernel drops the lock when the process dies, even on `kill -9`, so a crash
/// never leaves a stale lock.
///
/// ```swift
/// let lock = try BuildLock(directory: "dist")   // throws .held(pid:) while another run builds
/// ```
package final class BuildLock: Sendable {
    /// Why the lock was not taken: another run holds it (with its pid when known), or the directory could not be opened.
    package enum LockError: Error, Sendable, Equatable, CustomStringConvertible {
        case held(directory: String, pid: Int32?)
        case io(directory: String, errno: Int32)

        package var description: String {
            switch self {
            case .held(let directory, let pid):
                "another gifpack run\(pid.map { " (pid \($0))" } ?? "") holds the lock on \(directory); try again when it has finished"
            case .io(let directory, let code): "cannot lock \(directory): \(SystemCalls.errorText(code))"
            }
        }
    }

    private let lock: FileLock

    package init(directory: String) throws(LockError) {
        switch FileLock.acquire(directory: directory) {
        case .locked(let lock): self.lock = lock
        case .held(let note): throw .held(directory: directory, pid: note.flatMap { Int32($0) })
        case .failed(let error): throw .io(directory: directory, errno: error.errno)
        }
    }

    /// Locks each distinct directory once (the output and cache directories may be the same).
    package static func acquire(_ directories: [String]) throws(LockError) -> [BuildLock] {
        var seen: Set<String> = []
        var locks: [BuildLock] = []
        for directory in directories {
            let key = SystemCalls.realPath(directory) ?? directory
            guard seen.insert(key).inserted else { continue }
            locks.append(try BuildLock(directory: directory))
        }
        return locks
    }
}
