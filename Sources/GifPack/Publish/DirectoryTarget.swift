import Crypto
import Foundation

/// Publishes into a directory (a web root, a mounted share). Each file is written to a temporary
/// name in its final directory, fsynced, read back and checked (size and SHA-256), then renamed
/// into place and the directory fsynced, so a web server only ever serves whole files. Cache
/// headers are the web server's job (README, "Publishing", has an nginx snippet).
///
/// ```swift
/// let target = DirectoryTarget(root: "/var/www/gifpack")
/// try await target.putPack("packs/all-v1-1a2b3c4d.tar.zst", from: "dist/packs/all-v1-1a2b3c4d.tar.zst", bytes: n, sha256: h)
/// ```
struct DirectoryTarget: PublishTarget {
    let root: String

    var displayName: String { root }

    private func path(_ key: String) -> String { "\(root)/\(key)" }

    func readLiveIndex() async throws(PublishError) -> LiveIndex? {
        let indexPath = path("index.json")
        let read = try await blocking { () throws(PublishError) -> [UInt8]? in
            do { return try PublishFileReader.read(indexPath, maxBytes: PublishFileReader.maxIndexBytes) } catch {
                throw .failed("cannot read the live index: \(error); nothing was changed")
            }
        }
        return read.map { LiveIndex(bytes: $0, etag: nil) }
    }

    func read(_ key: String, maxBytes: Int64) async throws(PublishError) -> [UInt8]? {
        let file = path(key)
        return try await blocking { () throws(PublishError) -> [UInt8]? in
            do { return try PublishFileReader.read(file, maxBytes: maxBytes) } catch { throw .failed("cannot read \(error)") }
        }
    }

    /// What is stored under `key`: only a regular file is read (``RegularFile``); anything else
    /// there (a FIFO, a symbolic link, a device) is refused, naming it.
    func stat(_ key: String) async throws(PublishError) -> StoredObject? {
        let file = path(key)
        return try await blocking { () throws(PublishError) -> StoredObject? in
            do throws(FileSystemError) {
                let digest = try StreamingSHA256.file(at: file)
                return StoredObject(bytes: digest.size, sha256: digest.sha256)
            } catch {
                switch error {
                case .notRegularFile: throw .failed("\(error); nothing there was changed")
                case .io(_, _, let code) where Errno(code) == .noSuchFileOrDirectory: return nil
                case .io:
                    // An unreadable file has no hash: it is treated as absent and sent again.
                    guard let size = FileSystem.regularFileSize(file) else { return nil }
                    return StoredObject(bytes: size, sha256: nil)
                }
            }
        }
    }

    func putPack(_ key: String, from source: String, bytes: Int64, sha256: String) async throws(PublishError) {
        let destination = path(key)
        try await blocking { () throws(PublishError) in
            try Self.makeDirectory(PathText.parent(destination))
            try Self.copyDurably(from: source, to: destination, expectedBytes: bytes, expectedSHA256: sha256)
        }
    }

    func putMetadataFile(
        _ key: String, bytes: [UInt8], contentType: String, maxAge: Int, replacing live: LiveIndex?,
        conditional: Bool
    ) async throws(PublishError) {
        let destination = path(key)
        try await blocking { () throws(PublishError) in
            try Self.makeDirectory(PathText.parent(destination))
            let replaced = SystemCalls.linkStatus(destination)
            do {
                try FileSystem.writeAtomically(bytes, to: destination) {
                    if key == "index.json" { PublishCrashPoint.reach(.beforeIndexRename) }
                }
            } catch { throw .failed("cannot write \(destination): \(error)") }
            if let replaced { Self.keepValidatorsApart(destination, replaced: replaced) }
        }
    }

    /// Web servers make a static file's validators from its size and modification time in whole
    /// seconds (nginx: `ETag: "<mtime hex>-<size hex>"`, `Last-Modified`). A file replaced within
    /// the second by one of the same size would keep them, and clients revalidating with
    /// `If-None-Match`/`If-Modified-Since` would be told `304` for the new bytes: its time is set one
    /// second past the replaced file's then.
    static func keepValidatorsApart(_ path: String, replaced: FileStatus) {
        let replacedSecond = SystemCalls.modificationTime(replaced).tv_sec
        guard let now = SystemCalls.linkStatus(path), now.st_size == replaced.st_size,
            SystemCalls.modificationTime(now).tv_sec <= replacedSecond
        else { return }
        _ = SystemCalls.setTimes(path, access: SystemCalls.accessTime(now), modification: timespec(tv_sec: replacedSecond + 1, tv_nsec: 0))
    }

