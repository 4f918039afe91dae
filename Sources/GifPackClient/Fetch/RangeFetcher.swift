import GifPackFormat
import GifPackSystem
import GifPackTransport
import Foundation
import GifPackIndexReader

/// Fetches the ranges of a ``SparseUpgradePlan`` into a sparse file and checks every frame in them.
///
/// The file at `path` is made anew with the pack's size (a sparse file: the holes take no disk
/// space) and each range lands at its own offset, so the frames sit where the index says and
/// `PackFrameReader` reads them as from the whole pack. The first range is requested alone: if
/// the server answers `200` it ignores ranges and the fetch stops there (``Outcome/rangeIgnored``)
/// having read no body; its `ETag` is then sent as `If-Match` with the other ranges, at most
/// ``SparseUpgradeSettings/maxRequestsInFlight`` at a time. A `200` to any of them (a CDN whose
/// edges do not all honour ranges) is ``Outcome/rangeIgnored`` too: the ranges still in flight are
/// cancelled and their ends ignored, as are those after a failure. Every answer is judged by
/// ``RangeAnswer`` (status, `Content-Range`, the file's size, the `ETag`); a dropped or truncated
/// transfer is asked for again, up to `attempts` times per range. Once a range is in, each frame
/// in it is read back with the same checks as an install (tar header, decompression cap,
/// SHA-256: the content digest for `catalog.json`; a GIF's hash from the index; a poster's from the
/// posters catalog, which the first range holds and which is checked against the content digest
/// and the index before any poster). Any failure removes the file and throws.
///
/// ```swift
/// let fetcher = RangeFetcher(client: client, url: packURL, target: .pack(pack), path: sparsePath, attempts: 3,
///                            settings: .init(), timeouts: .init())
/// switch try await fetcher.fetch(plan) { case .fetched(let stats): … case .rangeIgnored: … }
/// ```
struct RangeFetcher: Sendable {
    /// The file whose ranges are fetched and what its frames are checked against.
    enum Target: Sendable {
        /// A pack: `catalog.json` against the content digest, each GIF against its hash in the index.
        case pack(PackDescription)
        /// A posters pack: `catalog.json` against the content digest and the index's poster list,
        /// each poster against the SHA-256 that catalog gives it.
        case posters(PosterPackDescription)

        var name: String {
            switch self {
            case .pack(let pack): pack.name;
            case .posters(let posters): posters.name
            }
        }
        /// A rendition pack's resolution, which its GIFs' larger side must be (`PackDescription.renditionSide`).
        var side: Int? {
            switch self {
            case .pack(let pack): pack.renditionSide;
            case .posters: nil
            }
        }
        var bytes: Int64 {
            switch self {
            case .pack(let pack): pack.bytes;
            case .posters(let posters): posters.bytes
            }
        }
        var catalog: EntryLocation {
            switch self {
            case .pack(let pack): pack.catalog;
            case .posters(let posters): posters.catalog
            }
        }
        var contentDigest: String {
            switch self {
            case .pack(let pack): pack.contentDigest;
            case .posters(let posters): posters.contentDigest
            }
        }

        /// Path → SHA-256 of every frame besides the catalog's; for a posters pack, read from the
        /// catalog in the file at `catalogIn` (nil: the catalog is not fetched yet, refused).
        func hashes(catalogIn path: String?) throws(PackClientError) -> [String: String] {
            switch self {
            case .pack(let pack):
                return Dictionary(pack.gifs.map { ($0.location.path, $0.sha256) }, uniquingKeysWith: { first, _ in first })
            case .posters(let posters):
                guard let path else {
                    throw .rejected(
                        PackRejection(
                            .missingEntry, pack: SafePath.printable(posters.name), entry: PackCatalog.path,
                            detail: "the posters catalog must be fetched before any poster"))
                }
                let catalog = try PosterPackReader(path: path, posters: posters).catalog()
                if let problem = PosterPackVerifier.catalogProblems(catalog, of: posters).first { throw .rejected(problem) }
                return Dictionary(catalog.posters.map { ($0.path, $0.sha256) }, uniquingKeysWith: { first, _ in first })
            }
        }
    }

    struct Stats: Sendable, Equatable {
        var bytes: Int64 = 0
        var requests = 0
    }

    enum Outcome: Sendable, Equatable {
        case fetched(Stats)
        /// The server answered 200 to a range request; nothing was written.
        case rangeIgnored(Stats)
    }

    let client: any HTTPTransport
    let url: String
    let target: Target
    let path: String
    let attempts: Int
    let settings: SparseUpgradeSettings
    let timeouts: HTTPTimeouts
    /// Counts the ranges' bytes (``GIFLoader/refresh(progress:)``).
    var progress: InstallProgress.Transfer?

    func fetch(_ plan: SparseUpgradePlan) async throws(PackClientError) -> Outcome {
        let result = await attempt(plan)
        switch result {
        case .success(.fetched(let stats)):
            return .fetched(stats)
        case .success(.rangeIgnored(let stats)):
            FileOps.remove(path)
            return .rangeIgnored(stats)
        case .failure(let error):
            FileOps.remove(path)
            throw error
        }
    }

