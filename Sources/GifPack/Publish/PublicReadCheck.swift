import Foundation
import GifPackHTTP

/// The publish step's public-URL check (the command line prints what it finds).
///
/// After a publish: reads back, anonymously and from where clients read (`--public-url`), what
/// was just published — `index.json`, its compressed copy `index.json.zst`, its signatures
/// (`index.json.minisig` and `signatures/<sha256>.minisig`) and every pack file the index names —
/// and says why clients could not install when they could not: a bucket or CDN that refuses
/// anonymous reads (401/403), nothing served there (404), a stale copy of the index or its
/// signature (bytes differ from the ones published), a pack served compressed
/// (`Content-Encoding`, which breaks range requests and the SHA-256 check) or of another size.
///
/// The index is fetched as `gifpack install` fetches it (redirects followed, compressed bodies
/// accepted); each pack's first byte is asked for with a range request and `Accept-Encoding:
/// gzip`, as browsers and CDNs ask, so a `gzip_types` rule that would compress it shows.
///
/// ```swift
/// let check = try PublicReadCheck(publicURL: "https://cdn.example.com/gifpack/", outputDirectory: "dist")
/// if let problem = await check.run() { print("clients cannot install: \(problem)") }
/// ```
package struct PublicReadCheck: Sendable {
    /// Where the operator's documentation explains public reads.
    package static let guide = "docs/running-unattended.md, \"Letting clients read what is published\""

    /// The URL clients give `gifpack install --index`.
    package let indexURL: String
    package let outputDirectory: String

    /// `publicURL`: the index's URL (ending in `.json`) or the folder it is in (`…/gifpack/`).
    package init(publicURL: String, outputDirectory: String) {
        let trimmed = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let path = URLComponents(string: trimmed)?.path ?? ""
        indexURL = path.lowercased().hasSuffix(".json") ? trimmed : trimmed + "/index.json"
        self.outputDirectory = outputDirectory
    }

    /// Refuses a value that is not an http(s) URL (a command-line mistake, exit 2).
    package static func validate(_ publicURL: String) throws(ManifestError) {
        try ManifestLoader.checkHTTPURL(publicURL, path: "--public-url")
    }

    /// The hint for a status that means clients are refused or find nothing, nil for any other.
    package static func hint(forStatus status: Int) -> String? {
        switch status {
        case 401, 403: "the bucket or CDN refuses anonymous reads — see \(guide)"
        case 404: "nothing is served there: is this the address where the target is published, and is it readable anonymously? See \(guide)"
        default: nil
        }
    }

    /// Every problem found, joined into one sentence; nil when clients can read all of it.
    package func run() async -> String? {
        let local: (index: [UInt8], signature: [UInt8]?)
        do {
            let bytes = try await BlockingWork.run("gifpack.public-check") { () throws(FileSystemError) -> ([UInt8]?, [UInt8]?) in
                (try FileSystem.readAll("\(outputDirectory)/index.json"), try FileSystem.readAll("\(outputDirectory)/index.json.minisig"))
            }
            guard let index = bytes.0 else { return "\(outputDirectory)/index.json is missing" }
            local = (index, bytes.1)
        } catch {
            return "cannot read what was published: \(error)"
        }
        let client: HTTPClient
        do { client = try HTTPClient(maxConnections: 4) } catch { return "cannot start HTTP: \(error)" }
        defer { client.shutdown() }

        var problems: [String] = []
        switch await get(indexURL, client: client, maxBytes: 64 << 20) {
        case .failure(let problem):
            // Without the index nothing else a client does can work: one reason is enough.
            return problem.description
        case .success(let served):
            if served != local.index {
                problems.append(
                    "clients get another index.json from \(indexURL) than the one just published "
                        + "(\(Self.describe(served)) served, \(Self.describe(local.index)) published): a CDN or proxy serves a stale "
                        + "copy — purge it or shorten its cache time for index.json (see \(Self.guide))")
            }
        }
        if let problem = await checkCompressedIndex(local.index, client: client) { problems.append(problem) }
        if let signature = local.signature {
            let beside = SignatureLocation.beside(indexURL)
            if let problem = await checkSignature(
                at: beside, is: signature, client: client, ifMissing: "refuse the index",
                mismatch: "the index.json.minisig served at \(beside) is not the one just published (signature mismatch: a stale copy?)")
            {
                problems.append(problem)
            }
            // Clients look for the signature named by the index's hash first (docs/FORMAT.md, "Signatures").
            let hashNamed = SignatureLocation.hashNamed(indexURL, indexSHA256: StreamingSHA256.of(local.index))
            if let problem = await checkSignature(
                at: hashNamed, is: signature, client: client, ifMissing: "look for it first",
                mismatch: "the signature served at \(hashNamed) is not the one just published (signature mismatch)")
            {
                problems.append(problem)
            }
        }
        let index: PackIndex
        do { index = try BuilderIndexReader.decode(local.index) } catch { return "\(outputDirectory)/index.json: \(error)" }
        for (file, bytes) in index.allPacks.flatMap({ [($0.file, $0.bytes)] + ($0.posters.map { [($0.file, $0.bytes)] } ?? []) }) {
            if let problem = await checkPack(file, bytes: bytes, client: client) { problems.append(problem) }
            // One pack with the same fault says it for all of them.
            if problems.count >= 4 { break }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// The signature served at `url` must be `signature`: else what clients that check signatures
    /// would do (`ifMissing` when it cannot be read; refuse the index when it differs).
    private func checkSignature(
        at url: String, is signature: [UInt8], client: HTTPClient, ifMissing: String,
        mismatch: String
    ) async -> String? {
        switch await get(url, client: client, maxBytes: 1 << 16) {
        case .failure(let problem):
            return problem.description + "; clients that check signatures (--trusted-key) " + ifMissing
        case .success(let served) where served != signature:
            return mismatch + "; clients that check signatures (--trusted-key) refuse the index"
        case .success:
            return nil
        }
    }

    /// Clients fetch `index.json.zst` first: it must be served, and decode to the index just published.
    private func checkCompressedIndex(_ index: [UInt8], client: HTTPClient) async -> String? {
        let url = CompressedIndex.beside(indexURL)
        var request = HTTPRequest(url: url, timeouts: HTTPTimeouts(connect: .seconds(10), total: .seconds(60)))
        request.followRedirects = true
        let response: HTTPDataResponse
        do { response = try await client.data(request, maxBytes: 64 << 20) } catch {
            return "clients cannot read \(url): \(error)"
        }
        guard response.head.status == 200 else {
            if response.head.status == 404 || response.head.status == 403 {
                return "\(url) is not served (HTTP \(response.head.status)): clients fall back to the whole index.json "
                    + "(\(index.count) bytes) on every change — publish it (gifpack publish writes it) and serve it like index.json"
            }
            return Self.statusProblem(url, response.head.status)
        }
        let plain: [UInt8]
        do { plain = try CompressedIndex.decode(response.body, maxBytes: 64 << 20) } catch {
            return "\(url) is not a compressed copy of an index (\(error.reason)); clients refuse it — publish again to rewrite it"
        }
        guard plain == index else {
            return "the index.json.zst served at \(url) is not the index just published (\(Self.describe(plain)) served, "
                + "\(Self.describe(index)) published): clients read it before index.json — a stale copy; purge it or publish again"
        }
        return nil
    }

    private var folderURL: String {
        let withoutQuery = indexURL.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard let slash = withoutQuery.lastIndex(of: "/") else { return indexURL }
        return String(withoutQuery[...slash])
    }

    private func get(_ url: String, client: HTTPClient, maxBytes: Int64) async -> Result<[UInt8], Problem> {
        var request = HTTPRequest(
            url: url, timeouts: HTTPTimeouts(connect: .seconds(10), total: .seconds(60)),
            acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        do { response = try await client.data(request, maxBytes: maxBytes) } catch {
            return .failure(Problem("clients cannot read \(url): \(error)"))
        }
        guard response.head.status == 200 else { return .failure(Problem(Self.statusProblem(url, response.head.status))) }
        return .success(response.body)
    }

    /// Asks for the pack's first byte, as a sparse upgrade asks for its frames, with
    /// `Accept-Encoding: gzip` as browsers and CDNs send it (a server that ignores the range sends
    /// the whole pack, streamed to a temporary file removed at once: downloads go to regular files only).
    private func checkPack(_ file: String, bytes: Int64, client: HTTPClient) async -> String? {
        let url = folderURL + file
        var request = HTTPRequest(
            url: url, headers: HTTPHeaders([(name: "Accept-Encoding", value: "gzip")]),
            timeouts: HTTPTimeouts(connect: .seconds(10), total: .seconds(300)))
        request.byteRange = 0...0
        request.followRedirects = true
        let response: HTTPDownload
        let discarded = "\(NSTemporaryDirectory())/gifpack-public-read-\(UUID().uuidString).part"
        defer { FileSystem.remove(discarded) }
        do { response = try await client.download(request, to: discarded, maxBytes: bytes + (1 << 20)) } catch {
            return "clients cannot read \(url): \(error)"
        }
        let head = response.head
        guard head.status == 200 || head.status == 206 else { return Self.statusProblem(url, head.status) }
        if let encoding = head.headers["content-encoding"], !encoding.isEmpty, encoding.lowercased() != "identity" {
            return "\(url) is served compressed (Content-Encoding: \(TerminalText.escaped(encoding, maxScalars: 40))): range requests and "
                + "the SHA-256 check break — serve .tar.zst as application/zstd with gzip off (see \(Self.guide))"
        }
        let served: Int64? =
            head.status == 206
            ? head.headers["content-range"].flatMap { $0.split(separator: "/").last.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) } }
            : response.bytesWritten
        if let served, served != bytes {
            return "\(url) is served with \(served) bytes, index.json says \(bytes): a stale or foreign copy"
        }
        return nil
    }

    static func statusProblem(_ url: String, _ status: Int) -> String {
        "clients cannot read \(url): HTTP \(status)" + (hint(forStatus: status).map { " — \($0)" } ?? "")
    }

    /// "1234 bytes, sequence 7" for an index's bytes.
    static func describe(_ bytes: [UInt8]) -> String {
        let sequence = (try? BuilderIndexReader.decode(bytes))?.sequence
        return "\(bytes.count) bytes" + (sequence.map { ", sequence \($0)" } ?? "")
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
