/// One bucket (and key prefix) of Amazon S3 or an S3-compatible store, spoken to over
/// ``HTTPClient`` with libcurl's AWS SigV4 signing: HEAD, GET, PUT (a file streamed from disk, or
/// bytes), DELETE and ListObjectsV2.
///
/// With an `endpoint` (MinIO, Ceph, R2, moto, …) URLs are path-style, `ENDPOINT/BUCKET/PREFIXKEY`;
/// without one they are AWS's virtual-hosted `https://BUCKET.s3.REGION.amazonaws.com/PREFIXKEY`.
/// Every request carries `x-amz-content-sha256` (curl signs it; S3 checks an upload against it)
/// and, with a session token, `x-amz-security-token`. Responses are returned whatever their
/// status: the caller judges a 403 or a 404 (``S3ErrorBody`` reads the error code).
///
/// ```swift
/// let bucket = S3Bucket(endpoint: "http://127.0.0.1:5000", bucket: "cdn", prefix: "gifpack/",
///                       credentials: credentials, client: client)
/// let head = try await bucket.head("index.json")
/// _ = try await bucket.put("packs/all-v1-1a2b3c4d.tar.zst", body: .file(path: path),
///                          payloadSHA256: sha256, headers: ["Cache-Control": "public, max-age=31536000, immutable"])
/// ```
package struct S3Bucket: Sendable {
    /// What signs the requests: the key pair, an optional session token and the region.
    package struct Credentials: Sendable, Equatable, CustomStringConvertible {
        package var accessKeyID: String
        package var secretAccessKey: String
        package var sessionToken: String?
        package var region: String

        package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String = "us-east-1") {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
            self.region = region
        }

        package var description: String { "S3 credentials for \(region) (<redacted>)" }
    }

    package let endpoint: String?
    package let bucket: String
    /// Empty, or ends with "/".
    package let prefix: String
    package let credentials: Credentials
    package let client: HTTPClient
    package var timeouts: HTTPTimeouts

    /// SHA-256 of no bytes: the payload hash of every request without a body.
    package static let emptyPayloadSHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    package init(
        endpoint: String?, bucket: String, prefix: String, credentials: Credentials, client: HTTPClient,
        timeouts: HTTPTimeouts = HTTPTimeouts(
            connect: .seconds(10), total: .seconds(3600), lowSpeedBytesPerSecond: 1024,
            lowSpeedWindow: .seconds(60))
    ) {
        var endpoint = endpoint
        while endpoint?.hasSuffix("/") == true { endpoint?.removeLast() }
        self.endpoint = endpoint
        self.bucket = bucket
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        self.credentials = credentials
        self.client = client
        self.timeouts = timeouts
    }

    /// Where the bucket's root is: `ENDPOINT/BUCKET` or `https://BUCKET.s3.REGION.amazonaws.com`.
    package var bucketURL: String {
        if let endpoint { return "\(endpoint)/\(Self.encode(bucket, keepSlash: false))" }
        return "https://\(bucket).s3.\(credentials.region).amazonaws.com"
    }

    /// The URL of `key` (below the prefix): each `/`-separated segment of the prefix and key
    /// percent-encoded on its own. A key with an empty, `.` or `..` segment is refused (an HTTP
    /// library or proxy would fold such a path onto another key, outside the prefix or the bucket).
    package func url(of key: String) throws(HTTPError) -> String {
        let segments = (prefix + key).split(separator: "/", omittingEmptySubsequences: false)
        guard !key.isEmpty, !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw .invalidURL("S3 key \"\(Self.printable(prefix + key))\" has an empty, \".\" or \"..\" segment")
        }
        return "\(bucketURL)/" + segments.map { Self.encode(String($0), keepSlash: false) }.joined(separator: "/")
    }

    /// A key for a message: control characters escaped, at most 200 characters.
    static func printable(_ key: String) -> String {
        var out = ""
        for scalar in key.unicodeScalars.prefix(200) {
            out +=
                scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return key.unicodeScalars.count > 200 ? out + "…" : out
    }

    package func head(_ key: String) async throws(HTTPError) -> HTTPResponseHead {
        try await send(request(.head, url: try url(of: key)), maxBytes: 0).head
    }

    /// The object's bytes (up to `maxBytes`) with its head.
    package func get(_ key: String, maxBytes: Int64) async throws(HTTPError) -> HTTPDataResponse {
        try await send(request(.get, url: try url(of: key)), maxBytes: maxBytes)
    }

    /// Stores `body` under `key`. `payloadSHA256` is the body's SHA-256 (lowercase hex): signed, and
    /// checked by S3 against what arrives.
    package func put(_ key: String, body: HTTPRequestBody, payloadSHA256: String, headers: HTTPHeaders) async throws(HTTPError) -> HTTPDataResponse {
        var request = request(.put, url: try url(of: key), payloadSHA256: payloadSHA256)
        for (name, value) in headers { request.headers.append(name: name, value: value) }
        request.body = body
        return try await send(request, maxBytes: 1 << 20)
    }

    package func delete(_ key: String) async throws(HTTPError) -> HTTPDataResponse {
        try await send(request(.delete, url: try url(of: key)), maxBytes: 1 << 20)
    }

    /// Keys asked for per ListObjectsV2 page (`max-keys`; S3's own ceiling) and the most a page may hold.
    package static let maxListPageKeys = 1000
    /// The largest ListObjectsV2 page body read: 1000 keys of S3's longest (1024 bytes) with their
    /// other elements fit well below it; anything larger is not a listing to trust.
    package static let maxListPageBytes: Int64 = 4 << 20

    /// One ListObjectsV2 page (at most ``maxListPageKeys`` keys, asked with `max-keys`) of the keys
    /// starting with `prefix + keyPrefix`; keys come back without the bucket's prefix. Non-200
    /// answers are returned as the response to judge; a page body over ``maxListPageBytes`` or with
    /// more keys than asked is ``S3ListOutcome/unacceptable(_:)``, never parsed into a list.
    package func listPage(keyPrefix: String, continuation: String?) async throws(HTTPError) -> S3ListOutcome {
        var query = "list-type=2&max-keys=\(Self.maxListPageKeys)&prefix=\(Self.encode(prefix + keyPrefix, keepSlash: false))"
        if let continuation { query += "&continuation-token=\(Self.encode(continuation, keepSlash: false))" }
        let response: HTTPDataResponse
        do { response = try await send(request(.get, url: "\(bucketURL)/?\(query)"), maxBytes: Self.maxListPageBytes) } catch {
            guard case .bodyTooLarge = error else { throw error }
            return .unacceptable("the listing page is larger than \(Self.maxListPageBytes) bytes (a page of \(Self.maxListPageKeys) keys is far smaller): not a ListObjectsV2 answer to use")
        }
        guard response.head.status == 200 else { return .refused(response) }
        var page = S3ListPage(xml: String(decoding: response.body, as: UTF8.self))
        guard page.objects.count <= Self.maxListPageKeys else {
            return .unacceptable("the listing page holds \(page.objects.count) keys, more than the \(Self.maxListPageKeys) asked for (max-keys)")
        }
        page.objects = page.objects.compactMap { object in
            guard object.key.hasPrefix(prefix) else { return nil }
            var object = object
            object.key = String(object.key.dropFirst(prefix.count))
            return object
        }
        return .page(page)
    }

    private func request(_ method: HTTPMethod, url: String, payloadSHA256: String = S3Bucket.emptyPayloadSHA256) -> HTTPRequest {
        var request = HTTPRequest(url: url, timeouts: timeouts)
        request.method = method
        request.headers.append(name: "x-amz-content-sha256", value: payloadSHA256)
        if let token = credentials.sessionToken, !token.isEmpty {
            request.headers.append(name: "x-amz-security-token", value: token)
        }
        request.awsSignature = AWSSignature(
            region: credentials.region, service: "s3", accessKeyID: credentials.accessKeyID,
            secretAccessKey: credentials.secretAccessKey)
        return request
    }

    private func send(_ request: HTTPRequest, maxBytes: Int64) async throws(HTTPError) -> HTTPDataResponse {
        try await client.data(request, maxBytes: maxBytes)
    }

    /// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters stay, and "/" when asked.
    package static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%\(digits[Int(byte >> 4)])\(digits[Int(byte & 0x0F)])"
            }
        }
        return out
    }
}

/// A ListObjectsV2 answer: a page, the store's refusal (any status but 200) to judge, or a page
/// outside the bounds (too large, too many keys), with why.
package enum S3ListOutcome: Sendable {
    case page(S3ListPage)
    case refused(HTTPDataResponse)
    case unacceptable(String)
}