    /// The keys under `folder`; none when it does not exist. A folder that cannot be read throws:
    /// retention never decides what to delete from a listing that failed.
    func listKeys(under folder: String) async throws(PublishError) -> [String] {
        let directory = path(folder)
        let names = try await blocking { () throws(PublishError) -> [String] in
            do { return try FileSystem.list(directory) } catch { throw .failed("could not read \(directory): \(error)") }
        }
        return names.filter { !$0.hasPrefix(".") }.map { folder + $0 }.sorted()
    }

    func delete(_ key: String) async throws(PublishError) {
        let file = path(key)
        try await blocking { () throws(PublishError) in
            guard SystemCalls.unlink(file) == 0 || Errno.current == .noSuchFileOrDirectory else {
                throw .failed("cannot delete \(file): \(SystemCalls.errorText(Errno.current.code))")
            }
        }
    }

    /// Temporary files of killed publishes (`.NAME.tmp-PID-…`) whose process is gone; a directory
    /// that cannot be listed is skipped (nothing in it is deleted).
    func removeLeftovers() async {
        for directory in [root, path("packs"), path(SignatureLocation.directory)] {
            guard let names = try? FileSystem.list(directory) else { continue }
            for name in names {
                guard name.hasPrefix("."), let range = name.range(of: ".tmp-") else { continue }
                let pidText = name[range.upperBound...].prefix { $0.isNumber }
                guard let pid = Int32(pidText), pid != SystemCalls.processID(), ProcessCalls.isGone(pid) else { continue }
                SystemCalls.unlink("\(directory)/\(name)")
            }
        }
    }

    private static func makeDirectory(_ directory: String) throws(PublishError) {
        do { try FileSystem.createDirectory(directory) } catch { throw .failed("cannot create \(directory): \(error)") }
    }

    /// Copies to a temporary name beside `destination`, fsyncs, reads the copy back and checks its
    /// size and SHA-256, then renames it into place.
    static func copyDurably(from source: String, to destination: String, expectedBytes: Int64, expectedSHA256: String) throws(PublishError) {
        let temporary = FileSystem.temporaryPath(beside: destination)
        let input: Int32
        do { input = try RegularFile.open(source, .readOnly) } catch { throw .failed("cannot publish \(destination): \(error)") }
        defer { SystemCalls.close(input) }
        let output: Int32
        do { output = try RegularFile.open(temporary, [.writeOnly, .create, .exclusive]) } catch {
            throw .failed("cannot publish \(destination): \(error)")
        }
        var failure: String?
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var copied: Int64 = 0
        var crashed = false
        copy: while true {
            let got: Int
            do throws(Errno) { got = try POSIXIO.read(input, into: UnsafeMutableRawBufferPointer(start: buffer, count: 1 << 20)) } catch {
                failure = "read \(source): \(SystemCalls.errorText(error.code))"
                break
            }
            if got == 0 { break }
            do throws(Errno) { try POSIXIO.writeAll(output, UnsafeRawBufferPointer(start: buffer, count: got)) } catch {
                failure = "write \(temporary): \(SystemCalls.errorText(error.code))"
                break copy
            }
            copied += Int64(got)
            if !crashed && copied * 2 >= expectedBytes { crashed = true; PublishCrashPoint.reach(.midPack) }
        }
        if failure == nil && SystemCalls.fsync(output) != 0 { failure = "fsync \(temporary): \(SystemCalls.errorText(Errno.current.code))" }
        SystemCalls.close(output)
        if failure == nil {
            let size = FileSystem.fileSize(temporary) ?? -1
            let hash: String
            do { hash = try StreamingSHA256.file(at: temporary).sha256 } catch { hash = "unreadable (\(error))" }
            if size != expectedBytes || hash != expectedSHA256 {
                failure = "the copy of \(source) reads back as \(size) bytes, SHA-256 \(hash.prefix(16))…; expected \(expectedBytes) bytes, \(expectedSHA256.prefix(16))…"
            }
        }
        if let failure {
            SystemCalls.unlink(temporary)
            throw .failed("cannot publish \(destination): \(failure)")
        }
        do { try FileSystem.moveIntoPlace(temporary, as: destination) } catch {
            SystemCalls.unlink(temporary)
            throw .failed("cannot publish \(destination): \(error)")
        }
    }

    private func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(PublishError) -> T) async throws(PublishError) -> T {
        do { return try await BlockingWork.run { try work() } } catch let error as PublishError { throw error } catch {
            throw .failed("\(error)")
        }
    }
}