    private func attempt(_ plan: SparseUpgradePlan) async -> Result<Outcome, PackClientError> {
        let size = target.bytes
        let file = path
        let made = await BlockingWork.result("gifpack.sparse-file") { () throws(PackClientError) in
            FileOps.remove(file)
            let fd = try FileOps.openRegular(file, [.writeOnly, .create, .exclusive])
            defer { SystemCalls.close(fd) }
            guard SystemCalls.truncate(fd, size: Int64(size)) == 0 else { throw .posix(file, "ftruncate") }
        }
        if case .failure(let error) = made { return .failure(error) }
        guard let first = plan.ranges.first else { return .success(.fetched(Stats())) }

        var stats = Stats()
        let probe = await fetchRange(first, ifMatch: nil, hashes: nil)
        stats.requests += probe.requests
        stats.bytes += probe.bytes
        let etag: String?
        switch probe.result {
        case .failure(let error): return .failure(error)
        case .success(.rangeIgnored): return .success(.rangeIgnored(stats))
        case .success(.partial(let tag)): etag = tag
        case .success(.refused(let error)): return .failure(error)
        }
        // The first range holds the catalog (frame 0): the hashes of every other frame are known now.
        let hashes = probe.hashes

        let rest = Array(plan.ranges.dropFirst())
        let inFlight = max(1, settings.maxRequestsInFlight)
        let ifMatch = RangeAnswer.ifMatch(etag)
        // The first range that ends the fetch decides it: a 200 (the server, or one of its edges,
        // ignores ranges: the caller downloads the whole file) or a failure. The ranges still in
        // flight are then cancelled, and how they end (cancelled, most often) says nothing more.
        enum Stop { case rangeIgnored, failed(PackClientError) }
        var decided: Stop?
        await withTaskGroup(of: RangeResult.self) { group in
            var next = 0
            func addNext() {
                guard next < rest.count else { return }
                let range = rest[next]
                next += 1
                group.addTask { await fetchRange(range, ifMatch: ifMatch, etag: etag, hashes: hashes) }
            }
            for _ in 0..<inFlight { addNext() }
            while let done = await group.next() {
                stats.requests += done.requests
                stats.bytes += done.bytes
                guard decided == nil else { continue }
                switch done.result {
                case .success(.partial):
                    addNext()
                    continue
                case .success(.rangeIgnored): decided = .rangeIgnored
                case .success(.refused(let error)), .failure(let error): decided = .failed(error)
                }
                group.cancelAll()
            }
        }
        switch decided {
        case .failed(let error)?: return .failure(error)
        case .rangeIgnored?: return .success(.rangeIgnored(stats))
        case nil: return .success(.fetched(stats))
        }
    }

    private struct RangeResult: Sendable {
        var result: Result<RangeAnswer, PackClientError>
        var requests = 0
        var bytes: Int64 = 0
        /// The hashes the range's frames were checked against.
        var hashes: [String: String]?
    }

    /// Requests one range (again after a dropped transfer), judges the answer and checks its frames
    /// (against `hashes`, else against those the target gives once the range's catalog is read).
    private func fetchRange(
        _ range: SparseUpgradePlan.Range, ifMatch: String?, etag: String? = nil,
        hashes: [String: String]?
    ) async -> RangeResult {
        var outcome = RangeResult(result: .failure(.transfer(url: url, .cancelled)))
        var request = HTTPRequest(url: url, timeouts: timeouts)
        request.followRedirects = true
        request.byteRange = range.bytes
        request.bodyProgress = progress.map { HTTPBodyProgress(chunks: $0.bodyProgress) }
        if let ifMatch { request.headers.append(name: "If-Match", value: ifMatch) }
        for _ in 0..<max(1, attempts) {
            if Task.isCancelled { return outcome }
            outcome.requests += 1
            let download: HTTPDownload
            do {
                download = try await client.download(request, to: path, atOffset: range.first, maxBytes: range.length)
            } catch {
                if case .truncated(_, let received) = error { outcome.bytes += received }
                outcome.result = .failure(.transfer(url: url, error))
                switch error {
                case .truncated, .connectionReset, .timedOut, .connectFailed: continue
                default: return outcome
                }
            }
            outcome.bytes += download.bytesWritten
            let answer = RangeAnswer.judge(
                download.head, bodyBytes: download.bytesWritten, asked: range.bytes,
                fileBytes: target.bytes, url: url, etag: etag)
            outcome.result = .success(answer)
            guard case .partial = answer else { return outcome }
            switch await verify(range, hashes: hashes) {
            case .success(let checked): outcome.hashes = checked
            case .failure(let error): outcome.result = .failure(error)
            }
            return outcome
        }
        return outcome
    }

    /// Reads every frame of `range` back from the file with the install's checks: the catalog
    /// first (against the content digest), then every other frame against `hashes` or, without
    /// them, the hashes the target gives once the catalog is in. Returns the hashes used.
    private func verify(_ range: SparseUpgradePlan.Range, hashes: [String: String]?) async -> Result<[String: String], PackClientError> {
        let target = self.target
        let path = self.path
        return await BlockingWork.result("gifpack.verify-range") { () throws(PackClientError) -> [String: String] in
            let name = SafePath.printable(target.name)
            let reader: PackFrameReader
            do throws(PackReadError) { reader = try PackFrameReader(path: path) } catch {
                throw EntryReading.translate(error, pack: target.name, entry: path, readerPath: path)
            }
            let catalog = target.catalog
            let holdsCatalog = range.entries.contains(catalog)
            if holdsCatalog {
                try IndexedEntry.read(catalog, sha256: target.contentDigest, image: nil, pack: name, reader: reader) { _ in }
            }
            let known: [String: String]
            if let hashes { known = hashes } else { known = try target.hashes(catalogIn: holdsCatalog ? path : nil) }
            for location in range.entries where location != catalog {
                guard let expected = known[location.path] else {
                    throw .rejected(
                        PackRejection(
                            .missingEntry, pack: name, entry: SafePath.printable(location.path),
                            detail: "the index lists no hash for this frame"))
                }
                try IndexedEntry.read(
                    location, sha256: expected, image: location.path.hasSuffix(".webp") ? .webp : .gif, side: target.side, pack: name,
                    reader: reader
                ) { _ in }
            }
            return known
        }
    }
}
