import Foundation
import GifPackFormat

/// What a build should do: where the catalog comes from, how to fetch, which packs to make and where
/// to put them. Loaded from YAML (or JSON) by ``ManifestLoader``, which validates every key before any
/// network traffic; see the manifest reference in `README.md`.
///
/// ```swift
/// let manifest = try ManifestLoader().load(path: "manifests/demo.yaml", environment: ProcessInfo.processInfo.environment)
/// print(manifest.packs.map(\.name))
/// ```
public struct Manifest: Sendable, Equatable {
    public var source: SourceSettings
    public var fetch: FetchSettings
    /// Never empty: a manifest without packs gets one pack named `all` selecting everything.
    public var packs: [PackSpec]
    public var output: OutputSettings
    public var cache: CacheSettings
    /// The `signing:` block; nil: the index is not signed.
    public var signing: SigningSettings? = nil

    /// Makes the manifest's relative paths (`output.directory`, `cache.directory`, `fetch.ca_file`,
    /// defaults included) relative to `folder`, the folder holding the manifest file, so a run
    /// from another working directory (cron starts in `$HOME`) finds the same files.
    public mutating func resolvePaths(against folder: String) {
        func resolved(_ path: String) -> String {
            if path.hasPrefix("/") { return path }
            let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
            return path == "." ? base : "\(base)/\(path)"
        }
        output.directory = resolved(output.directory)
        cache.directory = resolved(cache.directory)
        fetch.caFile = fetch.caFile.map(resolved)
    }
}

/// How the index is signed: the secret key (read when the manifest is loaded, from the file or
/// environment variable the manifest names — never from the manifest itself) and how long a signed
/// index stays valid. Printing it never shows the key.
///
/// ```yaml
/// signing:
///   secret_key_file: /etc/gifpack/gifpack.key   # or secret_key_env: GIFPACK_SECRET_KEY
///   expires_after: 30d
/// ```
public struct SigningSettings: Sendable, Equatable, CustomStringConvertible {
    /// Where the key came from, for messages: `file /etc/gifpack/gifpack.key` or `environment variable NAME`.
    public var keySource: String
    public var secretKey: MinisignSecretKey
    /// How long after signing the index expires (> 0; default 30 days). A run re-signs an unchanged
    /// index once less than half of this remains.
    public var expiresAfter: Duration = .seconds(30 * 86400)

    public var description: String { "signing with \(secretKey) from \(keySource), expires after \(expiresAfter)" }

    public static func == (lhs: SigningSettings, rhs: SigningSettings) -> Bool {
        lhs.keySource == rhs.keySource && lhs.secretKey.publicKey == rhs.secretKey.publicKey && lhs.expiresAfter == rhs.expiresAfter
    }
}

/// The two API shapes gifpack reads.
public enum SourceKind: String, Sendable, Equatable, CaseIterable {
    case rapidAPI = "exercisedb-rapidapi"
    case v1 = "exercisedb-v1"
}

/// Where the catalog and GIFs come from. The API key itself is never stored here: only the name of the
/// environment variable that holds it, and the key read from it at load time, kept out of every
/// description so it cannot leak into logs.
public struct SourceSettings: Sendable, Equatable {
    public var kind: SourceKind
    public var baseURL: String
    /// Name of the environment variable holding the API key (RapidAPI only).
    public var apiKeyEnvironmentVariable: String?
    public var apiKey: APIKey?
    /// `X-RapidAPI-Host` header value.
    public var hostHeader: String?
    /// The GIF sizes to fetch, never empty (``Resolution/sourceDefault`` alone for the v1 API), in the
    /// order they are fetched: the first for every exercise, then the next (``resolution`` is the
    /// first: that of the packs a 1.2 reader installs).
    public var resolutions: [Resolution]
    public var pageSize: Int
}

extension SourceSettings {
    /// The first resolution listed: fetched first, and the one of the packs that keep their names.
    public var resolution: Resolution { resolutions[0] }
}

/// An API key. Its description is redacted, so printing a manifest, an error or a log line that
/// holds one never reveals it.
public struct APIKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

/// How GIFs are fetched and what a valid GIF may look like.
public struct FetchSettings: Sendable, Equatable {
    /// Requests in flight at once (1...3).
    public var concurrency: Int = 3
    public var connectTimeout: Duration = .seconds(10)
    public var requestTimeout: Duration = .seconds(120)
    public var lowSpeedBytesPerSecond: Int = 1024
    public var lowSpeedTime: Duration = .seconds(30)
    public var maxGIFBytes: Int64 = 8 * 1024 * 1024
    /// Bytes of all catalog pages together (not per page).
    public var maxCatalogBytes: Int64 = 64 * 1024 * 1024
    /// Records of all catalog pages together, refused ones included.
    public var maxCatalogRecords: Int = 50_000
    public var maxWidth: Int = 4096
    public var maxHeight: Int = 4096
    public var maxFrames: Int = 5000
    public var maxTotalPixels: Int = 400_000_000
    /// How many exercises may end up without a GIF before the build refuses to publish.
    public var maxMissing: MissingAllowance = .percent(1)
    /// How many of the last catalog's exercises may be gone from this one before the build stops,
    /// publishing nothing (`fetch.max_removed`, overridden by `build --max-removed`): a count or a
    /// share of the last catalog. Guards against an API answering part of its list.
    public var maxRemoved: MissingAllowance = .percent(10)
    public var retry = RetryPolicy()
    /// Consecutive failed requests that end the build (0: never).
    public var circuitBreaker: Int = 12
    /// Stop scheduling when `x-ratelimit-requests-remaining` falls to this.
    public var quotaReserve: Int = 0
    /// Requests this run may send (catalog pages included); nil: no limit.
    public var maxRequests: Int?
    /// How long this run may keep scheduling requests; nil: no limit.
    public var maxDuration: Duration?
    /// GIFs fetched (or confirmed) more recently than this are not requested at all; nil: always ask
    /// (conditionally).
    public var refreshAfter: Duration? = .seconds(7 * 86400)
    /// A 404 is remembered this long before the image is asked for again.
    public var missingTTL: Duration = .seconds(7 * 86400)
    /// PEM file of the certificate authorities to trust for https (`fetch.ca_file`); nil: the
    /// environment's `CURL_CA_BUNDLE` or `SSL_CERT_FILE`, else the system's bundle.
    public var caFile: String?
}

