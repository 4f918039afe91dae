import Foundation
import GifPackHTTP

/// The whole build: manifest → catalog → plan → fetch → validate → store → pack → index → report.
///
/// `run()` never throws: every failure ends in a report whose ``ExitStatus`` and message say what
/// went wrong. Nothing in the output directory changes unless the build succeeds; pack files are
/// published before the index, and the index is replaced atomically last (and only when its bytes
/// change), so readers always see a complete index whose packs exist.
///
/// ```swift
/// let manifest = try ManifestLoader().load(path: "manifests/demo.yaml", environment: env)
/// let options = try BuildOptions.resolve(manifest: manifest, outputDirectory: "dist", cacheDirectory: nil, environment: env)
/// let report = await BuildPipeline(manifest: manifest, options: options).run()
/// exit(report.exitStatus.rawValue)
/// ```
public struct BuildPipeline: Sendable {
    public let manifest: Manifest
    public let options: BuildOptions

    public init(manifest: Manifest, options: BuildOptions) {
        self.manifest = manifest
        self.options = options
    }

    public var indexPath: String { "\(options.outputDirectory)/index.json" }
    public var reportPath: String { "\(options.outputDirectory)/report.json" }

    public func run() async -> BuildReport {
        var report = BuildReport(generator: options.generator, exitStatus: .failed, message: "")
        let clock = ContinuousClock()
        let started = clock.now
        do {
            try await build(into: &report, clock: clock)
        } catch let error as CatalogError {
            report.exitStatus = if case .authRejected = error { .authRejected } else { .failed }
            report.message = error.description
        } catch {
            report.exitStatus = .failed
            report.message = String(describing: error)
        }
        report.stageSeconds["total"] = (clock.now - started).seconds
        writeReport(report)
        return report
    }

    private func build(into report: inout BuildReport, clock: ContinuousClock) async throws {
        let layout = CacheLayout(root: options.cacheDirectory)
        try layout.prepare()
        try FileSystem.createDirectory(options.outputDirectory)
        let client = try HTTPClient()
        defer { client.shutdown() }

        var stage = clock.now
        func endStage(_ name: String) {
            report.stageSeconds[name] = (clock.now - stage).seconds
            stage = clock.now
        }

        let catalog = try await CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client).fetchCatalog()
        report.catalog = .init(exercises: catalog.exercises.count, pages: catalog.pagesFetched,
                               rejectedRecords: catalog.rejected, duplicateIDs: catalog.duplicateIDs)
        endStage("catalog")

        let plan = PackPlan(specs: manifest.packs, catalog: catalog)
        let wanted = plan.wanted
        report.gifs.wanted = wanted.count
        endStage("plan")

        let frames = FrameCache(layout: layout, level: manifest.output.zstdLevel, mtime: options.sourceDateEpoch)
        let fetcher = GIFFetcher(client: client, source: manifest.source, settings: manifest.fetch, layout: layout, frames: frames)
        let results = await fetcher.fetch(wanted)
        summarise(results, wanted: wanted, into: &report)
        let statistics = client.statistics
        report.http = .init(requests: statistics.requestsStarted, maxInFlight: statistics.maxInFlight,
                            connectionsOpened: statistics.connectionsOpened)
        endStage("fetch")

        let missing = report.gifs.missing
        guard manifest.fetch.maxMissing.allows(missing: missing, of: wanted.count) else {
            report.exitStatus = .failed
            report.message = "\(missing) of \(wanted.count) exercises have no valid GIF, more than max_missing (\(manifest.fetch.maxMissing)); nothing was published"
            return
        }

        let previous = try? PackIndex.decode(from: Data(contentsOf: URL(fileURLWithPath: indexPath)))
        let sourceDescription = SourceDescription(kind: manifest.source.kind.rawValue, baseURL: manifest.source.baseURL,
                                                  resolution: manifest.source.resolution)
        let publisher = PackPublisher(outputDirectory: options.outputDirectory, frames: frames, source: sourceDescription)
        var descriptions: [PackDescription] = []
        for entry in plan.entries {
            let (description, outcome) = try publisher.publish(entry, results: results,
                                                               previous: previous?.pack(named: entry.spec.name))
            descriptions.append(description)
            report.packs.append(.init(name: description.name, version: description.version, file: description.file,
                                      outcome: outcome.rawValue, exercises: entry.exercises.count,
                                      missing: description.exercises.filter { $0.gif == nil }.count,
                                      distinctGIFs: description.gifs.count, bytes: description.bytes,
                                      uncompressedBytes: description.uncompressedBytes))
        }
        endStage("pack")

        let index = PackIndex(generator: options.generator, source: sourceDescription, packs: descriptions)
        let indexBytes = [UInt8](try index.encoded())
        if FileSystem.readAll(indexPath) != indexBytes {
            try FileSystem.writeAtomically(indexBytes, to: indexPath)
        }
        endStage("index")

        let published = report.packs.filter { $0.outcome == PackPublisher.Outcome.published.rawValue }.count
        report.exitStatus = missing > 0 ? .partial : .success
        report.message = published == 0
            ? "nothing changed: \(report.packs.count) pack(s) already current"
            : "published \(published) new pack version(s) of \(report.packs.count)"
        if missing > 0 { report.message += "; \(missing) exercise(s) have no GIF" }
    }

    private func summarise(_ results: [String: GIFFetchResult], wanted: [Exercise], into report: inout BuildReport) {
        for exercise in wanted {
            switch results[exercise.id] {
            case .stored(let gif)?:
                report.gifs.downloaded += 1
                report.gifs.bytesDownloaded += gif.bytes
                if gif.newlyStored { report.gifs.newlyStored += 1 } else { report.gifs.deduplicated += 1 }
                if gif.resolutionMismatch, let requested = manifest.source.resolution {
                    report.resolutionMismatches.append(.init(exerciseID: gif.exerciseID, requested: requested,
                                                             width: gif.info.width, height: gif.info.height))
                }
            case .rejected(let rejection)?:
                report.gifs.rejected += 1
                report.gifs.missing += 1
                report.gifs.rejectedByReason[rejection.reason, default: 0] += 1
                report.rejections.append(rejection)
            case nil:
                report.gifs.missing += 1
            }
        }
    }

    private func writeReport(_ report: BuildReport) {
        guard FileSystem.exists(options.outputDirectory) else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        if var data = try? encoder.encode(report) {
            data.append(0x0A)
            try? FileSystem.writeAtomically([UInt8](data), to: reportPath)
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
