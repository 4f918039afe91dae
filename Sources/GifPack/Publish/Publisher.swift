import Foundation
import GifPackHTTP
import GifPackIndexReader

/// What `gifpack publish` is asked to do.
///
/// ```swift
/// let options = PublishOptions(from: "dist", target: try PublishTargetSpec.parse("s3://cdn/gifpack", endpoint: nil))
/// ```
package struct PublishOptions: Sendable, Equatable {
    package var from: String
    package var target: PublishTargetSpec
    /// Pack versions kept at the target per pack (the manifest's `keep_versions`).
    package var keepVersions: Int = 3
    /// `max-age` of `index.json`, its signature and the report, in seconds.
    package var indexMaxAge: Int = 60
    /// Upload `report.json` too (after the index).
    package var withReport = false
    /// Print the plan; change nothing.
    package var dryRun = false
    /// Replace a live `index.json` that does not parse (without it such a target is refused, exit 1).
    package var replaceUnreadableIndex = false

    package init(
        from: String, target: PublishTargetSpec, keepVersions: Int = 3, indexMaxAge: Int = 60, withReport: Bool = false,
        dryRun: Bool = false, replaceUnreadableIndex: Bool = false
    ) {
        self.from = from
        self.target = target
        self.keepVersions = keepVersions
        self.indexMaxAge = indexMaxAge
        self.withReport = withReport
        self.dryRun = dryRun
        self.replaceUnreadableIndex = replaceUnreadableIndex
    }
}

/// What a publish did (or, with `dryRun`, would do).
package struct PublishReport: Sendable, Equatable {
    /// Pack keys sent.
    package var uploaded: [String] = []
    /// Pack keys already at the target with the same size and SHA-256.
    package var alreadyThere: [String] = []
    /// Keys deleted by retention (after the new index was live).
    package var deleted: [String] = []
    /// `index.json` was replaced (false: the target already served these bytes).
    package var indexWritten = false
    /// The index's signature was written (`signatures/<sha256>.minisig` or `index.json.minisig`).
    package var signatureWritten = false
    /// `index.json.zst` was written (new, or repaired: it did not decode to the live index).
    package var compressedIndexWritten = false
    package var reportWritten = false
    package var dryRun = false
    package var bytesUploaded: Int64 = 0
    /// The published index's sequence (signed indexes).
    package var sequence: Int?
}

