import Foundation
import Glibc
@testable import GifPackTestSupport

/// A tiny loopback HTTP/1.1 file server for the client tests: serves files under `root` for GET,
/// honours `Range: bytes=N-` and `Range: bytes=N-M` with `206 Partial Content`, and can misbehave
/// on purpose — cut a response short after N body bytes (the full `Content-Length` is announced,
/// then the connection closes, as a dropped download looks to curl), ignore Range headers (answer
/// 200), answer a range with the right length but a `Content-Range` one byte off, or honour the
/// first range request and ignore the second, as a CDN whose edges do not all honour Range, or
/// compress on the fly (``gzip(_:)``: `<file>.gz` beside a file is sent for it with
/// `Content-Encoding: gzip`), answer a path with `302 Found` to another URL (``redirect(path:to:)``),
/// or read a request and never answer it (``neverAnswer(path:)``). It is the test suite's one
/// hand-written HTTP server; nginx (``NginxServer``) and the fixture server are the others it talks to.
///
/// One thread accepts (woken through a pipe to stop) and each connection is served on its own
/// thread with `Connection: close`. Every request's path and Range header are recorded.
///
/// ```swift
/// let server = try ClientStaticFileServer(root: workspace.file("dist"))
/// defer { server.stop() }
/// server.cutShort(path: "/packs/all-v1.tar.zst", afterBytes: 1000, times: 1)
/// let url = server.baseURL + "/index.json"
/// ```
final class ClientStaticFileServer: @unchecked Sendable {
    struct Request: Sendable, Equatable {
        var path: String
        var range: String?
        var acceptEncoding: String? = nil
    }

    /// When a file with a `<file>.gz` beside it is answered with that instead (whole, `200`,
    /// `Content-Encoding: gzip`), as a server compressing on the fly.
    enum Gzip: Sendable {
        /// Never (the default).
        case off
        /// Unless the request's `Accept-Encoding` leaves gzip out: no field means any coding (RFC 9110).
        case unlessRefused
        /// Whatever the request accepts (a misconfigured server or CDN).
        case always
    }

    let root: String
    let port: Int
    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let lock = NSLock()
    private var recorded: [Request] = []
    private var cuts: [String: (bytes: Int, times: Int)] = [:]
    private var rangeIgnored: Set<String> = []
    private var rangeShifted: Set<String> = []
    /// Paths whose second range request is answered 200 (``honourOnlyTheFirstRange(path:)``): the range requests seen.
    private var mixedRanges: [String: Int] = [:]
    private var stopped = false
    private var gzipMode = Gzip.off
    private var redirects: [String: String] = [:]
    private var silent: Set<String> = []
    private let finished = DispatchSemaphore(value: 0)
    /// The empty folder a server made with ``init()`` serves from.
    private let ownRoot: TemporaryDirectory?

    /// A server with no files: for ``redirect(path:to:)`` and ``neverAnswer(path:)``; any other
    /// path is answered 404.
    convenience init() throws {
        let folder = try TemporaryDirectory()
        try self.init(root: folder.path, owning: folder)
    }

    convenience init(root: String) throws {
        try self.init(root: root, owning: nil)
    }

