import CArchive

/// Produces ustar bytes with libarchive and hands them to `output` as they are made.
///
/// The archive is opened unbuffered (`bytes_per_block` 0, `bytes_in_last_block` 1) so libarchive
/// neither pads to a record size nor holds bytes back: every header, data and padding byte reaches
/// `output` during the call that produced it. Closing normally emits the two zero blocks that end
/// an archive; ``close(emittingEndOfArchive:)`` can drop them when the caller only wants one entry.
/// One writer produces one archive on one thread.
final class TarArchiveWriter {
    private let archive: OpaquePointer
    private let output: (UnsafeRawBufferPointer) throws(PackWriteError) -> Void
    private var discarding = false
    private var closed = false
    /// The first error raised by `output`; libarchive only learns that the write failed.
    fileprivate var outputError: PackWriteError?

    init(output: @escaping (UnsafeRawBufferPointer) throws(PackWriteError) -> Void) throws(PackWriteError) {
        guard let archive = archive_write_new() else { throw .archive("archive_write_new failed") }
        self.archive = archive
        self.output = output
        try check(archive_write_set_format_ustar(archive), "set ustar format")
        try check(archive_write_set_bytes_per_block(archive, 0), "set bytes per block")
        try check(archive_write_set_bytes_in_last_block(archive, 1), "set bytes in last block")
        try check(
            archive_write_open(
                archive, Unmanaged.passUnretained(self).toOpaque(), nil,
                tarArchiveWriterCallback, nil), "open")
    }

    deinit {
        if !closed {
            discarding = true
            archive_write_close(archive)
        }
        archive_write_free(archive)
    }

    /// Writes the header of a regular file: mode 0644, uid/gid 0, no user or group names.
    func writeRegularFileHeader(name: String, size: Int64, mtime: Int64) throws(PackWriteError) {
        guard let entry = archive_entry_new() else { throw .archive("archive_entry_new failed") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname(entry, name)
        archive_entry_set_size(entry, size)
        archive_entry_set_filetype(entry, 0o100000)  // AE_IFREG
        archive_entry_set_perm(entry, 0o644)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        archive_entry_set_mtime(entry, time_t(mtime), 0)
        try check(archive_write_header(archive, entry), "write header for \(name)")
    }

    /// Writes entry data; libarchive never lets an entry exceed the size in its header.
    func writeData(_ bytes: UnsafeRawBufferPointer) throws(PackWriteError) {
        guard !bytes.isEmpty else { return }
        let written = archive_write_data(archive, bytes.baseAddress, bytes.count)
        if let outputError { throw outputError }
        guard written == bytes.count else {
            throw .archive("write data: \(written < 0 ? errorText : "accepted \(written) of \(bytes.count) bytes")")
        }
    }

    /// Pads the current entry to the 512-byte boundary (and fills missing data with zeros).
    func finishEntry() throws(PackWriteError) {
        try check(archive_write_finish_entry(archive), "finish entry")
    }

    /// Closes the archive, passing the end-of-archive blocks to `output` or dropping them.
    func close(emittingEndOfArchive: Bool) throws(PackWriteError) {
        discarding = !emittingEndOfArchive
        closed = true
        try check(archive_write_close(archive), "close")
    }

    fileprivate func deliver(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !discarding else { return true }
        do throws(PackWriteError) {
            try output(bytes)
            return true
        } catch {
            if outputError == nil { outputError = error }
            return false
        }
    }

    private var errorText: String {
        archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
    }

    private func check(_ status: Int32, _ what: String) throws(PackWriteError) {
        if let outputError { throw outputError }
        guard status == ARCHIVE_OK else { throw .archive("\(what): \(errorText)") }
    }
}

/// libarchive write callback: forwards bytes to the ``TarArchiveWriter`` passed as client data.
private func tarArchiveWriterCallback(
    _ archive: OpaquePointer?, _ clientData: UnsafeMutableRawPointer?, _ buffer: UnsafeRawPointer?, _ length: Int
) -> Int {
    guard let clientData else { return -1 }
    let writer = Unmanaged<TarArchiveWriter>.fromOpaque(clientData).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: buffer, count: buffer == nil ? 0 : length)
    return writer.deliver(bytes) ? length : -1
}
