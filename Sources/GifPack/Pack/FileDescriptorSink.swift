import Foundation
import Crypto
import GifPackSystemBuilder

/// An append-only writer over a POSIX file descriptor that tracks its offset and can hash
/// everything written.
///
/// Writes are complete or throw: short writes are continued and `EINTR` is retried. `offset`
/// counts bytes written through this sink, which is how ``FrameExtent`` offsets are computed. When
/// created with `hashing: true` every byte also goes into an incremental SHA-256 (swift-crypto), so
/// a pack's digest costs no second read; with `hashingBehind: true` another thread hashes the file
/// as it grows (``HashBehind``).
/// A sink is used by one writer on one thread.
///
/// ```swift
/// let sink = try FileDescriptorSink(creating: "/tmp/x.tar.zst", hashing: true)
/// try sink.write([1, 2, 3])
/// try sink.syncAndClose()
/// print(sink.offset, try sink.sha256Hex())   // 3 039058c6...
/// ```
package final class FileDescriptorSink {
    package let path: String
    /// Bytes written so far.
    package private(set) var offset: Int64
    private var fd: Int32
    private var hasher: SHA256?
    private var hashBehind: HashBehind?
    private var digest: String?
    private var writeBehind: WriteBehind?
    private var endedFlushes = 0

    /// Creates (or truncates) `path` with mode 0644 and writes from its start; the sink owns the
    /// descriptor and closes it in ``close()`` or when deallocated. With `flushingBehind`, the file
    /// is flushed to disk on another thread as it grows (``WriteBehind``), so the ``synchronize()``
    /// that ends it is short: for a large file that must survive a crash, a pack. With
    /// `hashingBehind` (instead of `hashing`), the file is hashed on another thread as it grows,
    /// reading back what was written (``HashBehind``): the writer only writes.
    package init(
        creating path: String, hashing: Bool = false, flushingBehind: Bool = false,
        hashingBehind: Bool = false
    ) throws(PackWriteError) {
        let fd = SystemCalls.open(path, [.writeOnly, .create, .truncate, .closeOnExec], mode: 0o644)
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: Errno.current.code) }
        self.fd = fd
        self.path = path
        self.offset = 0
        self.hasher = hashing && !hashingBehind ? SHA256() : nil
        self.writeBehind = flushingBehind ? WriteBehind(fileDescriptor: fd) : nil
        if hashingBehind {
            do throws(PackWriteError) { hashBehind = try HashBehind(path: path) } catch {
                SystemCalls.close(fd)
                throw error
            }
        }
    }

    deinit {
        hashBehind?.cancel()
        writeBehind?.finish()
        if fd >= 0 { SystemCalls.close(fd) }
    }

    /// Flushes made on the way by ``WriteBehind`` (0 for a sink made without `flushingBehind`).
    package var flushesBehind: Int { writeBehind?.flushes ?? endedFlushes }

    /// Waits for a flush under way and stops flushing behind (writes after this are not flushed
    /// until the next ``synchronize()``).
    private func endWriteBehind() {
        guard let writeBehind else { return }
        writeBehind.finish()
        endedFlushes = writeBehind.flushes
        self.writeBehind = nil
    }

    /// Writes all of `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(PackWriteError) {
        guard !bytes.isEmpty else { return }
        guard fd >= 0 else { throw .io(path: path, operation: "write", errno: Errno.badDescriptor.code) }
        do { try POSIXIO.writeAll(fd, bytes) } catch { throw .io(path: path, operation: "write", errno: error.code) }
        hasher?.update(bufferPointer: bytes)
        offset += Int64(bytes.count)
        writeBehind?.wrote(upTo: offset)
        hashBehind?.wrote(upTo: offset)
    }

    /// Writes all of `bytes`.
    package func write(_ bytes: [UInt8]) throws(PackWriteError) {
        let result: Result<Void, PackWriteError> = bytes.withUnsafeBytes { buffer in
            do throws(PackWriteError) { try write(buffer) } catch { return .failure(error) }
            return .success(())
        }
        try result.get()
    }

    /// Flushes the file's data and metadata to stable storage (`fsync`).
    package func synchronize() throws(PackWriteError) {
        endWriteBehind()
        while SystemCalls.fsync(fd) != 0 {
            if Errno.current == .interrupted { continue }
            throw .io(path: path, operation: "fsync", errno: Errno.current.code)
        }
    }

    /// Closes the descriptor; later writes fail. Safe to call twice.
    package func close() throws(PackWriteError) {
        endWriteBehind()
        guard fd >= 0 else { return }
        let descriptor = fd
        fd = -1
        // Linux always releases the descriptor, even when close reports an error: never retry.
        if SystemCalls.close(descriptor) != 0 && Errno.current != .interrupted {
            throw .io(path: path, operation: "close", errno: Errno.current.code)
        }
    }

    /// ``synchronize()`` then ``close()``: the usual end of writing a file that must survive a crash.
    package func syncAndClose() throws(PackWriteError) {
        try synchronize()
        try close()
    }

    /// Lowercase hex SHA-256 of everything written so far; throws ``PackWriteError/notHashed(path:)``
    /// for a sink created without `hashing` (there is no digest to give, not even an empty one).
    package func sha256Hex() throws(PackWriteError) -> String {
        if let digest { return digest }
        if let hashBehind {
            let digest = try hashBehind.finish()
            self.digest = digest
            self.hashBehind = nil
            return digest
        }
        guard let hasher else { throw .notHashed(path: path) }
        return Hex.lowercase(hasher.finalize())
    }
}
