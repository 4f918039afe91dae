import Foundation
import GifPackHTTP

/// What `gifpack publish` is asked to do.
///
/// ```swift
/// let options = PublishOptions(from: "dist", target: try PublishTargetSpec.parse("s3://cdn/gifpack", endpoint: nil))
/// ```
public struct PublishOptions: Sendable, Equatable {
    public var from: String
    public var target: PublishTargetSpec
    /// Pack versions kept at the target per pack (the manifest's `keep_versions`).
    public var keepVersions: Int = 3
    /// `max-age` of `index.json`, its signature and the report, in seconds.
    public var indexMaxAge: Int = 60
    /// Upload `report.json` too (after the index).
    public var withReport = false
    /// Print the plan; change nothing.
    public var dryRun = false

    public init(from: String, target: PublishTargetSpec, keepVersions: Int = 3, indexMaxAge: Int = 60, withReport: Bool = false,
                dryRun: Bool = false) {
        self.from = from
        self.target = target
        self.keepVersions = keepVersions
        self.indexMaxAge = indexMaxAge
        self.withReport = withReport
        self.dryRun = dryRun
    }
}

/// What a publish did (or, with `dryRun`, would do).
public struct PublishReport: Sendable, Equatable {
    /// Pack keys sent.
    public var uploaded: [String] = []
    /// Pack keys already at the target with the same size and SHA-256.
    public var alreadyThere: [String] = []
    /// Keys deleted by retention (after the new index was live).
    public var deleted: [String] = []
    /// `index.json` was replaced (false: the target already served these bytes).
    public var indexWritten = false
    public var signatureWritten = false
    public var reportWritten = false
    public var dryRun = false
    public var bytesUploaded: Int64 = 0
    /// The published index's sequence (signed indexes).
    public var sequence: Int?
}

/// Publishes a build's output directory to a directory or an S3 bucket: every pack (and posters
/// pack) the index names is uploaded and confirmed (size and SHA-256) before `index.json.minisig` and then
/// `index.json`; packs already there are not sent again; a live index with a higher `sequence`
/// is never replaced; pack files no longer wanted are deleted only once the new index is live,
/// and never one the live index names. See README, "Publishing".
///
/// ```swift
/// let report = try await Publisher(options: options, environment: ProcessInfo.processInfo.environment).run { print($0) }
/// ```
public struct Publisher: Sendable {
    public let options: PublishOptions
    public let environment: [String: String]

    public init(options: PublishOptions, environment: [String: String]) {
        self.options = options
        self.environment = environment
    }

    /// Runs the publish; `say` receives one line per action, in order.
    public func run(say: @Sendable (String) -> Void = { _ in }) async throws(PublishError) -> PublishReport {
        let source = try await PublishSource.load(options.from)
        let client: HTTPClient?
        let target: any PublishTarget
        switch options.target {
        case .directory(let path):
            client = nil
            target = DirectoryTarget(root: PathText.trimmingTrailingSlashes(path))
        case .s3(let bucket, let prefix, let endpoint):
            let http: HTTPClient
            do { http = try HTTPClient(maxConnections: 4) } catch { throw .failed("cannot start HTTP: \(error)") }
            client = http
            target = try S3Target(bucket: bucket, prefix: prefix, endpoint: endpoint, environment: environment, client: http)
        }
        defer { client?.shutdown() }
        return try await publish(source, to: target, say: say)
    }

