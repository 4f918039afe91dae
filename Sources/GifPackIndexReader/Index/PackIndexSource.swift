import Crypto
import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport

/// Where an index lives — a local path or an http(s) URL — and how to reach the packs it names.
///
/// ``load(client:limits:)`` reads and decodes `index.json` (over HTTP with the given ``HTTPTransport``,
/// by default ``URLSessionTransport``, following redirects, at most ``PackLimits/maxIndexBytes``: its
/// compressed copy `index.json.zst` first, `index.json` when the publisher has none; a local path only when it is a regular file of
/// at most that size, read as it is), and refuses an index whose format has a newer major version with
/// ``PackClientError/index(_:)`` carrying `IndexError.unsupportedVersion`, and an index that breaks
/// the format's rules (negative sizes, repeated pack names or ids, overlapping frames…) with
/// ``PackClientError/rejected(_:)`` naming the reason.
/// ``packLocation(for:)-(PackDescription)`` resolves a pack's `file` against the index's own location: a sibling
/// path for a local index, a URL in the same directory for a remote one. Pack paths are checked
/// first (relative, no `..`, plain characters), so an index cannot point outside its directory.
///
/// ```swift
/// let source = PackIndexSource("https://cdn.example.com/gifpack/index.json")
/// let index = try await source.load()
/// let packLocation = try source.packLocation(for: index.packs[0])
/// // a daily check: a 304 (no body) when nothing changed; see load(ifChangedFrom:trust:installedSequence:client:limits:)
/// // .url("https://cdn.example.com/gifpack/packs/all-v3-1a2b3c4d.tar.zst")
/// ```
package struct PackIndexSource: Sendable, Equatable, CustomStringConvertible {
    /// A local file or a URL.
    package enum Location: Sendable, Equatable, CustomStringConvertible {
        case file(String)
        case url(String)

        package var description: String {
            switch self {
            case .file(let path): path
            case .url(let url): url
            }
        }
    }

    /// Where `index.json` is.
    package let location: Location

    /// `http://` and `https://` strings are URLs, `file://` URLs and everything else are paths.
    package init(_ pathOrURL: String) {
        let lowered = pathOrURL.lowercased()
        if lowered.hasPrefix("file://") {
            location = .file(URL(string: pathOrURL)?.path ?? String(pathOrURL.dropFirst("file://".count)))
        } else if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            location = .url(pathOrURL)
        } else {
            location = .file(pathOrURL)
        }
    }

    package init(location: Location) {
        self.location = location
    }

    package var description: String { location.description }

    /// Reads and decodes the index. `client` is used for URLs; without one a short-lived
    /// ``URLSessionTransport`` is made for the call.
    /// A local index is read as it is decoded (``streamFile(_:limits:)``), never held whole.
    package func load(client: (any HTTPTransport)? = nil, limits: PackLimits = .standard) async throws(PackClientError) -> PackIndex {
        if case .file(let path) = location {
            return try await BlockingWork.run("gifpack.index") { () throws(PackClientError) -> PackIndex in
                try Self.streamFile(path, limits: limits).index
            }
        }
        return try await loadFetched(trust: nil, installedSequence: nil, client: client, limits: limits).index
    }

    /// Reads a local index synchronously, with the same cap and checks as ``load(client:limits:)``.
    package static func loadFile(_ path: String, limits: PackLimits = .standard) throws(PackClientError) -> PackIndex {
        try streamFile(path, limits: limits).index
    }

    /// Reads a local index in chunks of 64 KiB, each decoded (``PackIndexStream``) and hashed as it
    /// comes, so neither its bytes nor a JSON tree of its exercise lists is ever held (an index of
    /// 100,000 exercises is 18 MB): the index, checked as `decode(_:limits:)` checks it, and the
    /// SHA-256 of exactly the bytes decoded (what names its signature, ``loadSignature(forSHA256:client:timeouts:)``).
    /// The same file rules as `readFile(_:maxBytes:)`: a regular file, at most `maxIndexBytes`.
    package static func streamFile(_ path: String, limits: PackLimits = .standard) throws(PackClientError) -> (index: PackIndex, sha256: String) {
        var stream = PackIndexStream()
        var digest = StreamingSHA256()
        try readFile(path, maxBytes: limits.maxIndexBytes) { (chunk) throws(PackClientError) in
            digest.update(chunk)
            do throws(IndexError) { try stream.feed(chunk) } catch { throw .index(error) }
        }
        let index: PackIndex
        do { index = try stream.finish() } catch { throw .index(error) }
        if let problem = PackDescriptionCheck.indexProblems(in: index, limits: limits).first { throw .rejected(problem) }
        return (index, digest.hex)
    }

    /// Decodes the index (linear-time JSON, bounded nesting; its exercise lists one exercise at a
    /// time, ``PackIndexStream``, never as a JSON tree) and checks it against the format's
    /// rules (``PackDescriptionCheck/indexProblems(in:limits:)``): the first problem is thrown.
    package static func decode(_ bytes: Data, limits: PackLimits) throws(PackClientError) -> PackIndex {
        let index: PackIndex
        do { index = try PackIndexStream.decode(bytes) } catch { throw .index(error) }
        if let problem = PackDescriptionCheck.indexProblems(in: index, limits: limits).first { throw .rejected(problem) }
        return index
    }

    /// Reads the index and its signature (``loadSignature(for:client:timeouts:)``) and accepts the index
    /// only as ``IndexTrust`` says (signed by a trusted key, not expired, `sequence` not below
    /// `installedSequence`); otherwise throws ``PackClientError/untrusted(_:)``.
    package func load(
        trust: IndexTrust, installedSequence: Int? = nil, client: (any HTTPTransport)? = nil,
        limits: PackLimits = .standard
    ) async throws(PackClientError) -> PackIndex {
        try await loadFetched(trust: trust, installedSequence: installedSequence, client: client, limits: limits).index
    }

    /// Loads the index only when it changed since the copy `validators` describe (what an earlier
    /// load returned in ``FetchedIndex/validators``): a conditional GET (`If-None-Match` with the
    /// ETag, `If-Modified-Since` with the Last-Modified date) answered `304` is
    /// ``IndexCheck/notModified``, which costs no body, fetches no signature and decodes nothing
    /// (the copy in hand was checked when it was loaded). Otherwise the index is loaded as
    /// ``load(client:limits:)`` (or, with `trust`, ``load(trust:installedSequence:client:limits:)``)
    /// loads it and returned with its new validators. nil `validators`, or a local index: always loaded.
    ///
    /// Over HTTP the compressed copy `index.json.zst` (``CompressedIndex``) is asked for first; only
    /// when it is not there (404, 410, or 403 from a store that hides missing keys) is `index.json`
    /// itself fetched. A copy that is there but does not decode (or decodes to bytes that do not
    /// verify) is an error, never a silent fallback. Validators belong to the file they came from
    /// and are sent only to it.
    ///
    /// ```swift
    /// let source = PackIndexSource("https://cdn.example.com/gifpack/index.json")
    /// switch try await source.load(ifChangedFrom: saved, trust: trust) {
    /// case .notModified: break                                   // nothing downloaded
    /// case .modified(let fetched):
    ///     use(fetched.index)
    ///     saved = fetched.validators                             // for the next check
    /// }
    /// ```
    ///
    /// `timeouts` limit every request of the load (the index, its signature); their
    /// ``HTTPTimeouts/deadline`` bounds the whole load.
    package func load(
        ifChangedFrom validators: IndexValidators?, trust: IndexTrust? = nil, installedSequence: Int? = nil,
        client: (any HTTPTransport)? = nil, limits: PackLimits = .standard,
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) async throws(PackClientError) -> IndexCheck {
        let timeouts = timeouts.startingCall()
        guard
            case .fetched(let bytes, let newValidators, let wire) = try await fetchBytes(
                ifChangedFrom: validators, client: client, limits: limits, timeouts: timeouts)
        else { return .notModified }
        // Decoded, and with `trust` verified against its signature.
        guard let trust else {
            return .modified(
                FetchedIndex(
                    index: try Self.decode(bytes, limits: limits), bytes: bytes, signature: nil, validators: newValidators,
                    wireBytes: wire))
        }
        let signature = try await loadSignature(for: bytes, client: client, timeouts: timeouts)
        let index = try trust.verify(
            indexBytes: bytes, signature: signature, location: location.description,
            installedSequence: installedSequence, limits: limits)
        return .modified(FetchedIndex(index: index, bytes: bytes, signature: signature, validators: newValidators, wireBytes: wire))
    }

    /// An unconditional load with what it came with (the builder's `--previous-index` reads it so).
    package func loadFetched(
        trust: IndexTrust?, installedSequence: Int?,
        client: (any HTTPTransport)?, limits: PackLimits
    ) async throws(PackClientError) -> FetchedIndex {
        guard
            case .modified(let fetched) = try await load(
                ifChangedFrom: nil, trust: trust, installedSequence: installedSequence,
                client: client, limits: limits)
        else {
            throw .unconditionalNotModified(location.description)
        }
        return fetched
    }

    /// What a fetch of the index's bytes gave.
    package enum BytesFetch: Sendable {
        case notModified
        /// The plain index bytes, the validators of the file they came in, and the body bytes that crossed the wire.
        case fetched(Data, IndexValidators?, wireBytes: Int64)
    }

    /// The plain bytes of the index: a local file as it is; over HTTP `index.json.zst` first,
    /// `index.json` when the copy is missing, each conditional on `validators` when they are its.
    package func fetchBytes(
        ifChangedFrom validators: IndexValidators?, client: (any HTTPTransport)?, limits: PackLimits,
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) async throws(PackClientError) -> BytesFetch {
        guard case .url(let url) = location else {
            let bytes = try await loadBytes(location.description, client: client, maxBytes: limits.maxIndexBytes, optional: false)!
            return .fetched(bytes, nil, wireBytes: Int64(bytes.count))
        }
        let http = client ?? URLSessionTransport(maxConnections: 2)
        let compressedURL = CompressedIndex.beside(url)
        let compressed = try await Self.conditionalGET(
            compressedURL, validators: validators, client: http, maxBytes: limits.maxIndexBytes,
            acceptCompressedBody: false, timeouts: timeouts)
        switch compressed.head.status {
        case 304:
            guard validators?.belong(to: compressedURL) == true else {
                throw .unconditionalNotModified(compressedURL)
            }
            return .notModified
        case 200:
            let plain: [UInt8]
            do { plain = try CompressedIndex.decode(compressed.body, maxBytes: limits.maxIndexBytes) } catch {
                throw .unreadable(
                    location: compressedURL,
                    detail: "not a compressed copy of an index: \(error.reason) "
                        + "(it is not skipped for index.json: the publisher must repair it; gifpack publish rewrites it)")
            }
            return .fetched(Data(plain), IndexValidators(url: compressedURL, head: compressed.head), wireBytes: Int64(compressed.body.count))
        case let status where Self.isNotThere(status: status):
            break  // not published there (an older publisher): the plain index
        default:
            throw .status(compressed.head.status, of: compressedURL)
        }
        let plain = try await Self.conditionalGET(
            url, validators: validators, client: http, maxBytes: limits.maxIndexBytes,
            acceptCompressedBody: true, timeouts: timeouts)
        switch plain.head.status {
        case 304:
            guard validators?.belong(to: url) == true else {
                throw .unconditionalNotModified(url)
            }
            return .notModified
        case 200:
            return .fetched(Data(plain.body), IndexValidators(url: url, head: plain.head), wireBytes: Int64(plain.body.count))
        default:
            throw .status(plain.head.status, of: url)
        }
    }

    /// A GET that carries `validators`' conditions when they are this URL's.
    private static func conditionalGET(
        _ url: String, validators: IndexValidators?, client: any HTTPTransport, maxBytes: Int64,
        acceptCompressedBody: Bool, timeouts: HTTPTimeouts
    ) async throws(PackClientError) -> HTTPDataResponse {
        var request = HTTPRequest(url: url, timeouts: timeouts, acceptCompressedBody: acceptCompressedBody)
        request.followRedirects = true
        if let validators, validators.belong(to: url) {
            if let etag = validators.etag { request.headers.append(name: "If-None-Match", value: etag) }
            if let date = validators.lastModified { request.headers.append(name: "If-Modified-Since", value: date) }
        }
        do { return try await client.data(request, maxBytes: maxBytes) } catch { throw .transfer(url: url, error) }
    }

    /// The signature of the index whose bytes are `indexBytes`: `signatures/<sha256>.minisig` beside
    /// the index (named by those bytes, so it is the signature of exactly them whenever the index
    /// was read), or, when there is none (a target published by an older version, or signed with stock
    /// minisign), `index.json.minisig` beside it; nil when neither exists. Over HTTP "not there" is a
    /// 404, a 410 or a 403 (what a bucket that allows GetObject but not ListBucket answers for a
    /// missing key), as for `index.json.zst`; any other status is an error.
    package func loadSignature(
        for indexBytes: Data, client: (any HTTPTransport)? = nil,
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) async throws(PackClientError) -> Data? {
        try await loadSignature(forSHA256: Hex.lowercase(SHA256.hash(data: indexBytes)), client: client, timeouts: timeouts)
    }

    /// ``loadSignature(for:client:timeouts:)`` of the index whose bytes have this SHA-256 (lowercase hex).
    package func loadSignature(
        forSHA256 indexSHA256: String, client: (any HTTPTransport)? = nil,
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) async throws(PackClientError) -> Data? {
        let timeouts = timeouts.startingCall()
        for candidate in SignatureLocation.lookupOrder(location.description, indexSHA256: indexSHA256) {
            if let signature = try await loadBytes(
                candidate, client: client, maxBytes: Self.maxSignatureBytes, optional: true,
                timeouts: timeouts)
            {
                return signature
            }
        }
        return nil
    }

    /// The most bytes a signature file may have (a minisign signature has a few hundred).
    static let maxSignatureBytes: Int64 = 4096

    /// A file or URL of the same kind as the index; `optional`: nil when it does not exist
    /// (``isNotThere(status:)`` over HTTP).
    private func loadBytes(
        _ target: String, client: (any HTTPTransport)?, maxBytes: Int64,
        optional: Bool, timeouts: HTTPTimeouts = HTTPTimeouts()
    ) async throws(PackClientError) -> Data? {
        switch location {
        case .file:
            return try await BlockingWork.run("gifpack.index") { () throws(PackClientError) -> Data? in
                if optional && !FileManager.default.fileExists(atPath: target) { return nil }
                return try Self.readFile(target, maxBytes: maxBytes)
            }
        case .url:
            return try await Self.fetch(target, client: client, maxBytes: maxBytes, notFoundIsNil: optional, timeouts: timeouts)
        }
    }

    /// The pack file's location: `file` resolved against the index's directory.
    package func packLocation(for pack: PackDescription) throws(PackClientError) -> Location {
        try fileLocation(pack.file, pack: pack.name)
    }

    /// A posters pack's location (format 1.2), resolved like ``packLocation(for:)``.
    package func packLocation(for posters: PosterPackDescription) throws(PackClientError) -> Location {
        try fileLocation(posters.file, pack: posters.name)
    }

    private func fileLocation(_ file: String, pack name: String) throws(PackClientError) -> Location {
        let pack = (file: file, name: name)
        if let (reason, detail) = SafePath.problem(in: pack.file) {
            throw .rejected(PackRejection(reason, pack: SafePath.printable(pack.name), entry: SafePath.printable(pack.file), detail: detail))
        }
        guard PackDescriptionCheck.isPlainFilePath(pack.file) else {
            throw .rejected(
                PackRejection(
                    .unsafeName, pack: SafePath.printable(pack.name), entry: SafePath.printable(pack.file),
                    detail: "the pack file path must use only A-Z a-z 0-9 . _ - /"))
        }
        switch location {
        case .file(let path):
            let directory = PathText.parent(path)
            return .file(directory == "." ? pack.file : directory == "/" ? "/\(pack.file)" : "\(directory)/\(pack.file)")
        case .url(let url):
            let withoutQuery = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard let slash = withoutQuery.lastIndex(of: "/") else { return .url(pack.file) }
            return .url(String(withoutQuery[...slash]) + pack.file)
        }
    }

    /// True for an answer that says an optional file (`index.json.zst`, a signature) is not
    /// published: 404, 410, or 403 from a store that hides missing keys (S3 without ListBucket).
    static func isNotThere(status: Int) -> Bool { status == 404 || status == 410 || status == 403 }

    static func fetch(
        _ url: String, client: (any HTTPTransport)?, maxBytes: Int64,
        notFoundIsNil: Bool = false, timeouts: HTTPTimeouts = HTTPTimeouts()
    ) async throws(PackClientError) -> Data? {
        let http = client ?? URLSessionTransport(maxConnections: 2)
        var request = HTTPRequest(url: url, timeouts: timeouts, acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        do { response = try await http.data(request, maxBytes: maxBytes) } catch { throw .transfer(url: url, error) }
        if notFoundIsNil && isNotThere(status: response.head.status) { return nil }
        guard response.head.status == 200 else {
            throw .status(response.head.status, of: url)
        }
        return Data(response.body)
    }
}

