import GifPackSystem

/// A section's tiles on their way to its pages (``ReviewWriter``): appended, as the catalogs are
/// read pack by pack, to a hidden file in the page's folder, then read back in order once their
/// number (and so every page's links) is known. Memory: a 64 KiB buffer; the file is removed when
/// the review ends, complete or not.
///
/// A record is the tile's body part and its markup, each as a 4-byte length and its UTF-8 bytes.
final class TileSpool {
    let path: String
    private var file: NewFile?
    private var buffer: [UInt8] = []
    private(set) var count = 0

    init(path: String) throws(FileSystemError) {
        self.path = path
        file = try NewFile(path: path, exclusive: true)
        buffer.reserveCapacity(PageSink.chunk)
    }

    func append(_ html: String, bodyPart: String?) throws(FileSystemError) {
        Self.appendField(bodyPart ?? "", to: &buffer)
        Self.appendField(html, to: &buffer)
        count += 1
        if buffer.count >= PageSink.chunk { try flush() }
    }

    /// Writes what is buffered and closes the file: the tiles can be read from then on.
    func close() throws(FileSystemError) {
        try flush()
        try file?.finish(sync: false)
        file = nil
    }

    func remove() {
        file = nil
        FileSystem.remove(path)
    }

    /// Hands the first `limit` tiles (all by default) to `body`, in the order they were appended.
    func read(limit: Int = .max, _ body: (_ html: String, _ bodyPart: String?) throws(FileSystemError) -> Void) throws(FileSystemError) {
        let fd = try RegularFile.open(path, .readOnly)
        defer { SystemCalls.close(fd) }
        var pending: [UInt8] = []
        var start = 0
        var chunk = [UInt8](repeating: 0, count: PageSink.chunk)
        var delivered = 0
        while delivered < min(limit, count) {
            while let (bodyPart, html, next) = Self.record(in: pending, at: start), delivered < min(limit, count) {
                try body(html, bodyPart.isEmpty ? nil : bodyPart)
                delivered += 1
                start = next
            }
            pending.removeFirst(start)
            start = 0
            guard delivered < min(limit, count) else { break }
            let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in try POSIXIO.read(fd, into: buffer) }
            }
            let got: Int
            do { got = try result.get() } catch { throw .io(operation: "read", path: path, errno: error.code) }
            guard got > 0 else { throw .io(operation: "read (\(delivered) of \(count) tiles)", path: path, errno: 0) }
            pending += chunk[0..<got]
        }
    }

    private func flush() throws(FileSystemError) {
        guard !buffer.isEmpty, let file else { return }
        try file.append(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private static func appendField(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = text.utf8
        withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: utf8)
    }

    /// The record at `start` of `bytes` and where the next begins; nil when it is not all there.
    private static func record(in bytes: [UInt8], at start: Int) -> (String, String, Int)? {
        guard let (first, middle) = field(in: bytes, at: start), let (second, end) = field(in: bytes, at: middle) else { return nil }
        return (first, second, end)
    }

    private static func field(in bytes: [UInt8], at start: Int) -> (String, Int)? {
        guard bytes.count - start >= 4 else { return nil }
        var length = 0
        for offset in 0..<4 { length |= Int(bytes[start + offset]) << (8 * offset) }
        let end = start + 4 + length
        guard bytes.count >= end else { return nil }
        return (String(decoding: bytes[(start + 4)..<end], as: UTF8.self), end)
    }
}

/// Pages of tiles whose number is known before the first one comes (a pack's gallery, a spooled
/// section): one page's tiles are held until it is full, then written with its links and the
/// body-part filter of what it shows.
final class PagedTiles {
    private let writer: ReviewWriter
    private let total: Int
    private let pageSize: Int
    private let name: (Int) -> String
    private let title: String
    private let heading: String
    private var tiles: [(html: String, bodyPart: String?)] = []
    private var page = 0

    init(writer: ReviewWriter, total: Int, pageSize: Int, title: String, heading: String, name: @escaping (Int) -> String) {
        self.writer = writer
        self.total = total
        self.pageSize = max(1, pageSize)
        self.title = title
        self.heading = heading
        self.name = name
    }

    var pageCount: Int { (total + pageSize - 1) / pageSize }

    func append(_ html: String, bodyPart: String?) throws(FileSystemError) {
        tiles.append((html, bodyPart))
        if tiles.count == pageSize { try writePage() }
    }

    /// Writes the last page, when it is not full.
    func finish() throws(FileSystemError) {
        if !tiles.isEmpty { try writePage() }
    }

    private func writePage() throws(FileSystemError) {
        page += 1
        let (number, pages, shown) = (page, max(pageCount, page), tiles)
        tiles.removeAll(keepingCapacity: true)
        let bodyParts = Array(Set(shown.compactMap(\.bodyPart))).sorted()
        let pager = ReviewMarkup.pager(
            page: number, pages: pages, total: max(total, (number - 1) * pageSize + shown.count),
            pageSize: pageSize, name: name)
        try writer.writePage(name(number), title: "\(title) — page \(number)") { sink throws(FileSystemError) in
            try sink.append(heading)
            try sink.append(pager + ReviewMarkup.bodyFilter(bodyParts) + "<div class=\"grid\">\n")
            for tile in shown { try sink.append(tile.html) }
            try sink.append("</div>\n" + pager)
        }
    }
}

/// A page's bytes on their way to its file, 64 KiB at a time.
final class PageSink {
    private let file: NewFile
    private var buffer: [UInt8] = []

    init(_ file: NewFile) {
        self.file = file
        buffer.reserveCapacity(Self.chunk)
    }

    static let chunk = 64 * 1024

    func append(_ text: String) throws(FileSystemError) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.chunk { try flush() }
    }

    func flush() throws(FileSystemError) {
        guard !buffer.isEmpty else { return }
        try file.append(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
