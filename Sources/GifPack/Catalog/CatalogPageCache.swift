import Crypto
import Foundation
import GifPackSystem

/// What each list page gave the last run, so that a page whose body has not changed is not parsed,
/// normalised and hashed again: its exercises are copied from the last run's spool instead.
///
/// The last run's ``RecordSpool``, given a name once its catalog was complete
/// (`<cache>/catalog-pages`), is the cache. Its first 64 bytes say where its directory is: for
/// every page, by offset, the SHA-256 of the body as received, the page's exercises (where they
/// are in the file and the SHA-256 of those bytes), its refused records and what the page said
/// (its size, whether it was the last, the total). A page is reused only when its offset and body
/// digest match and its bytes still hash to what was written; anything else about the file that
/// is not as written (a torn write, a flipped bit, another version's layout, other source
/// settings) makes the page, or the whole file, be parsed as if there were no cache.
///
/// A body that holds the API key is never given a digest (nor reused): the file keeps no hash of
/// a text with the key in it, only the redacted records, as packs do.
///
/// ```swift
/// let cache = CatalogPageCache.open(path: layout.catalogPagesPath, key: CatalogPageCache.key(for: source))
/// if let page = cache?.page(offset: 200, body: digest), var bytes = cache?.bytes(of: page) { … }
/// ```
final class CatalogPageCache: Sendable {
    /// What one page gave.
    struct Page: Sendable, Equatable {
        /// The page's `offset` in the list request.
        var offset: Int
        /// SHA-256 of the body as received.
        var body: RecordDigest
        /// The digest that tells a repeated page (``CatalogPager``'s check for a server ignoring `offset`).
        var pageDigest: RecordDigest
        /// The records on the page, usable or not.
        var itemCount: Int
        var isLast: Bool
        var total: Int?
        /// The first record's hash, when the first record was usable.
        var firstRecord: RecordDigest?
        /// The page's exercises in the spool: where they start, how many bytes, how many, their SHA-256.
        var start: Int64
        var length: Int
        var exercises: Int
        var content: RecordDigest
        /// Refused records, by their position on the page.
        var rejections: [Rejection]
    }

    struct Rejection: Sendable, Equatable {
        var position: Int
        var id: String?
        var reason: CatalogRejectionCode
    }

    static let magic = Array("GPCPAGE1".utf8)
    /// A page's exercises are read only up to this size (the largest page a sane catalog has is far smaller).
    static let maxPageBytes = 256 << 20
    static let maxTrailerBytes = 64 << 20

    private let fd: Int32
    private let pages: [Int: Page]
    let tables: RecordSpool.Tables
    /// The file's size when opened: no read goes past it, whatever the directory says.
    private let size: Int64

    private init(fd: Int32, pages: [Int: Page], tables: RecordSpool.Tables, size: Int64) {
        self.fd = fd
        self.pages = pages
        self.tables = tables
        self.size = size
    }

    deinit { SystemCalls.close(fd) }

    /// What the pages' meaning depends on besides their bodies: the source's settings and this
    /// version of gifpack (whose normalisation and spool layout made the file).
    static func key(for source: SourceSettings) -> RecordDigest {
        var hasher = SHA256()
        for part in [
            "gifpack catalog pages 1", BuildOptions.version, source.kind.rawValue, source.baseURL,
            source.resolution.description, String(source.pageSize)
        ] {
            hasher.update(data: Array(part.utf8) + [0])
        }
        return RecordDigest(hasher.finalize())
    }

    /// The cache at `path`, or nil when there is none or it is not usable with `key`.
    static func open(path: String, key: RecordDigest) -> CatalogPageCache? {
        let fd = SystemCalls.open(path, [.readOnly, .closeOnExec])
        guard fd >= 0 else { return nil }
        guard let status = SystemCalls.status(descriptor: fd), SystemCalls.fileType(status) == .regular,
            let (pages, tables) = readDirectory(fd, key: key, size: Int64(status.st_size))
        else {
            SystemCalls.close(fd)
            return nil
        }
        return CatalogPageCache(fd: fd, pages: pages, tables: tables, size: Int64(status.st_size))
    }

    /// How many pages the cache knows.
    var pageCount: Int { pages.count }

    /// The page at `offset` when its body is the one `body` is the digest of.
    func page(offset: Int, body: RecordDigest) -> Page? {
        guard let page = pages[offset], page.body == body else { return nil }
        return page
    }

    /// The page's exercises as the spool wrote them, or nil when they cannot be read or no longer
    /// hash to what was written.
    func bytes(of page: Page) -> [UInt8]? {
        guard page.length >= 0, page.length <= Self.maxPageBytes, page.start <= size - Int64(page.length) else { return nil }
        guard let bytes = Self.read(fd, offset: page.start, length: page.length),
            RecordDigest(SHA256.hash(data: bytes)) == page.content
        else { return nil }
        return bytes
    }

    // MARK: The file

