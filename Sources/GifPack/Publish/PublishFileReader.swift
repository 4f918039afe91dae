import Foundation

/// Reads the small files `gifpack publish` handles whole — the build's `index.json`, its signature
/// and report, and a directory target's live `index.json` — bounded and only when they are regular
/// files, never through a symbolic link (``RegularFile``: a FIFO, device, socket or directory is
/// refused at once), and a file larger than its cap without being read.
///
/// ```swift
/// let bytes = try PublishFileReader.read("dist/index.json", maxBytes: PublishFileReader.maxIndexBytes)   // nil: no such file
/// ```
enum PublishFileReader {
    /// The largest index read: the client's limit (`PackLimits.maxIndexBytes`, 64 MiB), so nothing
    /// is published that a client would refuse to read, and no live index larger is trusted.
    static let maxIndexBytes: Int64 = 64 << 20
    /// A minisign signature is a few hundred bytes.
    static let maxSignatureBytes: Int64 = 4096
    /// `report.json`.
    static let maxReportBytes: Int64 = 8 << 20

    /// Why a file was not read; the description names the file.
    struct Refusal: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "\(path): \(reason)" }
    }

    /// The whole file, or nil when it does not exist.
    static func read(_ path: String, maxBytes: Int64) throws(Refusal) -> [UInt8]? {
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly) } catch {
            switch error {
            case .io(_, _, Errno.noSuchFileOrDirectory.code): return nil
            case .io(let operation, _, let code): throw Refusal(path: path, reason: "cannot \(operation): \(SystemCalls.errorText(code))")
            case .notRegularFile(_, let kind): throw Refusal(path: path, reason: "not a regular file (\(kind))")
            }
        }
        defer { SystemCalls.close(fd) }
        guard let info = SystemCalls.status(descriptor: fd) else {
            throw Refusal(path: path, reason: "cannot stat: \(SystemCalls.errorText(Errno.current.code))")
        }
        let size = Int64(info.st_size)
        guard size <= maxBytes else { throw Refusal(path: path, reason: "\(size) bytes, larger than the \(maxBytes)-byte limit") }
        // One byte more than fstat reported: a file that grew meanwhile is noticed, never read past.
        var bytes = [UInt8](repeating: 0, count: Int(size) + 1)
        let result: Result<Int, Errno> = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try POSIXIO.read(fd, into: buffer, at: 0) }
        }
        let filled: Int
        do { filled = try result.get() } catch { throw Refusal(path: path, reason: "cannot read: \(SystemCalls.errorText(error.code))") }
        guard filled <= Int(size) else { throw Refusal(path: path, reason: "the file grew while it was read") }
        bytes.removeSubrange(filled...)
        return bytes
    }
}