/// Publishes a build's output directory to a directory or an S3 bucket: every pack (and posters
/// pack) the index names is uploaded and confirmed (size and SHA-256), then the index's signature
/// under the name of the index's bytes (`signatures/<sha256>.minisig`, confirmed), then `index.json`
/// (conditionally: a publisher that got there first wins), then its compressed copy
/// `index.json.zst` (made to decode to the live index, so a stale copy is repaired), then
/// `index.json.minisig` beside it for stock minisign. So at any moment — during a publish, after a failed, killed or lost one — the
/// index a client reads has a signature under its hash. Packs already there are not sent again;
/// a live index with a higher `sequence`, or of a newer format, is never replaced; one that does
/// not parse only with ``PublishOptions/replaceUnreadableIndex``. Pack files and signatures no
/// longer wanted are deleted only once the new index is live, never one of the index that was
/// live, and nothing when a live index cannot be read. See README, "Publishing", and docs/FORMAT.md.
///
/// ```swift
/// let report = try await Publisher(options: options, environment: ProcessInfo.processInfo.environment).run { print($0) }
/// ```
package struct Publisher: Sendable {
    package let options: PublishOptions
    package let environment: [String: String]

    package init(options: PublishOptions, environment: [String: String]) {
        self.options = options
        self.environment = environment
    }

    /// Runs the publish; `say` receives one line per action, in order.
    package func run(say: @Sendable (String) -> Void = { _ in }) async throws(PublishError) -> PublishReport {
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
        let indexUnchanged = live?.bytes == source.indexBytes
        // Retention runs blind when the live index cannot be read: it then deletes nothing.
        var liveIndex: PackIndex?
        if let live {
            switch Self.readIndex(live.bytes) {
            case .index(let index): liveIndex = index
            case .newerFormat(let version):
                throw .superseded(
                    "\(target.displayName) serves index.json of format \(version), newer than the \(FormatVersion.current) this gifpack writes — it must not be replaced by an older writer (nothing was changed; publish with a gifpack that writes format \(version.major).x)"
                )
            case .unreadable(let why):
                guard options.replaceUnreadableIndex else {
                    throw .failed(
                        "\(target.displayName): the live index.json cannot be read (\(why)); nothing was changed — check what serves it, or pass --replace-unreadable-index to replace it (retention then deletes nothing)"
                    )
                }
                say("replacing the unreadable live index.json (\(why)); retention deletes nothing this time")
            }
        }
        if let live, !indexUnchanged {
            try Self.checkNotOlder(source.index, than: liveIndex, liveBytes: live.bytes, target: target.displayName)
        }

        // Packs first, each confirmed.
        try await uploadPacks(source, to: target, report: &report, say: say)
        if !options.dryRun { PublishCrashPoint.reach(.beforeIndex) }

        // Then the index's own signature, named by the index's SHA-256 and confirmed: whatever
        // happens next (a lost race, a refused or killed index write), the index a client reads
        // has its signature under the name of its bytes.
        if let signature = source.signature {
            let key = SignatureLocation.key(forIndexSHA256: SHA256Hex.of(source.indexBytes))
            let signatureSHA256 = SHA256Hex.of(signature)
            if try await target.stat(key)?.sha256 != signatureSHA256 {
                say("\(options.dryRun ? "would write" : "write"): \(key)")
                report.signatureWritten = true
                if !options.dryRun {
                    try await target.putMetadataFile(
                        key, bytes: signature, contentType: PublishSource.signatureContentType,
                        maxAge: options.indexMaxAge, replacing: nil, conditional: false)
                    guard let stored = try await target.stat(key), stored.sha256 == signatureSHA256 else {
                        throw .failed("\(target.displayName): wrote \(key) but it does not read back as written; index.json was not replaced")
                    }
                    PublishCrashPoint.reach(.afterSignature)
                }
            }
        }

        // Then the index.
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
                    try await target.putMetadataFile(
                        "index.json", bytes: source.indexBytes, contentType: "application/json",
                        maxAge: options.indexMaxAge, replacing: live, conditional: true)
                }
                PublishCrashPoint.reach(.afterIndex)
            }
        }

        // Then the compressed copy `index.json.zst`, which clients fetch first.
        try await publishCompressedIndex(source, to: target, indexUnchanged: indexUnchanged, report: &report, say: say)

        // Then `index.json.minisig` beside it.
        try await publishBesideSignature(source, to: target, report: &report, say: say)
        if options.withReport, let bytes = source.report {
            say("\(options.dryRun ? "would write" : "write"): report.json")
            report.reportWritten = true
            if !options.dryRun {
                try await target.putMetadataFile(
                    "report.json", bytes: bytes, contentType: "application/json", maxAge: options.indexMaxAge,
                    replacing: nil, conditional: false)
            }
        }
        if !options.dryRun { PublishCrashPoint.reach(.beforeRetention) }

        // Retention, once the new index is live.
        try await retain(source, at: target, wasLive: live, liveIndex: liveIndex, report: &report, say: say)
        if !options.dryRun { await target.removeLeftovers() }
        return report
    }

    /// What a target's `index.json` holds: an index, one of a newer format major (a newer
    /// gifpack wrote it), or bytes that are not an index this gifpack reads (with why).
    enum LiveIndexReading {
        case index(PackIndex)
        case newerFormat(FormatVersion)
        case unreadable(String)
    }

    static func readIndex(_ bytes: [UInt8]) -> LiveIndexReading {
        do throws(PackClientError) { return .index(try BuilderIndexReader.decode(bytes)) } catch {
            if case .index(.unsupportedVersion(let version)) = error, version.major > FormatVersion.current.major { return .newerFormat(version) }
            return .unreadable(TerminalText.escaped(error.description, maxScalars: 300))
        }
    }

    /// Refuses to replace a live index whose `sequence` is higher than (or, when both carry one,
    /// equal to) the new one's. Unsigned indexes carry none: 0.
    static func checkNotOlder(_ new: PackIndex, than live: PackIndex?, liveBytes: [UInt8], target: String) throws(PublishError) {
        guard let live else { return }
        let liveSequence = live.sequence ?? 0
        let newSequence = new.sequence ?? 0
        if liveSequence > newSequence || (live.sequence != nil && liveSequence == newSequence) {
            throw .superseded(
                "\(target) serves index.json with sequence \(liveSequence); this build's is \(newSequence) — an older or rival build must not replace it (nothing was uploaded; rebuild with --previous-index to continue from the live index)"
            )
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

        /// Which hash-named signatures retention removes: every `signatures/<sha256>.minisig` (exactly
        /// that grammar; nothing else under `signatures/` is touched) that is not the signature of
        /// an index that was live before this publish, the new one or the one live now.
        static func signatureDeletions(stored: [String], protected: Set<String>) -> [String] {
            stored.filter { SignatureLocation.isKey($0) && !protected.contains($0) }.sorted()
        }

        /// `packs/NAME-vN-xxxxxxxx.tar.zst` → (NAME, N), by the exact grammar of the names a build
        /// gives: NAME a pack name (`[a-z0-9][a-z0-9_-]{0,63}`, the manifest's rule) or a pack name
        /// and `-posters`, N decimal digits without a leading zero, then eight lowercase hex digits.
        /// Anything else (another slash, `..`, upper case, a sign, a space) is not a pack file.
        static func parse(_ key: String) -> (pack: String, version: Int)? {
            guard key.hasPrefix("packs/"), key.hasSuffix(".tar.zst") else { return nil }
            let stem = key.dropFirst("packs/".count).dropLast(".tar.zst".count)
            let parts = stem.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count >= 3, let hash = parts.last, hash.utf8.count == 8,
                hash.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }),
                let versionPart = parts.dropLast().last, versionPart.hasPrefix("v")
            else {
                return nil
            }
            let digits = versionPart.dropFirst()
            guard (1...9).contains(digits.utf8.count), digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                !digits.hasPrefix("0"), let version = Int(digits)
            else {
                return nil
            }
            let name = parts.dropLast(2).joined(separator: "-")
            let pack = name.hasSuffix("-posters") ? String(name.dropLast("-posters".count)) : name
            guard PackSpec.isValidName(name) || PackSpec.isValidName(pack) else { return nil }
            return (name, version)
        }
    }
}