    /// The directory written after the exercises: the key, the spool's tables, then every page.
    static func trailer(key: RecordDigest, tables: RecordSpool.Tables, pages: [Page]) -> [UInt8] {
        var out = ByteWriter()
        out.digest(key)
        out.u32(tables.lists.count)
        for list in tables.lists {
            out.u32(list.count)
            for item in list { out.string(item) }
        }
        out.u32(tables.templates.count)
        for template in tables.templates {
            out.string(template.prefix)
            out.string(template.suffix)
        }
        out.u32(pages.count)
        for page in pages {
            out.u64(UInt64(page.offset))
            out.digest(page.body)
            out.digest(page.pageDigest)
            out.u32(page.itemCount)
            // The total came from the API: written only when it is a count (the pager refuses any
            // other), never converted unchecked.
            let total = page.total.flatMap { UInt64(exactly: $0) }
            out.bytes.append((page.isLast ? 1 : 0) | (total != nil ? 2 : 0) | (page.firstRecord != nil ? 4 : 0))
            out.u64(total ?? 0)
            out.digest(page.firstRecord ?? page.body)
            out.u64(UInt64(page.start))
            out.u64(UInt64(page.length))
            out.u32(page.exercises)
            out.digest(page.content)
            out.u32(page.rejections.count)
            for rejection in page.rejections {
                out.u32(rejection.position)
                out.bytes.append(rejection.id == nil ? 0 : 1)
                out.string(rejection.id ?? "")
                out.string(rejection.reason.rawValue)
            }
        }
        return out.bytes
    }

    /// The 64-byte header: magic, where the trailer is, its length and SHA-256.
    static func header(trailerAt offset: Int64, trailer: [UInt8]) -> [UInt8] {
        var out = ByteWriter()
        out.bytes = magic
        out.u64(UInt64(offset))
        out.u64(UInt64(trailer.count))
        out.digest(RecordDigest(SHA256.hash(data: trailer)))
        out.bytes += [UInt8](repeating: 0, count: Int(RecordSpool.headerLength) - out.bytes.count)
        return out.bytes
    }

    private static func readDirectory(_ fd: Int32, key: RecordDigest, size: Int64) -> ([Int: Page], RecordSpool.Tables)? {
        guard size >= RecordSpool.headerLength, let header = read(fd, offset: 0, length: Int(RecordSpool.headerLength)),
            Array(header[0..<8]) == magic
        else { return nil }
        var head = ByteReader(header)
        head.position = 8
        guard let offset = head.u64(), let length = head.u64(), let digest = head.digest(),
            offset >= UInt64(RecordSpool.headerLength), length <= UInt64(maxTrailerBytes), offset <= UInt64(size),
            length <= UInt64(size) - offset,
            let trailer = read(fd, offset: Int64(offset), length: Int(length)),
            RecordDigest(SHA256.hash(data: trailer)) == digest
        else { return nil }
        var input = ByteReader(trailer)
        guard input.digest() == key else { return nil }
        var tables = RecordSpool.Tables()
        guard let listCount = input.count() else { return nil }
        for _ in 0..<listCount {
            guard let count = input.count() else { return nil }
            var list: [String] = []
            for _ in 0..<count {
                guard let item = input.string() else { return nil }
                list.append(item)
            }
            tables.lists.append(list)
        }
        guard let templateCount = input.count() else { return nil }
        for _ in 0..<templateCount {
            guard let prefix = input.string(), let suffix = input.string() else { return nil }
            tables.templates.append(ImageURLTemplate(prefix: prefix, suffix: suffix))
        }
        guard let pageCount = input.count() else { return nil }
        var pages: [Int: Page] = [:]
        for _ in 0..<pageCount {
            guard let offset = input.u64(), offset <= UInt64(Int.max), let body = input.digest(), let pageDigest = input.digest(),
                let itemCount = input.count(), let flags = input.byte(), let total = input.u64(), total <= UInt64(Int.max),
                let first = input.digest(), let start = input.u64(), start <= UInt64(Int64.max),
                let length = input.u64(), length <= UInt64(maxPageBytes),
                let exercises = input.count(), let content = input.digest(), let rejectionCount = input.count()
            else { return nil }
            var rejections: [Rejection] = []
            for _ in 0..<rejectionCount {
                guard let position = input.count(), let hasID = input.byte(), let id = input.string(),
                    let code = input.string(), let reason = CatalogRejectionCode(rawValue: code)
                else { return nil }
                rejections.append(Rejection(position: position, id: hasID == 1 ? id : nil, reason: reason))
            }
            pages[Int(offset)] = Page(
                offset: Int(offset), body: body, pageDigest: pageDigest, itemCount: itemCount,
                isLast: flags & 1 != 0, total: flags & 2 != 0 ? Int(total) : nil,
                firstRecord: flags & 4 != 0 ? first : nil, start: Int64(start), length: Int(length),
                exercises: exercises, content: content, rejections: rejections)
        }
        guard input.position == trailer.count else { return nil }
        return (pages, tables)
    }

    private static func read(_ fd: Int32, offset: Int64, length: Int) -> [UInt8]? {
        try? POSIXIO.read(fd, count: length, at: offset)
    }
}

/// Little-endian fields appended to a byte array (the page cache's directory).
private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u32(_ value: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { bytes += $0 } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    mutating func digest(_ value: RecordDigest) { bytes += value.bytes }
    mutating func string(_ value: String) {
        u32(value.utf8.count)
        bytes += value.utf8
    }
}

/// Reads what ``ByteWriter`` wrote; every field is nil past the end.
private struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count - position >= count else { return nil }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func byte() -> UInt8? { take(1)?.first }
    mutating func u32() -> UInt32? { take(4).map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } } }
    mutating func u64() -> UInt64? { take(8).map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian } } }
    /// A count (every loop over one reads at least a field per item, so a bad count ends at the end of the bytes).
    mutating func count() -> Int? { u32().map { Int($0) } }
    mutating func digest() -> RecordDigest? { take(32).map { $0.withUnsafeBytes { RecordDigest(rawBytes: $0) } } }
    mutating func string() -> String? {
        guard let count = u32(), let raw = take(Int(count)) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }
}