/// What identifies one copy of a remote index for a conditional request: the URL of the file it
/// came in (`index.json.zst` or `index.json`), its `ETag` and its `Last-Modified` date. The URL is
/// kept without a user name or password (``URLCredentials``): validators are written to disk (the
/// install manifest, the lazy cache's slots).
///
/// ```swift
/// let saved = fetched.validators          // keep it with what was installed
/// _ = try await source.load(ifChangedFrom: saved)
/// ```
package struct IndexValidators: Sendable, Equatable, Codable {
    /// The URL these validators were served for, without credentials; they are sent to it only.
    package var url: String
    package var etag: String?
    package var lastModified: String?

    package init(url: String, etag: String?, lastModified: String?) {
        self.url = URLCredentials.redacted(url)
        self.etag = etag
        self.lastModified = lastModified
    }

    /// True when these are the validators of `url` (the URL compared without credentials).
    package func belong(to url: String) -> Bool {
        URLCredentials.redacted(self.url) == URLCredentials.redacted(url)
    }

    /// From a response head; nil when it has neither field (nothing to make a request conditional on).
    package init?(url: String, head: HTTPResponseHead) {
        let etag = head.headers["etag"].flatMap(Self.clean)
        let date = head.headers["last-modified"].flatMap(Self.clean)
        guard etag != nil || date != nil else { return nil }
        self.init(url: url, etag: etag, lastModified: date)
    }

    /// A header value fit to be sent back: printable ASCII, at most 256 bytes; anything else is dropped.
    private static func clean(_ value: String) -> String? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 256, trimmed.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return trimmed
    }
}

