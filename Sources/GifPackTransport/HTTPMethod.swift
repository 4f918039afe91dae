/// The request methods `HTTPClient` sends: GET by default; HEAD, PUT and DELETE for object
/// stores (see `HTTPRequest/method`).
///
/// ```swift
/// var request = HTTPRequest(url: "http://127.0.0.1:9000/bucket/packs/all-v1-1a2b3c4d.tar.zst")
/// request.method = .head
/// ```
package enum HTTPMethod: String, Sendable, Equatable {
    case get = "GET"
    case head = "HEAD"
    case put = "PUT"
    case delete = "DELETE"
}

/// A request body, sent as it is read: a file streamed from disk (never loaded whole), or bytes
/// in memory. Only ``HTTPMethod/put`` requests carry one.
///
/// ```swift
/// request.method = .put
/// request.body = .file(path: "dist/packs/all-v1-1a2b3c4d.tar.zst")
/// ```
package enum HTTPRequestBody: Sendable, Equatable {
    case file(path: String)
    case bytes([UInt8])
}

/// AWS Signature Version 4 for a request, computed by libcurl (`CURLOPT_AWS_SIGV4` with
/// `CURLOPT_USERPWD`). Printing it never shows the secret or the key id.
///
/// ```swift
/// request.awsSignature = AWSSignature(region: "us-east-1", service: "s3", accessKeyID: id, secretAccessKey: secret)
/// ```
package struct AWSSignature: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var region: String
    package var service: String
    package var accessKeyID: String
    package var secretAccessKey: String

    package init(region: String, service: String, accessKeyID: String, secretAccessKey: String) {
        self.region = region
        self.service = service
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    package var description: String { "AWS SigV4 (\(region), \(service), credentials <redacted>)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["region": region, "service": service], displayStyle: .struct) }
}
