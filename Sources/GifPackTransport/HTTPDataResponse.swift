/// A response whose body was collected in memory by `HTTPClient/data(_:maxBytes:)`.
///
/// The body is what the server sent, decoded when the request accepted compressed bodies; it is
/// returned whatever the status, so that error bodies (JSON messages) can be read.
///
/// ```swift
/// let response = try await client.data(request, maxBytes: 1 << 20)
/// guard response.head.status == 200 else { … }
/// let json = try JSONDecoder().decode(Page.self, from: Data(response.body))
/// ```
public struct HTTPDataResponse: Sendable {
    /// The final response's status line and headers.
    package var head: HTTPResponseHead
    /// The body, decoded when the request accepted compressed bodies.
    package var body: [UInt8]

    /// What a transport hands back for a request with its body in memory.
    public init(head: HTTPResponseHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }
}