/// What ``PackIndexSource/load(ifChangedFrom:trust:installedSequence:client:limits:timeouts:)`` found.
package enum IndexCheck: Sendable {
    /// The server answered `304`: the copy the validators describe is current.
    case notModified
    /// A new (or first) index, decoded and, with trusted keys, verified.
    case modified(FetchedIndex)
}

/// An index as loaded: decoded, its plain bytes, its signature (when trusted keys checked it) and
/// the validators of the file it came in.
package struct FetchedIndex: Sendable {
    package var index: PackIndex
    /// The plain `index.json` bytes (decompressed when the copy came as `index.json.zst`).
    package var bytes: Data
    /// The signature that verified `bytes` (loads with trusted keys only).
    package var signature: Data?
    /// What to pass to the next ``PackIndexSource/load(ifChangedFrom:trust:installedSequence:client:limits:timeouts:)``;
    /// nil for a local index, or a server that sent neither `ETag` nor `Last-Modified`.
    package var validators: IndexValidators?
    /// Body bytes received for the index (the compressed copy's size when it came compressed).
    package var wireBytes: Int64
}

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
    package static func readFile(
        _ path: String, maxBytes: Int64,
        chunks body: (UnsafeRawBufferPointer) throws(PackClientError) -> Void
    ) throws(PackClientError) {
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