extension PublishSource {
    /// `index.json.minisig` is minisign's text format.
    static let signatureContentType = "text/plain; charset=utf-8"
}

/// Steps of ``Publisher/publish(_:to:say:)`` that have names of their own.
extension Publisher {
    /// Uploads and confirms every pack (and posters pack) the index names that the target lacks.
    func uploadPacks(
        _ source: PublishSource, to target: any PublishTarget, report: inout PublishReport,
        say: (String) -> Void
    ) async throws(PublishError) {
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
    }

    /// The compressed copy `index.json.zst`, which clients fetch first: made to decode to the index
    /// live now (so a copy a killed publish left stale is repaired), never ahead of it.
    func publishCompressedIndex(
        _ source: PublishSource, to target: any PublishTarget, indexUnchanged: Bool,
        report: inout PublishReport, say: (String) -> Void
    ) async throws(PublishError) {
        if options.dryRun {
            let storedCopy = try await target.stat(CompressedIndex.key)
            if !indexUnchanged || storedCopy?.sha256 != SHA256Hex.of(source.compressedIndex) {
                say("would write: \(CompressedIndex.key)")
                report.compressedIndexWritten = true
            }
        } else {
            report.compressedIndexWritten = try await syncCompressedIndex(source, target: target, say: say)
            PublishCrashPoint.reach(.afterCompressedIndex)
        }
    }

    /// `index.json.minisig` beside the index, for stock minisign and clients of older versions: it
    /// follows the index (and may lag it); it is written only while the live index is this one.
    func publishBesideSignature(
        _ source: PublishSource, to target: any PublishTarget, report: inout PublishReport,
        say: (String) -> Void
    ) async throws(PublishError) {
        let besideKey = "index.json.minisig"
        if let signature = source.signature {
            if try await target.stat(besideKey)?.sha256 != SHA256Hex.of(signature) {
                if options.dryRun {
                    say("would write: \(besideKey)")
                    report.signatureWritten = true
                } else if try await target.readLiveIndex()?.bytes == source.indexBytes {
                    say("write: \(besideKey)")
                    report.signatureWritten = true
                    try await target.putMetadataFile(
                        besideKey, bytes: signature, contentType: PublishSource.signatureContentType,
                        maxAge: options.indexMaxAge, replacing: nil, conditional: false)
                } else {
                    say("\(besideKey): left alone (index.json was replaced by another publisher meanwhile)")
                }
            }
        } else if try await target.stat(besideKey) != nil {
            say("\(options.dryRun ? "would delete" : "delete"): \(besideKey) (the new index is not signed)")
            if !options.dryRun { try await target.delete(besideKey) }
        }
    }

