import GifPackSystem
import Glibc

/// Feeds a PUT body to curl's `CURLOPT_READFUNCTION`: a file read piece by piece from its
/// descriptor (never loaded whole), or bytes in memory. Used on the loop thread only.
final class UploadSource: @unchecked Sendable {  // @unchecked: used on the loop thread only.
    private let body: HTTPRequestBody
    private var descriptor: Int32 = -1
    private var offset = 0
    /// The body's size, known once ``open()`` succeeded.
    private(set) var length: Int64 = 0

    init(_ body: HTTPRequestBody) {
        self.body = body
    }

    deinit { close() }

    func open() throws(HTTPError) {
        offset = 0
        switch body {
        case .bytes(let bytes):
            length = Int64(bytes.count)
        case .file(let path):
            close()
            let fd: Int32
            do { fd = try RegularFile.open(path, .readOnly) } catch { throw HTTPError(error) }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let code = errno
                Glibc.close(fd)
                throw .fileError(path: path, errno: code)
            }
            descriptor = fd
            length = Int64(info.st_size)
        }
    }

    /// Fills `buffer`; 0 at the end, `CURL_READFUNC_ABORT` on a read error.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        switch body {
        case .bytes(let bytes):
            let count = min(buffer.count, bytes.count - offset)
            guard count > 0 else { return 0 }
            bytes.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
            }
            offset += count
            return count
        case .file:
            guard descriptor >= 0, let base = buffer.baseAddress else { return Self.abort }
            do throws(Errno) { return try POSIXIO.read(descriptor, into: UnsafeMutableRawBufferPointer(start: base, count: buffer.count)) } catch {
                return Self.abort
            }
        }
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// `CURL_READFUNC_ABORT`.
    static let abort = 0x1000_0000
}

/// `CURLOPT_READFUNCTION`: asks the transfer's upload source for the next piece of the body.
func curlReadCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata, let data else { return UploadSource.abort }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    guard let upload = transfer.upload else { return 0 }
    return upload.read(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}
