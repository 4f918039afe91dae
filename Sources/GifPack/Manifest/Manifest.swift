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
package struct Manifest: Sendable, Equatable {
    package var source: SourceSettings
    package var fetch: FetchSettings
    /// Never empty: a manifest without packs gets one pack named `all` selecting everything.
    package var packs: [PackSpec]
    package var output: OutputSettings
    package var cache: CacheSettings
    /// The `signing:` block; nil: the index is not signed.
    package var signing: SigningSettings? = nil

    /// Makes the manifest's relative paths (`output.directory`, `cache.directory`, `fetch.ca_file`,
    /// defaults included) relative to `folder`, the folder holding the manifest file, so a run
    /// from another working directory (cron starts in `$HOME`) finds the same files.
    package mutating func resolvePaths(against folder: String) {
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
package struct SigningSettings: Sendable, Equatable, CustomStringConvertible {
    /// Where the key came from, for messages: `file /etc/gifpack/gifpack.key` or `environment variable NAME`.
    package var keySource: String
    package var secretKey: MinisignSecretKey
    /// How long after signing the index expires (> 0; default 30 days). A run re-signs an unchanged
    /// index once less than half of this remains.
    package var expiresAfter: Duration = .seconds(30 * 86400)

    package var description: String { "signing with \(secretKey) from \(keySource), expires after \(expiresAfter)" }

    package static func == (lhs: SigningSettings, rhs: SigningSettings) -> Bool {
        lhs.keySource == rhs.keySource && lhs.secretKey.publicKey == rhs.secretKey.publicKey && lhs.expiresAfter == rhs.expiresAfter
    }
}

/// The two API shapes gifpack reads.
package enum SourceKind: String, Sendable, Equatable, CaseIterable {
    case rapidAPI = "exercisedb-rapidapi"
    case v1 = "exercisedb-v1"
}

/// Where the catalog and GIFs come from. The API key itself is never stored here: only the name of the
/// environment variable that holds it, and the key read from it at load time, kept out of every
/// description so it cannot leak into logs.
package struct SourceSettings: Sendable, Equatable {
    package var kind: SourceKind
    package var baseURL: String
    /// Name of the environment variable holding the API key (RapidAPI only).
    package var apiKeyEnvironmentVariable: String?
    package var apiKey: APIKey?
    /// `X-RapidAPI-Host` header value.
    package var hostHeader: String?
    /// The GIF sizes to fetch, never empty (``Resolution/sourceDefault`` alone for the v1 API), in the
    /// order they are fetched: the first for every exercise, then the next (``resolution`` is the
    /// first: that of the packs a 1.2 reader installs).
    package var resolutions: [Resolution]
    package var pageSize: Int
}

extension SourceSettings {
    /// The first resolution listed: fetched first, and the one of the packs that keep their names.
    package var resolution: Resolution { resolutions[0] }
}

/// An API key. Its description is redacted, so printing a manifest, an error or a log line that
/// holds one never reveals it.
package struct APIKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    package let value: String
    package init(_ value: String) { self.value = value }
    package var description: String { "<redacted>" }
    package var debugDescription: String { "<redacted>" }
}

/// How GIFs are fetched and what a valid GIF may look like.
package struct FetchSettings: Sendable, Equatable {
    /// Requests in flight at once (1...3).
    package var concurrency: Int = 3
    package var connectTimeout: Duration = .seconds(10)
    package var requestTimeout: Duration = .seconds(120)
    package var lowSpeedBytesPerSecond: Int = 1024
    package var lowSpeedTime: Duration = .seconds(30)
    package var maxGIFBytes: Int64 = 8 * 1024 * 1024
    /// Bytes of all catalog pages together (not per page).
    package var maxCatalogBytes: Int64 = 64 * 1024 * 1024
    /// Records of all catalog pages together, refused ones included.
    package var maxCatalogRecords: Int = 50_000
    package var maxWidth: Int = 4096
    package var maxHeight: Int = 4096
    package var maxFrames: Int = 5000
    package var maxTotalPixels: Int = 400_000_000
    /// How many exercises may end up without a GIF before the build refuses to write its packs.
    package var maxMissing: MissingAllowance = .percent(1)
    /// How many of the last catalog's exercises may be gone from this one before the build stops,
    /// writing no pack or index (`fetch.max_removed`, overridden by `build --max-removed`): a count or a
    /// share of the last catalog. Guards against an API answering part of its list.
    package var maxRemoved: MissingAllowance = .percent(10)
    package var retry = RetryPolicy()
    /// Consecutive failed requests that end the build (0: never).
    package var circuitBreaker: Int = 12
    /// Stop scheduling when `x-ratelimit-requests-remaining` falls to this.
    package var quotaReserve: Int = 0
    /// Requests this run may send (catalog pages included); nil: no limit.
    package var maxRequests: Int?
    /// How long this run may keep scheduling requests; nil: no limit.
    package var maxDuration: Duration?
    /// GIFs fetched (or confirmed) more recently than this are not requested at all; nil: always ask
    /// (conditionally).
    package var refreshAfter: Duration? = .seconds(7 * 86400)
    /// A 404 is remembered this long before the image is asked for again.
    package var missingTTL: Duration = .seconds(7 * 86400)
    /// PEM file of the certificate authorities to trust for https (`fetch.ca_file`); nil: the
    /// environment's `CURL_CA_BUNDLE` or `SSL_CERT_FILE`, else the system's bundle.
    package var caFile: String?
}

/// `max_missing` and `max_removed`: a count (`5`) or a share of the catalog (`"2%"`).
package enum MissingAllowance: Sendable, Equatable, CustomStringConvertible {
    case count(Int)
    case percent(Double)

    /// `"5"` (a count from 0) or `"2%"` / `"2.5%"` (a share from 0 to 100); nil for anything else.
    package init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.hasSuffix("%"), let share = Double(text.dropLast()), share.isFinite, (0...100).contains(share) {
            self = .percent(share)
        } else if let count = Int(text), count >= 0 {
            self = .count(count)
        } else {
            return nil
        }
    }

    package func allows(missing: Int, of total: Int) -> Bool {
        switch self {
        case .count(let limit): missing <= limit
        case .percent(let share): Double(missing) <= Double(total) * share / 100 + 1e-9
        }
    }

    package var description: String {
        switch self {
        case .count(let n): "\(n)"
        case .percent(let p): p == p.rounded() && abs(p) < 1e15 ? "\(Int(p))%" : "\(p)%"
        }
    }
}