    /// Retention, once the new index is live: never a file (or signature) of the index that was
    /// live (`wasLive`, read as `liveIndex`), the new one, the one live now or the one the live
    /// `index.json.zst` holds; nothing at all when one of them cannot be read.
    func retain(
        _ source: PublishSource, at target: any PublishTarget, wasLive: LiveIndex?, liveIndex: PackIndex?,
        report: inout PublishReport, say: (String) -> Void
    ) async throws(PublishError) {
        var retentionBlind = wasLive != nil && liveIndex == nil
        var protected = Set(source.index.packFiles.map(\.file))
        protected.formUnion(liveIndex?.packFiles.map(\.file) ?? [])
        var protectedSignatures: Set<String> = [SignatureLocation.key(forIndexSHA256: SHA256Hex.of(source.indexBytes))]
        if let wasLive { protectedSignatures.insert(SignatureLocation.key(forIndexSHA256: SHA256Hex.of(wasLive.bytes))) }
        if !options.dryRun, let current = try await target.readLiveIndex() {
            protectedSignatures.insert(SignatureLocation.key(forIndexSHA256: SHA256Hex.of(current.bytes)))
            if case .index(let index) = Self.readIndex(current.bytes) {
                protected.formUnion(index.packFiles.map(\.file))
            } else {
                retentionBlind = true
            }
        }
        // The index inside the live index.json.zst too: whatever a client is served, its packs and signature stay.
        if !options.dryRun, let copy = try await target.read(CompressedIndex.key, maxBytes: PublishFileReader.maxIndexBytes) {
            if let plain = try? CompressedIndex.decode(copy, maxBytes: PublishFileReader.maxIndexBytes),
                case .index(let index) = Self.readIndex(plain)
            {
                protectedSignatures.insert(SignatureLocation.key(forIndexSHA256: SHA256Hex.of(plain)))
                protected.formUnion(index.packFiles.map(\.file))
            } else {
                retentionBlind = true
            }
        }
        if retentionBlind {
            say("retention: skipped (a live index.json or index.json.zst could not be read, so what it names is unknown); nothing was deleted")
        } else {
            let stored = try await target.listKeys(under: "packs/")
            let signatures = try await target.listKeys(under: SignatureLocation.directory + "/")
            let deletions =
                Retention.deletions(stored: stored, protected: protected, keepVersions: options.keepVersions)
                + Retention.signatureDeletions(stored: signatures, protected: protectedSignatures)
            for key in deletions {
                say("\(options.dryRun ? "would delete" : "delete"): \(key)")
                report.deleted.append(key)
                if !options.dryRun { try await target.delete(key) }
            }
        }
    }

    /// Makes the target's `index.json.zst` decode to its live `index.json`: this publish's copy when
    /// the live index is this one, else the live index compressed here (a rival publisher won, and
    /// its copy may not be up yet); nothing when there is no live index or it is not one this
    /// gifpack reads. Checked again after each write, as the live index may change meanwhile.
    /// Returns true when it wrote.
    func syncCompressedIndex(_ source: PublishSource, target: any PublishTarget, say: (String) -> Void) async throws(PublishError) -> Bool {
        var written = false
        for _ in 0..<3 {
            guard let live = try await target.readLiveIndex() else { return written }
            let ours = live.bytes == source.indexBytes
            let wanted: [UInt8]
            if ours {
                wanted = source.compressedIndex
            } else {
                guard case .index = Self.readIndex(live.bytes) else {
                    say("\(CompressedIndex.key): left alone (the live index.json is not one this gifpack reads)")
                    return written
                }
                do {
                    wanted = try await BlockingWork.run("gifpack.publish-compress") { () throws(IndexCompression.Failure) in
                        try IndexCompression.compress(live.bytes)
                    }
                } catch { throw .failed("cannot compress the live index.json: \(error)") }
            }
            if try await target.stat(CompressedIndex.key)?.sha256 == SHA256Hex.of(wanted) { return written }
            say("write: \(CompressedIndex.key)" + (ours ? "" : " (of the index live now: another publisher replaced index.json meanwhile)"))
            try await target.putMetadataFile(
                CompressedIndex.key, bytes: wanted, contentType: PublishHeaders.packContentType,
                maxAge: options.indexMaxAge, replacing: nil, conditional: false)
            written = true
        }
        throw .failed("\(target.displayName): index.json kept changing while \(CompressedIndex.key) was written; run the publish again to bring it in line")
    }
}
