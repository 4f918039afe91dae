import GifPackFormat
import GifPackTransport
import Foundation

/// Fetches the ranges of a ``SparseUpgradePlan`` into a sparse file and checks every frame in them.
///
/// The file at `path` is made anew with the pack's size (a sparse file: the holes take no disk
/// space) and each range lands at its own offset, so the frames sit where the index says and
/// `PackFrameReader` reads them as from the whole pack. The first range is requested alone: if
/// the server answers `200` it ignores ranges and the fetch stops there (``Outcome/rangeIgnored``)
/// having read no body; its `ETag` is then sent as `If-Match` with the other ranges, at most
/// ``SparseUpgradeSettings/maxRequestsInFlight`` at a time. Every answer is judged by
/// ``RangeAnswer`` (status, `Content-Range`, the file's size, the `ETag`); a dropped or truncated
/// transfer is asked for again, up to `attempts` times per range. Once a range is in, each frame
/// in it is read back with the same checks as an install (tar header, decompression cap,
/// SHA-256: the GIF's hash, or the content digest for `catalog.json`). Any failure removes the
/// file and throws.
///
/// ```swift
/// let fetcher = RangeFetcher(client: client, url: packURL, pack: pack, path: sparsePath, attempts: 3,
///                            settings: .init(), timeouts: .init())
/// switch try await fetcher.fetch(plan) { case .fetched(let stats): … case .rangeIgnored: … }
/// ```
struct RangeFetcher: Sendable {
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
    let pack: PackDescription
    let path: String
    let attempts: Int
    let settings: SparseUpgradeSettings
    let timeouts: HTTPTimeouts

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
        let size = pack.bytes
        let file = path
        let made = await BlockingWork.result("gifpack.sparse-file") { () throws(PackClientError) in
            FileOps.remove(file)
            let fd = SystemCalls.open(file, [.writeOnly, .create, .exclusive, .closeOnExec], mode: 0o644)
            guard fd >= 0 else { throw .posix(file, "create") }
            defer { SystemCalls.close(fd) }
            guard SystemCalls.truncate(fd, size: Int64(size)) == 0 else { throw .posix(file, "ftruncate") }
        }
        if case .failure(let error) = made { return .failure(error) }
        guard let first = plan.ranges.first else { return .success(.fetched(Stats())) }

        var stats = Stats()
        let probe = await fetchRange(first, ifMatch: nil)
        stats.requests += probe.requests
        stats.bytes += probe.bytes
        let etag: String?
        switch probe.result {
        case .failure(let error): return .failure(error)
        case .success(.rangeIgnored): return .success(.rangeIgnored(stats))
        case .success(.partial(let tag)): etag = tag
        case .success(.refused(let error)): return .failure(error)
        }

        let rest = Array(plan.ranges.dropFirst())
        let inFlight = max(1, settings.maxRequestsInFlight)
        let ifMatch = RangeAnswer.ifMatch(etag)
        var failure: PackClientError?
        var ignored = false
        await withTaskGroup(of: RangeResult.self) { group in
            var next = 0
            func addNext() {
                guard next < rest.count else { return }
                let range = rest[next]
                next += 1
                group.addTask { await fetchRange(range, ifMatch: ifMatch, etag: etag) }
            }
            for _ in 0..<inFlight { addNext() }
            while let done = await group.next() {
                stats.requests += done.requests
                stats.bytes += done.bytes
                switch done.result {
                case .success(.partial): break
                case .success(.rangeIgnored): ignored = true
                case .success(.refused(let error)), .failure(let error): failure = failure ?? error
                }
                if failure != nil || ignored {
                    group.cancelAll()
                } else {
                    addNext()
                }
            }
        }
        if let failure { return .failure(failure) }
        if ignored { return .success(.rangeIgnored(stats)) }
        return .success(.fetched(stats))
    }

    private struct RangeResult: Sendable {
        var result: Result<RangeAnswer, PackClientError>
        var requests = 0
        var bytes: Int64 = 0
    }

    /// Requests one range (again after a dropped transfer), judges the answer and checks its frames.
    private func fetchRange(_ range: SparseUpgradePlan.Range, ifMatch: String?, etag: String? = nil) async -> RangeResult {
        var outcome = RangeResult(result: .failure(.transfer(url: url, .cancelled)))
        var request = HTTPRequest(url: url, timeouts: timeouts)
        request.followRedirects = true
        request.byteRange = range.bytes
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
            let answer = RangeAnswer.judge(download.head, bodyBytes: download.bytesWritten, asked: range.bytes, pack: pack,
                                           url: url, etag: etag)
            outcome.result = .success(answer)
            guard case .partial = answer else { return outcome }
            let verified = await verify(range)
            if case .failure(let error) = verified { outcome.result = .failure(error) }
            return outcome
        }
        return outcome
    }

    /// Reads every frame of `range` back from the file with the install's checks.
    private func verify(_ range: SparseUpgradePlan.Range) async -> Result<Void, PackClientError> {
        let pack = self.pack
        let path = self.path
        return await BlockingWork.result("gifpack.verify-range") { () throws(PackClientError) in
            let reader: PackFrameReader
            do throws(PackReadError) { reader = try PackFrameReader(path: path) } catch {
                throw EntryReading.translate(error, pack: pack.name, entry: path, readerPath: path)
            }
            let hashes = Dictionary(pack.gifs.map { ($0.location.path, $0.sha256) }, uniquingKeysWith: { first, _ in first })
            for location in range.entries {
                let isCatalog = location == pack.catalog
                guard let expected = isCatalog ? pack.contentDigest : hashes[location.path] else {
                    throw .rejected(PackRejection(.missingEntry, pack: SafePath.printable(pack.name),
                                                  entry: SafePath.printable(location.path), detail: "the index lists no hash for this frame"))
                }
                try IndexedEntry.read(location, sha256: expected, isGIF: !isCatalog, pack: SafePath.printable(pack.name),
                                      reader: reader) { _ in }
            }
        }
    }
}
