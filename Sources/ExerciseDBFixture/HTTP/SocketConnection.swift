import GifPackSystem
import Glibc

/// One accepted TCP connection, used by its own thread only: reads request heads (keeping any
/// pipelined bytes for the next request), discards request bodies, writes raw bytes.
///
/// The descriptor is closed by ``ConnectionRegistry``, not here, so `stop()` can shut every
/// connection down without racing a close.
///
/// ```swift
/// let connection = SocketConnection(descriptor: fd)
/// if case .request(let request) = connection.readRequest() { _ = connection.send(bytes[...]) }
/// ```
final class SocketConnection {
    /// What reading the next request produced.
    enum ReadOutcome {
        case request(HTTPRequest)
        /// The peer closed, the idle timeout passed or the server is stopping.
        case closed
        /// The request cannot be served; answer with this status and close.
        case rejected(status: Int)
    }

    static let maxHeadBytes = 64 * 1024
    static let maxBodyBytes = 1 << 20
    /// Idle keep-alive connections are closed after this long without a request.
    static let idleTimeoutSeconds = 60

    let descriptor: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    init(descriptor: Int32) {
        self.descriptor = descriptor
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: SocketConnection.idleTimeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func readRequest() -> ReadOutcome {
        var searchFrom = 0
        while true {
            while buffer.first == UInt8(ascii: "\r") || buffer.first == UInt8(ascii: "\n") {
                buffer.removeFirst()
            }
            if let end = headEnd(from: searchFrom) {
                let request: HTTPRequest
                do {
                    request = try HTTPRequestParser.parse(head: buffer[0..<end])
                } catch {
                    return .rejected(status: 400)
                }
                buffer.removeFirst(end)
                if request.header("transfer-encoding") != nil { return .rejected(status: 501) }
                let bodyLength = Int(request.header("content-length") ?? "0") ?? -1
                guard bodyLength >= 0 else { return .rejected(status: 400) }
                guard bodyLength <= SocketConnection.maxBodyBytes else { return .rejected(status: 413) }
                while buffer.count < bodyLength {
                    guard receiveMore() else { return .closed }
                }
                buffer.removeFirst(bodyLength)
                return .request(request)
            }
            if buffer.count > SocketConnection.maxHeadBytes { return .rejected(status: 431) }
            searchFrom = max(0, buffer.count - 3)
            guard receiveMore() else { return .closed }
        }
    }

    /// Writes all of `bytes` unless the peer goes away; returns how many were written.
    @discardableResult
    func send(_ bytes: ArraySlice<UInt8>) -> Int {
        guard !bytes.isEmpty else { return 0 }
        return bytes.withUnsafeBytes { raw -> Int in
            var sent = 0
            try? POSIXIO.writeAll(raw) { pointer, count in
                let written = Glibc.send(descriptor, pointer, count, Int32(MSG_NOSIGNAL))
                if written > 0 { sent += written }
                return written
            }
            return sent
        }
    }

    /// Index just past the blank line ending the head, if the buffer holds one.
    private func headEnd(from start: Int) -> Int? {
        guard buffer.count >= 4 else { return nil }
        var index = start
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    private func receiveMore() -> Bool {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count < 0, errno == EINTR { continue }
            return false
        }
    }
}
