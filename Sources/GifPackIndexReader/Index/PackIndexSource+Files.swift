import Foundation
import GifPackSystem

/// The local files an index source reads: whole (an index to verify, an install manifest) or in
/// chunks (an index decoded as it is read, ``PackIndexSource/streamFile(_:limits:)``).
extension PackIndexSource {
    /// Reads a whole local file of at most `maxBytes` (an index or an install manifest).
    ///
    /// Only a regular file is read, never through a symbolic link (``RegularFile``: a FIFO, socket,
    /// device or directory is refused at once), and a file larger than `maxBytes` without reading it.
    package static func readFile(_ path: String, maxBytes: Int64) throws(PackClientError) -> Data {
        let (fd, info) = try openFile(path, maxBytes: maxBytes)
        defer { SystemCalls.close(fd) }
        // One byte more than fstat reported: a file that grew meanwhile is noticed, never read past.
        var data = Data(count: Int(info.st_size) + 1)
        let result: Result<Int, Errno> = data.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try POSIXIO.read(fd, into: buffer, at: 0) }
        }
        let filled: Int
        do { filled = try result.get() } catch { throw .unreadable(location: path, detail: SystemCalls.errorText(error.code)) }
        guard filled < data.count else {
            throw .unreadable(location: path, detail: "the file grew while it was read")
        }
        data.count = filled
        return data
    }

    /// ``readFile(_:maxBytes:)`` handed to `body` 64 KiB at a time, in order; a file that grows past
    /// the size it had when opened is refused as there.
    package static func readFile(_ path: String, maxBytes: Int64,
                         chunks body: (UnsafeRawBufferPointer) throws(PackClientError) -> Void) throws(PackClientError) {
        let (fd, info) = try openFile(path, maxBytes: maxBytes)
        defer { SystemCalls.close(fd) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        var total: Int64 = 0
        while true {
            let got: Int
            do throws(Errno) { got = try POSIXIO.read(fd, into: chunk) } catch { throw .unreadable(location: path, detail: SystemCalls.errorText(error.code)) }
            if got == 0 { return }
            total += Int64(got)
            guard total <= Int64(info.st_size) else { throw .unreadable(location: path, detail: "the file grew while it was read") }
            try body(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
        }
    }

    /// A regular file opened for reading (never through a symbolic link) and its status, refused
    /// when larger than `maxBytes`.
    private static func openFile(_ path: String, maxBytes: Int64) throws(PackClientError) -> (Int32, FileStatus) {
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly) } catch {
            switch error {
            case .notRegularFile(_, let kind): throw .unreadable(location: path, detail: "not a regular file (\(kind))")
            case .io(_, _, let code):
                throw .unreadable(location: path, detail: Errno(code) == .noSuchFileOrDirectory ? "no such file" : SystemCalls.errorText(code))
            }
        }
        guard let info = SystemCalls.status(descriptor: fd) else {
            let code = Errno.current.code
            SystemCalls.close(fd)
            throw .unreadable(location: path, detail: SystemCalls.errorText(code))
        }
        guard Int64(info.st_size) <= maxBytes else {
            SystemCalls.close(fd)
            throw .unreadable(location: path, detail: "\(info.st_size) bytes, larger than the \(maxBytes)-byte limit")
        }
        return (fd, info)
    }
}