/// `max_missing` and `max_removed`: a count (`5`) or a share of the catalog (`"2%"`).
public enum MissingAllowance: Sendable, Equatable, CustomStringConvertible {
    case count(Int)
    case percent(Double)

    /// `"5"` (a count from 0) or `"2%"` / `"2.5%"` (a share from 0 to 100); nil for anything else.
    public init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.hasSuffix("%"), let share = Double(text.dropLast()), share.isFinite, (0...100).contains(share) {
            self = .percent(share)
        } else if let count = Int(text), count >= 0 {
            self = .count(count)
        } else {
            return nil
        }
    }

    public func allows(missing: Int, of total: Int) -> Bool {
        switch self {
        case .count(let limit): missing <= limit
        case .percent(let share): Double(missing) <= Double(total) * share / 100 + 1e-9
        }
    }

    public var description: String {
        switch self {
        case .count(let n): "\(n)"
        case .percent(let p): p == p.rounded() && abs(p) < 1e15 ? "\(Int(p))%" : "\(p)%"
        }
    }
}

/// One pack to build: a name (used in file names), a selector, and the resolutions it is made at.
public struct PackSpec: Sendable, Equatable {
    public var name: String
    public var selector: Selector
    /// Some of `source.resolutions` (in their order); nil: every one of them.
    public var resolutions: [Resolution]? = nil

    /// Whether the pack is made at `resolution` of `source`.
    public func takes(_ resolution: Resolution) -> Bool { resolutions?.contains(resolution) ?? true }
}

/// Chooses exercises for a pack. Each non-empty list must match (case-insensitively, any value of the
/// list); an empty selector matches everything.
public struct Selector: Sendable, Equatable {
    public var bodyParts: [String] = []
    public var equipment: [String] = []
    public var targets: [String] = []
    public var ids: [String] = []

    public var isEmpty: Bool { bodyParts.isEmpty && equipment.isEmpty && targets.isEmpty && ids.isEmpty }
}

/// Where packs go and how they are compressed and kept.
public struct OutputSettings: Sendable, Equatable {
    public var directory: String = "dist"
    /// zstd level of every frame (1...19); part of the pinned compression parameters.
    public var zstdLevel: Int32 = 9
    /// Pack versions kept per pack (the current one included); older files are pruned.
    public var keepVersions: Int = 3
    /// Write `source.base_url` into `index.json` (`output.publish_base_url`). Off by default: the
    /// address a build fetched from (a mirror, a proxy, a fixture) is nobody else's business.
    public var publishBaseURL: Bool = false
    /// `output.publish`: where `gifpack build` publishes after a successful build (a directory or
    /// `s3://bucket/prefix`); nil: it does not.
    public var publish: String? = nil
    /// `output.publish_endpoint`: the S3-compatible endpoint for an `s3://` target.
    public var publishEndpoint: String? = nil
    /// `output.index_max_age`: the `Cache-Control` max-age of a published index and signature, in seconds.
    public var indexMaxAge: Int = 60
    /// `output.posters`: longest sides of the still posters (16...512, distinct, ascending); empty: no posters pack.
    public var posterSizes: [Int] = [80]
    /// `output.blurhash.x` / `.y`: BlurHash components (1...9).
    public var blurHashComponentsX: Int = 4
    public var blurHashComponentsY: Int = 3
    /// `output.formats`: the image formats of every resolution's packs, `gif` first (the packs of
    /// `packs[]` and `renditionPacks[]`); `webp` adds a WebP rendition per pack and resolution
    /// (`formatPacks[]`).
    public var formats: [OutputFormat] = [.gif]

    /// Whether the build makes WebP packs.
    public var makesWebP: Bool { formats.contains(.webp) }

    /// How placeholders and posters are derived.
    public var placeholderSettings: PlaceholderSettings {
        PlaceholderSettings(componentsX: blurHashComponentsX, componentsY: blurHashComponentsY, posterSizes: posterSizes)
    }
}

/// An image format a build can write (`output.formats`).
public enum OutputFormat: String, Sendable, Equatable, CaseIterable {
    case gif, webp
}

/// Where the state database, blobs and frames live between runs.
public struct CacheSettings: Sendable, Equatable {
    public var directory: String = ".gifpack-cache"
}

import GifPackHTTP

extension FetchSettings {
    /// The connect, total and low-speed limits of every request.
    var httpTimeouts: HTTPTimeouts {
        HTTPTimeouts(connect: TimeSpan(connectTimeout), total: TimeSpan(requestTimeout), lowSpeedBytesPerSecond: lowSpeedBytesPerSecond,
                     lowSpeedWindow: TimeSpan(lowSpeedTime))
    }
}

extension SourceSettings {
    /// The source's name in the build state: kind and base URL, so the state of one API never
    /// answers for another.
    public var stateKey: String { "\(kind.rawValue) \(baseURL)" }
}
