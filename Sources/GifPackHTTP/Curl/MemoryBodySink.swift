/// Collects a body in memory, refusing it once it would exceed `maxBytes`.
final class MemoryBodySink: BodySink, @unchecked Sendable {  // @unchecked: one thread at a time: the loop thread while the transfer runs, the awaiting task once it ended.
    let maxBytes: Int64
    private(set) var bytes: [UInt8] = []

    init(maxBytes: Int64) {
        self.maxBytes = maxBytes
    }

    func open() throws(HTTPError) {}

    func write(_ chunk: UnsafeRawBufferPointer) -> HTTPError? {
        guard Int64(bytes.count) + Int64(chunk.count) <= maxBytes else { return .bodyTooLarge(limit: maxBytes) }
        bytes.append(contentsOf: chunk)
        return nil
    }

    var bodyPrefix: [UInt8] { Array(bytes.prefix(HTTPDownload.prefixLength)) }
    var bodyBytes: Int64 { Int64(bytes.count) }

    func close() -> HTTPError? { nil }
}
