import GifPackSystem
import Glibc

/// The bytes giflib's decoder pulls through its `InputFunc`: either an in-memory buffer or a file
/// descriptor read in 64 KiB chunks through one reused buffer.
///
/// It remembers whether a read came up short (`reachedEnd`), which is how ``GIFInspector`` tells
/// a truncated file from a corrupt one: giflib only asks for bytes the format says must exist, so
/// a short read means the data stopped early. Used by one inspection on one thread.
final class GIFByteSource {
    private enum Backing {
        case memory([UInt8])
        case file(fd: Int32)
    }

    static let chunkSize = 64 * 1024

    private let backing: Backing
    private var buffer: [UInt8] = []
    private var bufferPosition = 0
    private var memoryPosition = 0
    private var fileAtEOF = false

    /// True once a read request could not be satisfied in full.
    private(set) var reachedEnd = false
    /// The errno of a failed `read(2)`, if one happened.
    private(set) var readErrno: Int32?

    init(bytes: [UInt8]) {
        backing = .memory(bytes)
    }

    /// Reads from `fd` (not closed by the source) starting at its current offset.
    init(fileDescriptor fd: Int32) {
        backing = .file(fd: fd)
        buffer.reserveCapacity(Self.chunkSize)
    }

    /// Returns up to `count` upcoming bytes without consuming them.
    func peek(_ count: Int) -> [UInt8] {
        switch backing {
        case .memory(let bytes):
            return Array(bytes[memoryPosition..<min(bytes.count, memoryPosition + count)])
        case .file(let fd):
            while buffer.count - bufferPosition < count, refill(fd) {}
            return Array(buffer[bufferPosition..<min(buffer.count, bufferPosition + count)])
        }
    }

    /// Copies up to `count` bytes to `destination`; returns how many were copied.
    func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        var copied = 0
        switch backing {
        case .memory(let bytes):
            copied = min(count, bytes.count - memoryPosition)
            bytes.withUnsafeBufferPointer { source in
                guard copied > 0, let base = source.baseAddress else { return }
                destination.update(from: base + memoryPosition, count: copied)
            }
            memoryPosition += copied
        case .file(let fd):
            while copied < count {
                if bufferPosition == buffer.count, !refill(fd) { break }
                let take = min(count - copied, buffer.count - bufferPosition)
                buffer.withUnsafeBufferPointer { source in
                    (destination + copied).update(from: source.baseAddress! + bufferPosition, count: take)
                }
                bufferPosition += take
                copied += take
            }
        }
        if copied < count { reachedEnd = true }
        return copied
    }

    /// Moves unread bytes to the front and appends one chunk from `fd`; false at EOF or error.
    private func refill(_ fd: Int32) -> Bool {
        guard !fileAtEOF, readErrno == nil else { return false }
        if bufferPosition > 0 {
            buffer.removeSubrange(0..<bufferPosition)
            bufferPosition = 0
        }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: Self.chunkSize))
        let result: Result<Int, Errno> = buffer.withUnsafeMutableBytes { target in
            Result { () throws(Errno) in try POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: target[start...])) }
        }
        let got: Int
        do { got = try result.get() } catch {
            got = -1
            readErrno = error.code
        }
        buffer.removeSubrange((start + max(got, 0))...)
        if got <= 0 { fileAtEOF = true }
        return got > 0
    }
}
