import Crypto
import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport

/// Where an index lives — a local path or an http(s) URL — and how to reach the packs it names.
///
/// ``load(client:limits:)`` reads and decodes `index.json` (over HTTP with the given ``HTTPTransport``,
/// by default ``URLSessionTransport``, following redirects, at most ``PackLimits/maxIndexBytes``; a local path only when it is a regular file of
/// at most that size), and refuses an index whose format has a newer major version with
/// ``PackClientError/index(_:)`` carrying `IndexError.unsupportedVersion`, and an index that breaks
/// the format's rules (negative sizes, repeated pack names or ids, overlapping frames…) with
/// ``PackClientError/rejected(_:)`` naming the reason.
/// ``packLocation(for:)`` resolves a pack's `file` against the index's own location: a sibling
/// path for a local index, a URL in the same directory for a remote one. Pack paths are checked
/// first (relative, no `..`, plain characters), so an index cannot point outside its directory.
///
/// ```swift
/// let source = PackIndexSource("https://cdn.example.com/gifpack/index.json")
/// let index = try await source.load()
/// let packLocation = try source.packLocation(for: index.packs[0])
/// // .url("https://cdn.example.com/gifpack/packs/all-v3-1a2b3c4d.tar.zst")
/// ```
public struct PackIndexSource: Sendable, Equatable, CustomStringConvertible {
    /// A local file or a URL.
    public enum Location: Sendable, Equatable, CustomStringConvertible {
        case file(String)
        case url(String)

        public var description: String {
            switch self {
            case .file(let path): path
            case .url(let url): url
            }
        }
    }

    /// Where `index.json` is.
    public let location: Location

