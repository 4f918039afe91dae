import Foundation
import GifPackFormat
import GifPackSystem

/// Hashes a file on a thread of its own while it is being written, reading back what was written.
///
/// Assembling a pack is a copy of cached frames; hashing the copy as it went through the writer
/// made the writer twice as slow, and it runs after the last download, on the path to the end of
/// the build, while the second core has little to do. Here the writer only reports how far it got
/// (``wrote(upTo:)``), and a worker reads the new bytes back from the page cache (`pread` on a
/// descriptor of its own, so closing the writer's changes nothing) and hashes them, a megabyte or
/// more at a time. The digest covers the bytes in the file, whatever the writer meant to write.
/// ``finish()`` waits for the worker to reach the end and returns the digest.
///
/// ```swift
/// let behind = try HashBehind(path: "dist/packs/.all.tmp")
/// try write(chunk); behind.wrote(upTo: offset)   // after each write
/// let sha256 = try behind.finish()                // once everything is written
/// ```
final class HashBehind: @unchecked Sendable {  // @unchecked: `written`, `writerDone` and `result` are read and written under `condition`; the rest is constant.
    /// Bytes the worker waits for before it reads again (unless the writer finished), and the most
    /// it reads at a time: its one buffer, a megabyte of resident memory while a pack is written.
    static let batch: Int64 = 1 << 20

    let path: String
    private let fd: Int32
    private let worker = WorkerThread(name: "gifpack.hash")
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var written: Int64 = 0
    private var writerDone = false
    private var result: Result<String, PackWriteError>?

    /// Opens `path` (which must exist) for reading and starts the worker.
    init(path: String) throws(PackWriteError) {
        let fd = SystemCalls.open(path, [.readOnly, .closeOnExec])
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: Errno.current.code) }
        self.fd = fd
        self.path = path
        worker.async { [self] in run() }
    }

    // Reached once the worker's job ended (it holds the hasher until then): after finish() or cancel().
    deinit {
        worker.stop()
        SystemCalls.close(fd)
    }

    /// Ends the worker without waiting for a digest (the file is being given up).
    func cancel() {
        condition.lock()
        writerDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// The file now holds `offset` bytes.
    func wrote(upTo offset: Int64) {
        condition.lock()
        written = offset
        condition.signal()
        condition.unlock()
    }

    /// Waits for the worker to hash everything written and returns the lowercase hex SHA-256.
    func finish() throws(PackWriteError) -> String {
        condition.lock()
        writerDone = true
        condition.broadcast()
        while result == nil { condition.wait() }
        let outcome = result!
        condition.unlock()
        return try outcome.get()
    }

    private func run() {
        var hasher = StreamingSHA256()
        var hashed: Int64 = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(Self.batch), alignment: 64)
        defer { chunk.deallocate() }
        func end(_ outcome: Result<String, PackWriteError>) {
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
        while true {
            condition.lock()
            while !writerDone && written - hashed < Self.batch { condition.wait() }
            let (target, last) = (written, writerDone)
            condition.unlock()
            while hashed < target {
                let want = Int(min(Int64(chunk.count), target - hashed))
                let got: Int
                do throws(Errno) { got = try POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<want]), at: hashed) } catch {
                    return end(.failure(.io(path: path, operation: "read", errno: error.code)))
                }
                guard got > 0 else { return end(.failure(.io(path: path, operation: "read", errno: Errno.ioError.code))) }
                hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
                hashed += Int64(got)
            }
            // Once the writer is done, `written` no longer moves: `target` was the end.
            if last { return end(.success(hasher.hex)) }
        }
    }
}
