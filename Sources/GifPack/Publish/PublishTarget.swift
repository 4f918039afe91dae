import Foundation

/// A place packs and the index are published to: a directory (``DirectoryTarget``) or an S3 bucket
/// and prefix (``S3Target``). Keys are relative to the target's root: `index.json`,
/// `index.json.zst`, `index.json.minisig`, `report.json`, `packs/<file>`, `signatures/<sha256>.minisig`.
///
/// ```swift
/// let target = try PublishTargetSpec.parse("s3://cdn/gifpack", endpoint: "http://127.0.0.1:9000")
/// ```
protocol PublishTarget: Sendable {
    /// For messages: the directory, or `s3://bucket/prefix`.
    var displayName: String { get }
    /// The live `index.json` (nil when there is none) with what a conditional replace needs.
    func readLiveIndex() async throws(PublishError) -> LiveIndex?
    /// Size and SHA-256 of a stored object, nil when absent; `sha256` is nil when unknown.
    func stat(_ key: String) async throws(PublishError) -> StoredObject?
    /// A small stored file whole (`index.json.zst`), nil when absent; larger than `maxBytes` is an error.
    func read(_ key: String, maxBytes: Int64) async throws(PublishError) -> [UInt8]?
    /// Stores a pack file and confirms it (size and hash) before returning.
    func putPack(_ key: String, from path: String, bytes: Int64, sha256: String) async throws(PublishError)
    /// Stores a small file with a short max-age; `replacing` (for `index.json`) makes the write
    /// conditional on the live index being the one read, where the store supports it.
    func putMetadataFile(
        _ key: String, bytes: [UInt8], contentType: String, maxAge: Int,
        replacing live: LiveIndex?, conditional: Bool) async throws(PublishError)
    /// Every key directly under `folder` (`packs/` or `signatures/`), with the folder.
    func listKeys(under folder: String) async throws(PublishError) -> [String]
    func delete(_ key: String) async throws(PublishError)
    /// Removes what killed publishes left (temporary files); nothing for stores with atomic PUTs.
    func removeLeftovers() async
}

extension PublishTarget {
    /// Every key under `packs/`.
    func listPackKeys() async throws(PublishError) -> [String] { try await listKeys(under: "packs/") }
}

/// The target's `index.json` as read before publishing.
struct LiveIndex: Sendable {
    var bytes: [UInt8]
    /// The S3 ETag, for `If-Match`.
    var etag: String?
}

/// What a target holds under a key.
struct StoredObject: Sendable, Equatable {
    var bytes: Int64
    var sha256: String?
}

/// The `--to` value: a directory or `s3://bucket/prefix`.
///
/// ```swift
/// PublishTargetSpec.parse("/var/www/gifpack", endpoint: nil)      // .directory("/var/www/gifpack")
/// PublishTargetSpec.parse("s3://cdn/gifpack/", endpoint: nil)    // .s3(bucket: "cdn", prefix: "gifpack/", endpoint: nil)
/// ```
package enum PublishTargetSpec: Sendable, Equatable, CustomStringConvertible {
    case directory(String)
    case s3(bucket: String, prefix: String, endpoint: String?)

    package static func parse(_ text: String, endpoint: String?) throws(PublishError) -> PublishTargetSpec {
        if text.lowercased().hasPrefix("s3://") {
            let rest = text.dropFirst(5)
            let bucket = String(rest.prefix { $0 != "/" })
            var prefix = String(rest.dropFirst(bucket.count)).drop { $0 == "/" }.description
            guard !bucket.isEmpty, bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") }) else {
                throw .usage("--to \(text): the bucket name is missing or holds characters a bucket name cannot have")
            }
            guard !prefix.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else {
                throw .usage("--to \(text): the prefix must not contain \".\" or \"..\" segments")
            }
            if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
            if let endpoint {
                let lowered = endpoint.lowercased()
                guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), !endpoint.contains("?"), !endpoint.contains("@") else {
                    throw .usage("--endpoint \(endpoint): expected http(s)://host[:port] without credentials or query")
                }
            }
            return .s3(bucket: bucket, prefix: prefix, endpoint: endpoint)
        }
        guard endpoint == nil else { throw .usage("--endpoint applies to s3:// targets only") }
        guard !text.isEmpty, !text.contains("://") else {
            throw .usage("--to \(text): expected a directory or s3://bucket/prefix")
        }
        return .directory(text)
    }

    package var description: String {
        switch self {
        case .directory(let path): path
        case .s3(let bucket, let prefix, _): "s3://\(bucket)/\(prefix)"
        }
    }
}
