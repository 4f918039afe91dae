/// Serves one connection on its own thread: reads requests one after another (HTTP/1.1
/// keep-alive, `Connection: close` honoured), lets the router answer, waits the configured
/// latency, and writes the response the way its delivery says — whole, cut short, dripped, or
/// as a connection reset.
///
/// ```swift
/// ConnectionHandler(router: router, registry: registry, stopSignal: stopSignal).serve(descriptor: fd)
/// ```
struct ConnectionHandler: Sendable {
    /// Dripped bodies are written in slices this often.
    static let dripIntervalMilliseconds = 50
    /// Bodies up to this size go out in the same `send` as the head.
    static let coalesceLimit = 256 * 1024

    let router: FixtureRouter
    let registry: ConnectionRegistry
    let stopSignal: StopSignal

    /// What the connection does after a request.
    private enum Next {
        case keepGoing
        case close
        case reset
    }

    /// Runs until the connection ends, then closes it through the registry.
    func serve(descriptor: Int32) {
        let connection = SocketConnection(descriptor: descriptor)
        router.stats.connectionAccepted()
        var next = Next.keepGoing
        defer { registry.close(descriptor, reset: next == .reset) }
        while next == .keepGoing, !stopSignal.isFired {
            switch connection.readRequest() {
            case .closed:
                next = .close
            case .rejected(let status):
                router.stats.begin()
                _ = write(FixtureRouter.rejection(status: status), kind: .other, keepAlive: false, to: connection)
                next = .close
            case .request(let request) where FixtureRouter.isControl(request):
                let response = router.route(request).response
                let head = response.head(keepAlive: request.wantsKeepAlive, date: HTTPDate.now())
                connection.send(head[...] + response.bodyToWrite)
                next = request.wantsKeepAlive ? .keepGoing : .close
            case .request(let request):
                next = serveData(request, on: connection)
            }
        }
    }

    /// Routes, waits the latency (a reset comes at once), writes; counted in flight throughout.
    private func serveData(_ request: HTTPRequest, on connection: SocketConnection) -> Next {
        router.stats.begin()
        let routed = router.route(request)
        if routed.response.delivery == .reset {
            router.stats.record(status: 0, kind: routed.kind, plannedBytes: 0)
            router.stats.finish(unsentBytes: 0)
            return .reset
        }
        guard stopSignal.sleep(milliseconds: router.state.latencyMilliseconds) else {
            router.stats.record(status: 0, kind: routed.kind, plannedBytes: 0)
            router.stats.finish(unsentBytes: 0)
            return .close
        }
        if routed.kind == .list { router.state.listGate.pass(offset: Int(request.query["offset"] ?? "") ?? 0) }
        if case .image(let id?) = routed.kind { router.state.imageGate.pass(id: router.state.catalog.canonicalID(id)) }
        let keepAlive = request.wantsKeepAlive && !isTruncated(routed.response)
        let complete = write(routed.response, kind: routed.kind, keepAlive: keepAlive, to: connection)
        return complete && keepAlive ? .keepGoing : .close
    }

    private func isTruncated(_ response: HTTPResponse) -> Bool {
        if case .truncated = response.delivery { return true }
        return false
    }

    /// Records and writes a response (the stats are settled even if the peer goes away);
    /// false if not every byte could be written.
    private func write(
        _ response: HTTPResponse, kind: StatsRecorder.Kind, keepAlive: Bool, to connection: SocketConnection
    ) -> Bool {
        let head = response.head(keepAlive: keepAlive, date: HTTPDate.now())
        let body = response.bodyToWrite
        let planned = head.count + body.count
        router.stats.record(status: response.status, kind: kind, plannedBytes: planned)
        var sent = 0
        if case .dripped(let rate) = response.delivery {
            sent = connection.send(head[...])
            if sent == head.count { sent += drip(body, bytesPerSecond: rate, to: connection) }
        } else if body.count <= ConnectionHandler.coalesceLimit {
            sent = connection.send(head[...] + body)
        } else {
            sent = connection.send(head[...])
            if sent == head.count { sent += connection.send(body) }
        }
        router.stats.finish(unsentBytes: planned - sent)
        return sent == planned
    }

    /// Writes `body` in slices paced to `bytesPerSecond`; returns the bytes written.
    private func drip(_ body: ArraySlice<UInt8>, bytesPerSecond: Int, to connection: SocketConnection) -> Int {
        let slice = max(1, bytesPerSecond * ConnectionHandler.dripIntervalMilliseconds / 1000)
        let interval = max(1, slice * 1000 / bytesPerSecond)
        var sent = 0
        var start = body.startIndex
        while start < body.endIndex {
            let end = min(start + slice, body.endIndex)
            let written = connection.send(body[start..<end])
            sent += written
            guard written == end - start, end < body.endIndex else { break }
            guard stopSignal.sleep(milliseconds: interval) else { break }
            start = end
        }
        return sent
    }
}