    func publish(_ source: PublishSource, to target: any PublishTarget, say: (String) -> Void) async throws(PublishError) -> PublishReport {
        var report = PublishReport(dryRun: options.dryRun, sequence: source.index.sequence)
        let live = try await target.readLiveIndex()
        let liveIndex = live.flatMap { try? PackIndex.decode(from: Data($0.bytes)) }
        let indexUnchanged = live?.bytes == source.indexBytes
        if let live, !indexUnchanged {
            try Self.checkNotOlder(source.index, than: liveIndex, liveBytes: live.bytes, target: target.displayName)
        }

        // Packs first, each confirmed.
        var toUpload: [IndexedPackFile] = []
        for pack in source.index.packFiles {
            if let stored = try await target.stat(pack.file), stored.bytes == pack.bytes, stored.sha256 == pack.sha256 {
                report.alreadyThere.append(pack.file)
                say("already there: \(pack.file)")
            } else {
                toUpload.append(pack)
            }
        }
        for pack in toUpload {
            say("\(options.dryRun ? "would upload" : "upload"): \(pack.file) (\(pack.bytes) bytes)")
            report.uploaded.append(pack.file)
            report.bytesUploaded += pack.bytes
            guard !options.dryRun else { continue }
            try await target.putPack(pack.file, from: "\(source.directory)/\(pack.file)", bytes: pack.bytes, sha256: pack.sha256)
            if report.uploaded.count == 1 { PublishCrashPoint.reach(.afterFirstPack) }
        }
        if !options.dryRun { PublishCrashPoint.reach(.beforeIndex) }

        // Then the signature, then the index.
        let signatureKey = "index.json.minisig"
        if let signature = source.signature {
            let stored = try await target.stat(signatureKey)
            if !indexUnchanged || stored?.sha256.map({ $0 != SHA256Hex.of(signature) }) ?? true {
                say("\(options.dryRun ? "would write" : "write"): \(signatureKey)")
                report.signatureWritten = true
                if !options.dryRun {
                    try await target.putMetadataFile(signatureKey, bytes: signature, contentType: PublishSource.signatureContentType,
                                                     maxAge: options.indexMaxAge, replacing: nil, conditional: false)
                    PublishCrashPoint.reach(.afterSignature)
                }
            }
        }
        if indexUnchanged {
            say("index.json: unchanged at the target")
        } else {
            say("\(options.dryRun ? "would write" : "write"): index.json\(source.index.sequence.map { " (sequence \($0))" } ?? "")")
            report.indexWritten = true
            if !options.dryRun {
                // Read again just before replacing: a publisher that got there first wins.
                let now = try await target.readLiveIndex()
                if now?.bytes != live?.bytes {
                    if let now, now.bytes == source.indexBytes {
                        report.indexWritten = false
                    } else {
                        throw .superseded("\(target.displayName): index.json changed while this publish ran; another publisher was faster — nothing was replaced, run again to compare sequences")
                    }
                }
                if report.indexWritten {
                    try await target.putMetadataFile("index.json", bytes: source.indexBytes, contentType: "application/json",
                                                     maxAge: options.indexMaxAge, replacing: live, conditional: true)
                }
            }
        }
        if source.signature == nil, try await target.stat(signatureKey) != nil {
            say("\(options.dryRun ? "would delete" : "delete"): \(signatureKey) (the new index is not signed)")
            if !options.dryRun { try await target.delete(signatureKey) }
        }
        if options.withReport, let bytes = source.report {
            say("\(options.dryRun ? "would write" : "write"): report.json")
            report.reportWritten = true
            if !options.dryRun {
                try await target.putMetadataFile("report.json", bytes: bytes, contentType: "application/json", maxAge: options.indexMaxAge,
                                                 replacing: nil, conditional: false)
            }
        }
        if !options.dryRun { PublishCrashPoint.reach(.beforeRetention) }

        // Retention, once the new index is live: never a file the live index names.
        var protected = Set(source.index.packFiles.map(\.file))
        protected.formUnion(liveIndex?.packFiles.map(\.file) ?? [])
        if !options.dryRun, let current = try await target.readLiveIndex() {
            protected.formUnion((try? PackIndex.decode(from: Data(current.bytes)))?.packFiles.map(\.file) ?? [])
        }
        let stored = try await target.listPackKeys()
        for key in Retention.deletions(stored: stored, protected: protected, keepVersions: options.keepVersions) {
            say("\(options.dryRun ? "would delete" : "delete"): \(key)")
            report.deleted.append(key)
            if !options.dryRun { try await target.delete(key) }
        }
        if !options.dryRun { await target.removeLeftovers() }
        return report
    }

    /// Refuses to replace a live index whose `sequence` is higher than (or, when both carry one,
    /// equal to) the new one's. Unsigned indexes carry none: 0.
    static func checkNotOlder(_ new: PackIndex, than live: PackIndex?, liveBytes: [UInt8], target: String) throws(PublishError) {
        guard let live else { return }
        let liveSequence = live.sequence ?? 0
        let newSequence = new.sequence ?? 0
        if liveSequence > newSequence || (live.sequence != nil && liveSequence == newSequence) {
            throw .superseded("\(target) serves index.json with sequence \(liveSequence); this build's is \(newSequence) — an older or rival build must not replace it (nothing was uploaded; rebuild with --previous-index to continue from the live index)")
        }
    }

    /// Which pack files retention removes: files named `<pack>-v<N>-<hex8>.tar.zst` whose version is
    /// not among the newest `keepVersions` versions of that pack at the target, and which no
    /// protected index names. A posters pack, `<pack>-posters-v<N>-<hex8>.tar.zst`, counts as a pack
    /// of its own name, so its versions are kept and deleted like its pack's. Other files under
    /// `packs/` are left alone.
    enum Retention {
        static func deletions(stored: [String], protected: Set<String>, keepVersions: Int) -> [String] {
            var versions: [String: Set<Int>] = [:]
            var parsed: [(key: String, pack: String, version: Int)] = []
            for key in stored {
                guard let name = parse(key) else { continue }
                versions[name.pack, default: []].insert(name.version)
                parsed.append((key, name.pack, name.version))
            }
            for key in protected {
                if let name = parse(key) { versions[name.pack, default: []].insert(name.version) }
            }
            let kept = versions.mapValues { Set($0.sorted(by: >).prefix(max(1, keepVersions))) }
            return parsed.filter { !protected.contains($0.key) && !(kept[$0.pack]?.contains($0.version) ?? true) }.map(\.key).sorted()
        }

        /// `packs/NAME-vN-xxxxxxxx.tar.zst` → (NAME, N).
        static func parse(_ key: String) -> (pack: String, version: Int)? {
            guard key.hasPrefix("packs/"), key.hasSuffix(".tar.zst") else { return nil }
            let stem = key.dropFirst("packs/".count).dropLast(".tar.zst".count)
            let parts = stem.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count >= 3, let hash = parts.last, hash.count == 8, hash.allSatisfy(\.isHexDigit),
                  let versionPart = parts.dropLast().last, versionPart.hasPrefix("v"), let version = Int(versionPart.dropFirst()) else {
                return nil
            }
            return (parts.dropLast(2).joined(separator: "-"), version)
        }
    }
}

extension PublishSource {
    /// `index.json.minisig` is minisign's text format.
    static let signatureContentType = "text/plain; charset=utf-8"
}