    private init(root: String, owning folder: TemporaryDirectory?) throws {
        self.root = root
        ownRoot = folder
        let (fd, port) = try LoopbackPort.listening(backlog: 64)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(fd)
            throw POSIXError(.EMFILE)
        }
        listener = fd
        self.port = port
        wakeRead = ends[0]
        wakeWrite = ends[1]
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "static-file-server"
        thread.start()
    }

    deinit { stop() }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Requests received so far, in order.
    var requests: [Request] { lock.withLock { recorded } }

    /// The next `times` responses for `path` send only `afterBytes` body bytes, then close.
    func cutShort(path: String, afterBytes: Int, times: Int = 1) {
        lock.withLock { cuts[path] = (afterBytes, times) }
    }

    /// Requests for `path` get the whole file with 200 even when they ask for a range.
    func ignoreRange(path: String) {
        lock.withLock { _ = rangeIgnored.insert(path) }
    }

    /// A CDN whose edges do not all honour Range, for `path`: the first range request gets its
    /// `206`, the second the whole file with `200`, and each later one is held unanswered until
    /// its client hangs up (at most 10 s, then it gets its `206`), so the `200` reaches a client
    /// that asks several ranges at once while the others are still in flight. Requests without
    /// Range are served as usual.
    func honourOnlyTheFirstRange(path: String) {
        lock.withLock { mixedRanges[path] = 0 }
    }

    /// Answers files that have a `<file>.gz` beside them with it, as `mode` says.
    func gzip(_ mode: Gzip) {
        lock.withLock { gzipMode = mode }
    }

    /// Requests for `path` are answered `302 Found` with `Location: location` and no body.
    func redirect(path: String, to location: String) {
        lock.withLock { redirects[path] = location }
    }

    /// Requests for `path`, or for any path it begins (`/silent` covers `/silent.zst`), are read and
    /// never answered: the connection stays open until the
    /// client hangs up (or a minute passes), as a server that accepts and then says nothing.
    func neverAnswer(path: String) {
        lock.withLock { _ = silent.insert(path) }
    }

    /// Range answers for `path` carry bytes and a `Content-Range` one byte further than asked.
    func shiftRanges(path: String) {
        lock.withLock { _ = rangeShifted.insert(path) }
    }

    /// Stops accepting and waits for the accept thread to end. Safe to call twice.
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        finished.wait()
        close(listener)
        close(wakeRead)
        close(wakeWrite)
    }

    private func acceptLoop() {
        defer { finished.signal() }
        while true {
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        guard let head = readHead(client) else { return }
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, parts[0] == "GET" else { return respond(client, status: "405 Method Not Allowed", body: []) }
        let path = String(parts[1])
        let range = lines.dropFirst().first { $0.lowercased().hasPrefix("range:") }
            .map { $0.dropFirst("range:".count).trimmingCharacters(in: .whitespaces) }
        let acceptEncoding = lines.dropFirst().first { $0.lowercased().hasPrefix("accept-encoding:") }
            .map { $0.dropFirst("accept-encoding:".count).trimmingCharacters(in: .whitespaces) }
        let (redirect, mute) = lock.withLock { (redirects[path], silent.contains { path.hasPrefix($0) }) }
        if mute {
            lock.withLock { recorded.append(Request(path: path, range: range, acceptEncoding: acceptEncoding)) }
            _ = waitForHangUp(client, milliseconds: 60_000)
            return
        }
        if let redirect {
            lock.withLock { recorded.append(Request(path: path, range: range, acceptEncoding: acceptEncoding)) }
            return respond(client, status: "302 Found", body: [], headers: ["Location: \(redirect)"])
        }
        let (cut, ignoreRange, shift, hold, gzip) = lock.withLock { () -> (Int?, Bool, Bool, Bool, Gzip) in
            recorded.append(Request(path: path, range: range, acceptEncoding: acceptEncoding))
            var cut: Int?
            if let entry = cuts[path], entry.times > 0 {
                cut = entry.bytes
                cuts[path] = (entry.bytes, entry.times - 1)
            }
            var mixed = 0
            if range != nil, let seen = mixedRanges[path] {
                mixed = seen + 1
                mixedRanges[path] = mixed
            }
            return (cut, rangeIgnored.contains(path) || mixed == 2, rangeShifted.contains(path), mixed > 2, gzipMode)
        }
        if hold, !waitForHangUp(client, milliseconds: 10_000) { return }
        guard !path.contains(".."), let data = FileManager.default.contents(atPath: root + path) else {
            return respond(client, status: "404 Not Found", body: Array("not found\n".utf8))
        }
        let compress =
            switch gzip {
            case .off: false
            case .unlessRefused: acceptEncoding.map { $0.lowercased().contains("gzip") } ?? true
            case .always: true
            }
        if compress, let gzipped = FileManager.default.contents(atPath: root + path + ".gz") {
            return respond(client, status: "200 OK", body: [UInt8](gzipped), headers: ["Content-Encoding: gzip", "Vary: Accept-Encoding"])
        }
        let bytes = [UInt8](data)
        var start = 0
        var end = bytes.count - 1
        var partial = false
        if let range, !ignoreRange, range.hasPrefix("bytes=") {
            let bounds = range.dropFirst("bytes=".count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            if bounds.count == 2, let from = Int(bounds[0]) {
                guard from < bytes.count else {
                    return respond(
                        client, status: "416 Range Not Satisfiable", body: [],
                        headers: ["Content-Range: bytes */\(bytes.count)"])
                }
                start = from
                if let to = Int(bounds[1]) { end = min(to, bytes.count - 1) }
                if shift, end + 1 < bytes.count {
                    start += 1
                    end += 1
                }
                partial = start > 0 || end < bytes.count - 1 || !bounds[1].isEmpty
            }
        }
        let body = Array(bytes[start...end])
        let status = partial ? "206 Partial Content" : "200 OK"
        let extra = partial ? ["Content-Range: bytes \(start)-\(end)/\(bytes.count)"] : []
        respond(client, status: status, body: body, headers: extra + ["Accept-Ranges: bytes"], cutAfter: cut)
    }

    /// Waits until the client closes its end (false) or `milliseconds` pass (true).
    private func waitForHangUp(_ client: Int32, milliseconds: Int32) -> Bool {
        var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return ready == 0 }
            var byte: UInt8 = 0
            return recv(client, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
        }
    }

    private func readHead(_ client: Int32) -> String? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while buffer.count < 65536 {
            let got = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard got > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<got])
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                return String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            }
        }
        return nil
    }

    private func respond(_ client: Int32, status: String, body: [UInt8], headers: [String] = [], cutAfter: Int? = nil) {
        let head =
            ([
                "HTTP/1.1 \(status)", "Content-Length: \(body.count)", "Content-Type: application/octet-stream",
                "Connection: close"
            ] + headers).joined(separator: "\r\n") + "\r\n\r\n"
        let sent = cutAfter.map { min($0, body.count) } ?? body.count
        send(client, Array(head.utf8) + body[0..<sent])
    }

    private func send(_ client: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let wrote = bytes[offset...].withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if wrote <= 0 { return }
            offset += wrote
        }
    }
}
