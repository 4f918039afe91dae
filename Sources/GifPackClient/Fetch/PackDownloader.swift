import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

/// Fetches pack files named by an index and proves they are the ones the index describes.
///
/// For an index on local disk the pack file beside it is checked in place (size and SHA-256) and
/// nothing is copied. For a URL the file is streamed to `<directory>/<name>-v<version>-<hash>.tar.zst.part`
/// and renamed without the `.part` suffix once its size and SHA-256 match the index; a finished
/// download found there later is re-checked and reused without network traffic.
///
/// Interrupted transfers resume: the next attempt (up to ``maxAttempts`` per call, and across
/// calls, since the `.part` file stays) sends `Range: bytes=<size of the .part>-`. A transfer that
/// timed out (the server stopped sending for the low-speed window) ends the call at once: a retry
/// would wait another window; the next call resumes it. A `206` whose
/// `Content-Range` starts there is appended; a server that ignores the range and answers `200`
/// (detected when the body overflows what is missing) or a `416` restarts from zero. A resumed
/// file whose SHA-256 is wrong is downloaded again from zero once, then refused as
/// ``PackRejection/Reason/packChecksum``. More bytes than the index announces are never written.
///
/// ```swift
/// let client = URLSessionTransport(maxConnections: 4)   // or GifPackHTTP's HTTPClient: any HTTPTransport
/// let downloader = PackDownloader(directory: "/var/cache/app/gifs.d/downloads", client: client)
/// let source = PackIndexSource("https://cdn.example.com/gifpack/index.json")
/// let index = try await source.load(client: client)
/// let downloaded = try await downloader.fetch(index.packs[0], from: source)
/// ```
package struct PackDownloader: Sendable {
    /// Where downloads (and their `.part` files) are kept.
    package let directory: String
    /// Transfer attempts per ``fetch(_:from:)`` call; each retry resumes where the last one stopped.
    package var maxAttempts = 3
    /// The limits of each request.
    package var timeouts = HTTPTimeouts()
    package var limits: PackLimits
    /// Counts the bytes of each download (``GIFLoader/refresh(progress:)``).
    var progress: InstallProgress?
    private let client: (any HTTPTransport)?

    /// `client` is used for URLs; without one each URL fetch makes a short-lived ``URLSessionTransport``.
    package init(directory: String, client: (any HTTPTransport)? = nil, limits: PackLimits = .standard) {
        self.directory = directory
        self.client = client
        self.limits = limits
    }

    /// Fetches (or finds) `pack` and verifies it.
    package func fetch(_ pack: PackDescription, from source: PackIndexSource) async throws(PackClientError) -> DownloadedPack {
        try await fetch(pack, from: source, deferringLocalChecksum: false)
    }

    /// ``fetch(_:from:)``; with `deferringLocalChecksum`, a local index's pack file is checked for
    /// its size only and comes back with ``DownloadedPack/checksumPending``: the installer hashes it
    /// while it stages the pack, and installs nothing unless it matches.
    /// With a `follower`, a download's GIFs are decoded while it arrives (``PackFollower``); the
    /// follower is told when the download ends, and its results are the caller's to collect.
    func fetch(
        _ pack: PackDescription, from source: PackIndexSource, deferringLocalChecksum: Bool,
        follower: PackFollower? = nil
    ) async throws(PackClientError) -> DownloadedPack {
        if let problem = PackDescriptionCheck.problems(in: pack, limits: limits).first { throw .rejected(problem) }
        let location = try source.packLocation(for: pack)
        if deferringLocalChecksum, case .file(let path) = location {
            try await BlockingWork.run("gifpack.verify-pack") { () throws(PackClientError) in
                _ = try Self.checkSize(FileOps.regularFileSize(path), path: path, pack: pack)
            }
            var item = DownloadedPack(pack: pack, path: path, isCopy: false, bytesTransferred: 0, resumedFrom: nil)
            item.checksumPending = true
            return item
        }
        let file: FetchedFile
        if case .url(let url) = location, let follower {
            defer { follower.finish() }
            file = try await download(pack, url: url, follower: follower)
        } else {
            file = try await fetchFile(pack, location: location)
        }
        return DownloadedPack(
            pack: pack, path: file.path, isCopy: file.isCopy, bytesTransferred: file.bytesTransferred,
            resumedFrom: file.resumedFrom)
    }

    /// Fetches (or finds) a posters pack (format 1.2) whole and verifies its size and SHA-256. Its
    /// description was checked with its pack's (``PackDescriptionCheck/posterProblems(in:of:gifHashes:limits:)``).
    func fetch(_ posters: PosterPackDescription, from source: PackIndexSource) async throws(PackClientError) -> FetchedFile {
        try await fetchFile(posters, location: try source.packLocation(for: posters))
    }

    /// A verified pack file on disk: where it is, whether it is a download, what it cost.
    struct FetchedFile: Sendable {
        let path: String
        let isCopy: Bool
        let bytesTransferred: Int64
        let resumedFrom: Int64?
    }

    private func fetchFile(_ pack: some PackFileDescription, location: PackIndexSource.Location) async throws(PackClientError) -> FetchedFile {
        switch location {
        case .file(let path):
            try await BlockingWork.run("gifpack.verify-pack") { () throws(PackClientError) in
                try Self.verify(path, pack: pack)
            }
            return FetchedFile(path: path, isCopy: false, bytesTransferred: 0, resumedFrom: nil)
        case .url(let url):
            return try await download(pack, url: url)
        }
    }

    /// The final path of `pack`'s download.
    package func downloadPath(for pack: PackDescription) -> String {
        downloadPath(of: pack)
    }

    func downloadPath(of pack: some PackFileDescription) -> String {
        "\(directory)/\(pack.name)-v\(pack.version)-\(pack.sha256.prefix(16)).tar.zst"
    }

    /// Throws unless the file at `path` has the pack's size and SHA-256.
    static func verify(_ path: String, pack: some PackFileDescription) throws(PackClientError) {
        try check(size: FileOps.regularFileSize(path), sha256: nil, path: path, pack: pack)
    }

    /// Throws unless `size` (of the file at `path`; nil: no regular file there) is the pack's size.
    @discardableResult
    static func checkSize(_ size: Int64?, path: String, pack: some PackFileDescription) throws(PackClientError) -> Int64 {
        guard let size else {
            throw .unreadable(location: path, detail: "no such regular file")
        }
        guard size == pack.bytes else {
            throw .rejected(
                PackRejection(
                    .packSize, pack: pack.name, entry: pack.file,
                    detail: "the file is \(size) bytes, the index says \(pack.bytes)"))
        }
        return size
    }

    /// Throws unless the file at `path` is `size` bytes, the pack's size, and hashes to the pack's
    /// SHA-256: `sha256` when the caller hashed those very bytes as it wrote them, else the file read whole.
    static func check(
        size: Int64?, sha256 known: String?, path: String,
        pack: some PackFileDescription
    ) throws(PackClientError) {
        let size = try checkSize(size, path: path, pack: pack)
        let digest: (size: Int64, sha256: String)
        if let known {
            digest = (size, known)
        } else {
            do { digest = try StreamingSHA256.file(at: path) } catch { throw PackClientError(error) }
        }
        guard digest.size == pack.bytes, digest.sha256 == pack.sha256 else {
            throw .rejected(
                PackRejection(
                    .packChecksum, pack: pack.name, entry: pack.file,
                    detail: "the file hashes to \(digest.sha256), the index says \(pack.sha256)"))
        }
    }

    private func download(
        _ pack: some PackFileDescription, url: String,
        follower: PackFollower? = nil
    ) async throws(PackClientError) -> FetchedFile {
        let final = downloadPath(of: pack)
        let part = final + ".part"
        try await BlockingWork.run("gifpack.downloads") { [directory] () throws(PackClientError) in
            try FileOps.makeDirectories(directory)
        }
        if FileOps.regularFileSize(final) != nil {
            let reusable = await BlockingWork.result("gifpack.verify-pack") { () throws(PackClientError) in
                try Self.verify(final, pack: pack)
            }
            if case .success = reusable {
                return FetchedFile(path: final, isCopy: true, bytesTransferred: 0, resumedFrom: nil)
            }
            FileOps.remove(final)
        }

        let http = client ?? URLSessionTransport(maxConnections: 2)

        var transfer = TransferState()
        let have = min(FileOps.regularFileSize(part) ?? 0, pack.bytes)
        transfer.progress = progress?.transfer(expecting: pack.bytes - have)
        defer { transfer.progress?.end() }
        var restartedAfterMismatch = false
        follower?.start()
        while true {
            try await transferAttempts(url: url, part: part, pack: pack, client: http, follower: follower, state: &transfer)
            let outcome = await BlockingWork.result("gifpack.verify-pack") { [transfer] () throws(PackClientError) in
                // One request wrote the whole file and hashed it on the way: no second pass over it.
                if let digest = transfer.wholeFileSHA256 {
                    try Self.check(size: FileOps.regularFileSize(part), sha256: digest, path: part, pack: pack)
                } else {
                    try Self.verify(part, pack: pack)
                }
            }
            switch outcome {
            case .success:
                try FileOps.move(part, to: final)
                return FetchedFile(path: final, isCopy: true, bytesTransferred: transfer.bytes, resumedFrom: transfer.resumedFrom)
            case .failure(let error):
                FileOps.remove(part)
                // A resumed file may splice two different uploads: start over once before refusing.
                guard transfer.resumedFrom != nil, !restartedAfterMismatch else { throw error }
                restartedAfterMismatch = true
            }
        }
    }

    /// A 200 answer to a resumed request, as every transport reports it (curl's `CURLE_RANGE_ERROR`).
    static let rangeNotHonoured = HTTPError.rangeNotHonouredCode

    /// What the attempts of one fetch have done so far.
    private struct TransferState: Sendable {
        var bytes: Int64 = 0
        var resumedFrom: Int64?
        var progress: InstallProgress.Transfer?
        /// The SHA-256 the transport computed while writing, when one request (a `200` from byte 0)
        /// wrote the whole file; nil after a resumed or partial attempt.
        var wholeFileSHA256: String?
    }

    /// Runs attempts until `part` holds `pack.bytes` bytes, resuming each time.
    private func transferAttempts(
        url: String, part: String, pack: some PackFileDescription, client: any HTTPTransport,
        follower: PackFollower?, state: inout TransferState
    ) async throws(PackClientError) {
        var lastError: HTTPError?
        for _ in 0..<max(1, maxAttempts) {
            var have = FileOps.regularFileSize(part) ?? 0
            if have > pack.bytes {
                FileOps.remove(part)
                have = 0
            }
            if have == pack.bytes { return }
            state.wholeFileSHA256 = nil
            var request = HTTPRequest(url: url, timeouts: timeouts)
            request.followRedirects = true
            request.bodyProgress = HTTPBodyProgress(
                written: follower?.progress(from: have),
                chunks: state.progress?.bodyProgress)
            if have > 0 {
                request.resumeFrom = have
                if state.resumedFrom == nil { state.resumedFrom = have }
            }
            let download: HTTPDownload
            do {
                download = try await client.download(request, to: part, maxBytes: pack.bytes - have)
            } catch {
                switch error {
                case .bodyTooLarge where have > 0, .transport(code: Self.rangeNotHonoured, message: _) where have > 0:
                    // The server ignored the range and answers 200 with the whole file (the transport
                    // refuses it with rangeNotHonouredCode, or it overflows what was missing): start again from zero.
                    FileOps.remove(part)
                    lastError = error
                    continue
                case .bodyTooLarge:
                    FileOps.remove(part)
                    throw .rejected(
                        PackRejection(
                            .packSize, pack: pack.name, entry: pack.file,
                            detail: "\(url) sends more than the \(pack.bytes) bytes the index announces"))
                case .fileError(_, let code) where Errno(code).meansDiskFull:
                    // A full disk: what came cannot be finished here, and kept it would hold the disk
                    // full for everything else the app stores (its lazy cache's GIFs), so it goes.
                    FileOps.remove(part)
                    throw .transfer(url: url, error)
                case .timedOut:
                    // A server that stops sending: another attempt would wait another window, so the
                    // call ends now; the `.part` file keeps what came for the next call to resume.
                    throw .transfer(url: url, error)
                case .truncated, .connectionReset, .connectFailed:
                    state.bytes += (FileOps.regularFileSize(part) ?? 0) - have
                    lastError = error
                    continue
                default:
                    throw .transfer(url: url, error)
                }
            }
            state.bytes += download.bytesWritten
            switch download.head.status {
            case 200 where have == 0:
                if download.bytesWritten == pack.bytes { state.wholeFileSHA256 = download.sha256 }
                continue
            case 206 where have > 0:
                let range = download.head.headers["content-range"] ?? ""
                guard range.lowercased().hasPrefix("bytes \(have)-") else {
                    FileOps.remove(part)
                    continue
                }
            case 200, 206, 416:
                // A 200 that fits what was missing, a range we did not ask for, or a stale range.
                FileOps.remove(part)
            default:
                FileOps.remove(part)
                throw .status(download.head.status, of: url)
            }
        }
        if FileOps.regularFileSize(part) == pack.bytes { return }
        throw .transfer(url: url, lastError ?? .truncated(expected: pack.bytes, received: FileOps.regularFileSize(part) ?? 0))
    }
}

/// What ``PackDownloader`` needs of a pack file the index names: a pack or a posters pack.
protocol PackFileDescription: Sendable {
    var name: String { get }
    var version: Int { get }
    var file: String { get }
    var bytes: Int64 { get }
    var sha256: String { get }
}

extension PackDescription: PackFileDescription {}
extension PosterPackDescription: PackFileDescription {}