    /// `http://` and `https://` strings are URLs, `file://` URLs and everything else are paths.
    public init(_ pathOrURL: String) {
        let lowered = pathOrURL.lowercased()
        if lowered.hasPrefix("file://") {
            location = .file(URL(string: pathOrURL)?.path ?? String(pathOrURL.dropFirst("file://".count)))
        } else if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            location = .url(pathOrURL)
        } else {
            location = .file(pathOrURL)
        }
    }

    public init(location: Location) {
        self.location = location
    }

    public var description: String { location.description }

    /// Reads and decodes the index. `client` is used for URLs; without one a short-lived
    /// ``URLSessionTransport`` is made for the call.
    public func load(client: (any HTTPTransport)? = nil, limits: PackLimits = .standard) async throws(PackClientError) -> PackIndex {
        let bytes = try await loadBytes(location.description, client: client, maxBytes: limits.maxIndexBytes, optional: false)!
        return try Self.decode(bytes, limits: limits)
    }

    /// Reads a local index synchronously, with the same cap and checks as ``load(client:limits:)``.
    public static func loadFile(_ path: String, limits: PackLimits = .standard) throws(PackClientError) -> PackIndex {
        try decode(try readFile(path, maxBytes: limits.maxIndexBytes), limits: limits)
    }

    /// Decodes the index (linear-time JSON, bounded nesting) and checks it against the format's
    /// rules (``PackDescriptionCheck/indexProblems(in:limits:)``): the first problem is thrown.
    static func decode(_ bytes: Data, limits: PackLimits) throws(PackClientError) -> PackIndex {
        let index: PackIndex
        do { index = try PackIndex.decode(from: bytes) } catch { throw .index(error) }
        if let problem = PackDescriptionCheck.indexProblems(in: index, limits: limits).first { throw .rejected(problem) }
        return index
    }

    /// Reads the index and its signature (``loadSignature(for:client:)``) and accepts the index
    /// only as ``IndexTrust`` says (signed by a trusted key, not expired, `sequence` not below
    /// `installedSequence`); otherwise throws ``PackClientError/untrusted(_:)``.
    public func load(trust: IndexTrust, installedSequence: Int? = nil, client: (any HTTPTransport)? = nil,
                     limits: PackLimits = .standard) async throws(PackClientError) -> PackIndex {
        let bytes = try await loadBytes(location.description, client: client, maxBytes: limits.maxIndexBytes, optional: false)!
        let signature = try await loadSignature(for: bytes, client: client)
        return try trust.verify(indexBytes: bytes, signature: signature, location: location.description,
                                installedSequence: installedSequence, limits: limits)
    }

    /// The signature of the index whose bytes are `indexBytes`: `signatures/<sha256>.minisig` beside
    /// the index (named by those bytes, so it is the signature of exactly them whenever the index
    /// was read), or, when there is none (a target published by an older version), `index.json.minisig`
    /// beside it; nil when neither exists.
    public func loadSignature(for indexBytes: Data, client: (any HTTPTransport)? = nil) async throws(PackClientError) -> Data? {
        for candidate in SignatureLocation.lookupOrder(location.description, indexSHA256: Hex.lowercase(SHA256.hash(data: indexBytes))) {
            if let signature = try await loadBytes(candidate, client: client, maxBytes: Self.maxSignatureBytes, optional: true) {
                return signature
            }
        }
        return nil
    }

    /// The most bytes a signature file may have (a minisign signature has a few hundred).
    static let maxSignatureBytes: Int64 = 4096

    /// Where the index's signature is: `index.json.minisig` beside it.
    public var signatureLocation: String { SignatureLocation.beside(location.description) }

    /// Where the signature of the index with these bytes is published: `signatures/<sha256>.minisig` beside it.
    public func signatureLocation(forIndex indexBytes: Data) -> String {
        SignatureLocation.hashNamed(location.description, indexSHA256: Hex.lowercase(SHA256.hash(data: indexBytes)))
    }

    /// A file or URL of the same kind as the index; `optional`: nil when it does not exist (404).
    private func loadBytes(_ target: String, client: (any HTTPTransport)?, maxBytes: Int64,
                           optional: Bool) async throws(PackClientError) -> Data? {
        switch location {
        case .file:
            return try await BlockingWork.run("gifpack.index") { () throws(PackClientError) -> Data? in
                if optional && !FileManager.default.fileExists(atPath: target) { return nil }
                return try Self.readFile(target, maxBytes: maxBytes)
            }
        case .url:
            return try await Self.fetch(target, client: client, maxBytes: maxBytes, notFoundIsNil: optional)
        }
    }

    /// The pack file's location: `file` resolved against the index's directory.
    public func packLocation(for pack: PackDescription) throws(PackClientError) -> Location {
        try fileLocation(pack.file, pack: pack.name)
    }

    /// A posters pack's location (format 1.2), resolved like ``packLocation(for:)``.
    public func packLocation(for posters: PosterPackDescription) throws(PackClientError) -> Location {
        try fileLocation(posters.file, pack: posters.name)
    }

    private func fileLocation(_ file: String, pack name: String) throws(PackClientError) -> Location {
        let pack = (file: file, name: name)
        if let (reason, detail) = SafePath.problem(in: pack.file) {
            throw .rejected(PackRejection(reason, pack: SafePath.printable(pack.name), entry: SafePath.printable(pack.file), detail: detail))
        }
        guard PackDescriptionCheck.isPlainFilePath(pack.file) else {
            throw .rejected(PackRejection(.unsafeName, pack: SafePath.printable(pack.name), entry: SafePath.printable(pack.file),
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

    /// Reads a whole local file of at most `maxBytes` (an index or an install manifest).
    ///
    /// Only a regular file is read: the path is opened with `O_NONBLOCK` (so a FIFO without a
    /// writer cannot block the open) and checked with `fstat` before any read, which refuses a FIFO,
    /// socket, device or directory at once, and a file larger than `maxBytes` without reading it.
    static func readFile(_ path: String, maxBytes: Int64) throws(PackClientError) -> Data {
        let fd = SystemCalls.open(path, [.readOnly, .nonBlocking, .closeOnExec, .noControllingTerminal])
        guard fd >= 0 else {
            let code = Errno.current
            throw .unreadable(location: path, detail: code == .noSuchFileOrDirectory ? "no such file" : SystemCalls.errorText(code.code))
        }
        defer { SystemCalls.close(fd) }
        guard let info = SystemCalls.status(descriptor: fd) else {
            throw .unreadable(location: path, detail: SystemCalls.errorText(Errno.current.code))
        }
        guard SystemCalls.fileType(info) == .regular else {
            throw .unreadable(location: path, detail: "not a regular file (\(FileKind.name(info.st_mode)))")
        }
        guard Int64(info.st_size) <= maxBytes else {
            throw .unreadable(location: path, detail: "\(info.st_size) bytes, larger than the \(maxBytes)-byte limit")
        }
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

    static func fetch(_ url: String, client: (any HTTPTransport)?, maxBytes: Int64,
                      notFoundIsNil: Bool = false) async throws(PackClientError) -> Data? {
        let http = client ?? URLSessionTransport(maxConnections: 2)
        var request = HTTPRequest(url: url, acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        do { response = try await http.data(request, maxBytes: maxBytes) } catch { throw .transfer(url: url, error) }
        if notFoundIsNil && (response.head.status == 404 || response.head.status == 410) { return nil }
        guard response.head.status == 200 else {
            throw .unreadable(location: url, detail: "HTTP status \(response.head.status)")
        }
        return Data(response.body)
    }
}
