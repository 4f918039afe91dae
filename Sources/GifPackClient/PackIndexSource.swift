import Foundation
import GifPackFormat
import GifPackHTTP

/// Where an index lives — a local path or an http(s) URL — and how to reach the packs it names.
///
/// ``load(client:limits:)`` reads and decodes `index.json` (over HTTP with libcurl, following
/// redirects, at most ``PackLimits/maxIndexBytes``), and refuses an index whose format has a newer
/// major version with ``PackClientError/index(_:)`` carrying `IndexError.unsupportedVersion`.
/// ``packLocation(for:)`` resolves a pack's `file` against the index's own location: a sibling
/// path for a local index, a URL in the same directory for a remote one. Pack paths are checked
/// first (relative, no `..`, plain characters), so an index cannot point outside its directory.
///
/// ```swift
/// let source = PackIndexSource("https://cdn.example.com/gifpack/index.json")
/// let index = try await source.load()
/// let packLocation = try source.packLocation(for: index.packs[0])
/// // .url("https://cdn.example.com/gifpack/packs/all-v3.tar.zst")
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

    /// Reads and decodes the index. `client` is used for URLs; without one a short-lived client is
    /// made for the call.
    public func load(client: HTTPClient? = nil, limits: PackLimits = .standard) async throws(PackClientError) -> PackIndex {
        let bytes: Data
        switch location {
        case .file(let path):
            bytes = try await BlockingWork.run("gifpack.index") { () throws(PackClientError) -> Data in
                try Self.readFile(path, maxBytes: limits.maxIndexBytes)
            }
        case .url(let url):
            bytes = try await Self.fetch(url, client: client, maxBytes: limits.maxIndexBytes)
        }
        do { return try PackIndex.decode(from: bytes) } catch { throw .index(error) }
    }

    /// The pack file's location: `file` resolved against the index's directory.
    public func packLocation(for pack: PackDescription) throws(PackClientError) -> Location {
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

    static func readFile(_ path: String, maxBytes: Int64) throws(PackClientError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreadable(location: path, detail: FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: Int(maxBytes) + 1) ?? Data() } catch {
            throw .unreadable(location: path, detail: "\(error)")
        }
        guard Int64(data.count) <= maxBytes else {
            throw .unreadable(location: path, detail: "larger than the \(maxBytes)-byte limit for an index")
        }
        return data
    }

    static func fetch(_ url: String, client: HTTPClient?, maxBytes: Int64) async throws(PackClientError) -> Data {
        let owned: HTTPClient?
        do { owned = client == nil ? try HTTPClient(maxConnections: 2) : nil } catch { throw .transfer(url: url, error) }
        defer { owned?.shutdown() }
        guard let http = client ?? owned else { throw .transfer(url: url, .cancelled) }
        var request = HTTPRequest(url: url, acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        do { response = try await http.data(request, maxBytes: maxBytes) } catch { throw .transfer(url: url, error) }
        guard response.head.status == 200 else {
            throw .unreadable(location: url, detail: "HTTP status \(response.head.status)")
        }
        return Data(response.body)
    }
}
