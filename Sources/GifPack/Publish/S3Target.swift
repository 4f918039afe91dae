import Crypto
import GifPackHTTP

/// Publishes into an S3 bucket under a prefix (AWS, or any S3-compatible store with `--endpoint`,
/// path-style). Packs are PUT streaming from disk with their SHA-256 as `x-amz-content-sha256`
/// (the store checks the body against it) and as `x-amz-meta-sha256`, then confirmed by a HEAD
/// (size and that metadata). `index.json` is written with `If-Match: <live ETag>`, or
/// `If-None-Match: *` when there is no live index, so a publisher that raced ahead is not
/// overwritten where the store honours conditional writes.
///
/// ```swift
/// let target = try S3Target(bucket: "cdn", prefix: "gifpack/", endpoint: nil, environment: env, client: client)
/// ```
struct S3Target: PublishTarget {
    let bucket: S3Bucket

    /// The variables credentials come from; messages name them, never their values.
    static let credentialVariables = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN when set)"

    init(bucket name: String, prefix: String, endpoint: String?, environment: [String: String], client: HTTPClient) throws(PublishError) {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
            throw .usage("publishing to S3 needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment (AWS_SESSION_TOKEN and AWS_REGION optional); at least one is unset or empty")
        }
        let region = environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["AWS_DEFAULT_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        guard region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw .usage("AWS_REGION is not a region name (letters, digits and dashes)")
        }
        let credentials = S3Bucket.Credentials(
            accessKeyID: id, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"],
            region: region)
        bucket = S3Bucket(endpoint: endpoint, bucket: name, prefix: prefix, credentials: credentials, client: client)
    }

    var displayName: String { "s3://\(bucket.bucket)/\(bucket.prefix)" + (bucket.endpoint.map { " at \($0)" } ?? "") }

    func readLiveIndex() async throws(PublishError) -> LiveIndex? {
        let response = try await call("read index.json") { () async throws(HTTPError) in try await bucket.get("index.json", maxBytes: PublishFileReader.maxIndexBytes) }
        switch response.head.status {
        case 200: return LiveIndex(bytes: response.body, etag: response.head.headers["etag"])
        case 404 where S3ErrorBody(xml: String(decoding: response.body, as: UTF8.self)).code != "NoSuchBucket": return nil
        default: throw refusal(response, doing: "read index.json")
        }
    }

    func read(_ key: String, maxBytes: Int64) async throws(PublishError) -> [UInt8]? {
        let response = try await call("read \(key)") { () async throws(HTTPError) in try await bucket.get(key, maxBytes: maxBytes) }
        switch response.head.status {
        case 200: return response.body
        case 404 where S3ErrorBody(xml: String(decoding: response.body, as: UTF8.self)).code != "NoSuchBucket": return nil
        default: throw refusal(response, doing: "read \(key)")
        }
    }

    func stat(_ key: String) async throws(PublishError) -> StoredObject? {
        let head = try await call("check \(key)") { () async throws(HTTPError) in try await bucket.head(key) }
        switch head.status {
        case 200:
            let size = head.headers["content-length"].flatMap { Int64($0) } ?? -1
            return StoredObject(bytes: size, sha256: head.headers["x-amz-meta-sha256"]?.lowercased())
        case 404: return nil
        default: throw refusal(HTTPDataResponse(head: head, body: []), doing: "check \(key)")
        }
    }

    func putPack(_ key: String, from path: String, bytes: Int64, sha256: String) async throws(PublishError) {
        let headers: HTTPHeaders = [
            "Cache-Control": PublishHeaders.packCacheControl,
            "Content-Type": PublishHeaders.packContentType,
            "x-amz-meta-sha256": sha256
        ]
        let response = try await call("upload \(key)") { () async throws(HTTPError) in
            try await bucket.put(key, body: .file(path: path), payloadSHA256: sha256, headers: headers)
        }
        guard response.head.status == 200 else { throw refusal(response, doing: "upload \(key)") }
        let stored = try await stat(key)
        guard let stored, stored.bytes == bytes, stored.sha256 == sha256 else {
            throw .failed("uploaded \(key) but the store reports \(stored.map { "\($0.bytes) bytes, sha256 \($0.sha256 ?? "unknown")" } ?? "no object"); expected \(bytes) bytes, \(sha256)")
        }
    }

    func putMetadataFile(
        _ key: String, bytes: [UInt8], contentType: String, maxAge: Int, replacing live: LiveIndex?,
        conditional: Bool
    ) async throws(PublishError) {
        let sha = SHA256Hex.of(bytes)
        var headers: HTTPHeaders = [
            "Cache-Control": PublishHeaders.shortCacheControl(maxAge: maxAge), "Content-Type": contentType,
            "x-amz-meta-sha256": sha
        ]
        if conditional {
            if let etag = live?.etag {
                headers.append(name: "If-Match", value: etag)
            } else if live == nil {
                headers.append(name: "If-None-Match", value: "*")
            }
        }
        let response = try await call("upload \(key)") { () async throws(HTTPError) in
            try await bucket.put(key, body: .bytes(bytes), payloadSHA256: sha, headers: headers)
        }
        switch response.head.status {
        case 200: return
        case 412 where conditional, 409 where conditional:
            throw .superseded(
                "\(displayName)index.json changed while this publish ran (the store refused the conditional write, HTTP \(response.head.status)); another publisher was faster — nothing was replaced, run again to compare sequences"
            )
        default: throw refusal(response, doing: "upload \(key)")
        }
    }

    /// The most keys a listing of `packs/` may gather (100 pages): retention keeps a few versions of
    /// each pack, so more means a runaway listing.
    static let maxListedKeys = 100 * S3Bucket.maxListPageKeys

    func listKeys(under folder: String) async throws(PublishError) -> [String] {
        var keys: [String] = []
        var continuation: String?
        var tokens: Set<String> = []
        repeat {
            let token = continuation
            let page = try await call("list \(folder)") { () async throws(HTTPError) in try await bucket.listPage(keyPrefix: folder, continuation: token) }
            switch page {
            case .page(let page):
                keys += page.objects.map(\.key)
                continuation = page.isTruncated ? page.nextContinuationToken : nil
            case .refused(let response): throw refusal(response, doing: "list \(folder)")
            case .unacceptable(let why): throw .failed("cannot list \(folder) at \(displayName): \(why)")
            }
            guard keys.count <= Self.maxListedKeys else {
                throw .failed("cannot list \(folder) at \(displayName): more than \(Self.maxListedKeys) keys under \(folder) (retention keeps a few versions per pack); nothing was deleted")
            }
            if let continuation, !tokens.insert(continuation).inserted {
                throw .failed("cannot list \(folder) at \(displayName): the store gave the same continuation token twice (a listing that never ends); nothing was deleted")
            }
        } while continuation != nil
        return keys.sorted()
    }

    func delete(_ key: String) async throws(PublishError) {
        let response = try await call("delete \(key)") { () async throws(HTTPError) in try await bucket.delete(key) }
        guard response.head.status == 204 || response.head.status == 200 || response.head.status == 404 else {
            throw refusal(response, doing: "delete \(key)")
        }
    }

    func removeLeftovers() async {}

    private func call<T>(_ what: String, _ body: () async throws(HTTPError) -> T) async throws(PublishError) -> T {
        do { return try await body() } catch {
            throw .failed("cannot \(what) at \(displayName): \(error)")
        }
    }

    /// The error for a non-success answer: credentials, a missing bucket, or the store's message.
    /// Only the body's parsed `Code` and `Message` are used, each cleaned by ``storeText(_:maxScalars:)``.
    private func refusal(_ response: HTTPDataResponse, doing what: String) -> PublishError {
        let error = S3ErrorBody(xml: String(decoding: response.body.prefix(64 << 10), as: UTF8.self))
        let status = response.head.status
        let code =
            error.code.utf8.count <= 64 && error.code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") })
            ? error.code : error.code.isEmpty ? "" : "(an unreadable error code)"
        let credentialCodes: Set<String> = [
            "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken",
            "ExpiredToken", "AuthorizationHeaderMalformed", "InvalidClientTokenId"
        ]
        if status == 401 || status == 403 || credentialCodes.contains(code) {
            return .credentialsRejected("the store refused to \(what) at \(displayName) (HTTP \(status)\(code.isEmpty ? "" : ", \(code)")): check \(Self.credentialVariables) and AWS_REGION")
        }
        if code == "NoSuchBucket" {
            return .failed("bucket \(bucket.bucket) does not exist at \(bucket.endpoint ?? "AWS (\(bucket.credentials.region))")")
        }
        let message = storeText(error.message, maxScalars: 200)
        let detail = code.isEmpty ? "" : ": \(code)\(message.isEmpty ? "" : " — \(message)")"
        return .failed("cannot \(what) at \(displayName): HTTP \(status)\(detail)")
    }

    /// Text from a store's answer, fit for a message: a text quoting a request header that carries
    /// credentials (`Authorization`, `x-amz-security-token`, a SigV4 `Credential=`/`Signature=`) is
    /// withheld whole; every credential value still in it is replaced by `<redacted>`; then it is
    /// terminal-escaped and bounded.
    func storeText(_ text: String, maxScalars: Int) -> String {
        let lowered = text.lowercased()
        let quotesCredentials = ["authorization", "x-amz-security-token", "security-token", "credential=", "signature="].contains {
            lowered.contains($0)
        }
        if quotesCredentials { return "(the store's message is withheld: it quotes a request header that carries credentials)" }
        let credentials = bucket.credentials
        let redactor = SecretRedactor(secrets: [credentials.accessKeyID, credentials.secretAccessKey, credentials.sessionToken ?? ""])
        return TerminalText.escaped(redactor.redact(text), maxScalars: maxScalars)
    }
}

/// The cache headers of published files.
enum PublishHeaders {
    /// Packs never change under their name.
    static let packCacheControl = "public, max-age=31536000, immutable"
    static let packContentType = "application/zstd"
    static func shortCacheControl(maxAge: Int) -> String { "public, max-age=\(maxAge)" }
}

/// Lowercase hex SHA-256 of bytes in memory.
enum SHA256Hex {
    static func of(_ bytes: [UInt8]) -> String { Hex.lowercase(SHA256.hash(data: bytes)) }
}
