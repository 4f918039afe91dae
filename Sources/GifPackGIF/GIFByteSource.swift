import GifPackSystem
import Glibc

/// The bytes giflib's decoder pulls through its `InputFunc`: either an in-memory buffer or a file
/// descriptor read in 64 KiB chunks into one buffer allocated once.
///
/// It remembers whether a read came up short (`reachedEnd`), which is how ``GIFInspector`` tells
/// a truncated file from a corrupt one: giflib only asks for bytes the format says must exist, so
/// a short read means the data stopped early. Used by one inspection on one thread.
///
/// The file buffer is raw memory, filled by `read(2)` and moved with `memmove`: growing an array by
/// a chunk of zeros and trimming it again for each refill cost a debug build's tests 46 s of CPU.
final class GIFByteSource {
    private enum Backing {
        case memory([UInt8])
        case file(fd: Int32)
    }

    static let chunkSize = 64 * 1024

    private let backing: Backing
    /// The file's bytes read and not yet consumed: `storage[start..<end]` (file backing only).
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var start = 0
    private var end = 0
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
        storage = .allocate(byteCount: Self.chunkSize, alignment: 1)
    }

    deinit {
        storage.deallocate()
    }

    /// Returns up to `count` upcoming bytes without consuming them.
    func peek(_ count: Int) -> [UInt8] {
        switch backing {
        case .memory(let bytes):
            return Array(bytes[memoryPosition..<min(bytes.count, memoryPosition + count)])
        case .file(let fd):
            while end - start < count, refill(fd, room: count) {}
            return Array(storage[start..<min(end, start + count)])
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
                if start == end, !refill(fd, room: 1) { break }
                let take = min(count - copied, end - start)
                UnsafeMutableRawPointer(destination + copied).copyMemory(from: storage.baseAddress! + start, byteCount: take)
                start += take
                copied += take
            }
        }
        if copied < count { reachedEnd = true }
        return copied
    }

    /// Moves the unread bytes to the front (the buffer grows only when `room` unread bytes would
    /// not fit) and reads what fits after them from `fd`; false at EOF or error.
    private func refill(_ fd: Int32, room: Int) -> Bool {
        guard !fileAtEOF, readErrno == nil else { return false }
        let unread = end - start
        if start > 0 {
            if unread > 0 { memmove(storage.baseAddress!, storage.baseAddress! + start, unread) }
            (start, end) = (0, unread)
        }
        if max(room, unread + 1) > storage.count {
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(room, 2 * storage.count), alignment: 1)
            if unread > 0 { larger.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: unread) }
            storage.deallocate()
            storage = larger
        }
        let got: Int
        do { got = try POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: storage[end...])) } catch {
            got = -1
            readErrno = error.code
        }
        if got <= 0 { fileAtEOF = true }
        end += max(got, 0)
        return got > 0
    }
}