/// One pack to build: a name (used in file names), a selector, and the resolutions it is made at.
package struct PackSpec: Sendable, Equatable {
    package var name: String
    package var selector: Selector
    /// Some of `source.resolutions` (in their order); nil: every one of them.
    package var resolutions: [Resolution]? = nil

    /// Whether the pack is made at `resolution` of `source`.
    package func takes(_ resolution: Resolution) -> Bool { resolutions?.contains(resolution) ?? true }
}

/// Chooses exercises for a pack. Each non-empty list must match (case-insensitively, any value of the
/// list); an empty selector matches everything.
package struct Selector: Sendable, Equatable {
    package var bodyParts: [String] = []
    package var equipment: [String] = []
    package var targets: [String] = []
    package var ids: [String] = []

    package var isEmpty: Bool { bodyParts.isEmpty && equipment.isEmpty && targets.isEmpty && ids.isEmpty }
}

/// Where packs go and how they are compressed and kept.
package struct OutputSettings: Sendable, Equatable {
    package var directory: String = "dist"
    /// zstd level of every frame (1...19); part of the pinned compression parameters.
    package var zstdLevel: Int32 = 9
    /// Pack versions kept per pack (the current one included); older files are pruned.
    package var keepVersions: Int = 3
    /// Write `source.base_url` into `index.json` (`output.publish_base_url`, the key's historical
    /// name). Off by default: the address a build fetched from (a mirror, a proxy, a fixture) is
    /// nobody else's business.
    package var writesBaseURL: Bool = false
    /// `output.publish`: where `gifpack build` publishes after a successful build (a directory or
    /// `s3://bucket/prefix`); nil: it does not.
    package var publish: String? = nil
    /// `output.publish_endpoint`: the S3-compatible endpoint for an `s3://` target.
    package var publishEndpoint: String? = nil
    /// `output.index_max_age`: the `Cache-Control` max-age of a published index and signature, in seconds.
    package var indexMaxAge: Int = 60
    /// `output.posters`: longest sides of the still posters (16...512, distinct, ascending); empty: no posters pack.
    package var posterSizes: [Int] = [80]
    /// `output.blurhash.x` / `.y`: BlurHash components (1...9).
    package var blurHashComponentsX: Int = 4
    package var blurHashComponentsY: Int = 3
    /// `output.formats`: the image formats of every resolution's packs, `gif` first (the packs of
    /// `packs[]` and `renditionPacks[]`); `webp` adds a WebP rendition per pack and resolution
    /// (`formatPacks[]`).
    package var formats: [OutputFormat] = [.gif]

    /// Whether the build makes WebP packs.
    package var makesWebP: Bool { formats.contains(.webp) }

    /// How placeholders and posters are derived.
    package var placeholderSettings: PlaceholderSettings {
        PlaceholderSettings(componentsX: blurHashComponentsX, componentsY: blurHashComponentsY, posterSizes: posterSizes)
    }
}

/// An image format a build can write (`output.formats`).
package enum OutputFormat: String, Sendable, Equatable, CaseIterable {
    case gif, webp
}

/// Where the state database, blobs and frames live between runs.
package struct CacheSettings: Sendable, Equatable {
    package var directory: String = ".gifpack-cache"
}

import GifPackHTTP

extension FetchSettings {
    /// The connect, total and low-speed limits of every request.
    var httpTimeouts: HTTPTimeouts {
        HTTPTimeouts(
            connect: TimeSpan(connectTimeout), total: TimeSpan(requestTimeout), lowSpeedBytesPerSecond: lowSpeedBytesPerSecond,
            lowSpeedWindow: TimeSpan(lowSpeedTime))
    }
}

extension SourceSettings {
    /// The source's name in the build state: kind and base URL, so the state of one API never
    /// answers for another.
    package var stateKey: String { "\(kind.rawValue) \(baseURL)" }
}
