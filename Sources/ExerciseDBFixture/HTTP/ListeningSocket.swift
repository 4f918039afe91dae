import Glibc

/// The server's listening TCP socket on 127.0.0.1, plus a wake-up pipe so the accept thread can
/// sleep in `poll` (no busy loop) and still be told to stop at once.
///
/// ```swift
/// let listener = try ListeningSocket.open(port: 0)
/// while let client = listener.accept() { … }   // nil once wake() was called
/// ```
final class ListeningSocket: @unchecked Sendable {  // @unchecked: only constants: descriptors, which any thread may use.
    let descriptor: Int32
    let port: Int
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init(descriptor: Int32, port: Int, wakeRead: Int32, wakeWrite: Int32) {
        self.descriptor = descriptor
        self.port = port
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
    }

    static func open(port requestedPort: Int) throws(FixtureError) -> ListeningSocket {
        guard (0...65535).contains(requestedPort) else {
            throw .invalidConfiguration(field: "port", reason: "must be 0...65535, got \(requestedPort)")
        }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .socketFailed(operation: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))

        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(requestedPort)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .socketFailed(operation: "bind 127.0.0.1:\(requestedPort)", errno: code)
        }
        guard listen(descriptor, 128) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .socketFailed(operation: "listen", errno: code)
        }
        // Non-blocking: accept(2) runs only after poll said a connection waits, and must not block
        // (under the registry's lock) should it have gone in between.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .socketFailed(operation: "pipe", errno: code)
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return ListeningSocket(
            descriptor: descriptor, port: Int(UInt16(bigEndian: address.sin_port)),
            wakeRead: pipeEnds[0], wakeWrite: pipeEnds[1])
    }

    /// The next client's descriptor (close-on-exec), or nil once ``wake()`` has been called.
    /// `admit` runs `accept(2)` for it (the registry does so under its lock, so a connection is
    /// never between the accept queue and the registry while someone checks both).
    func accept(through admit: (() -> Int32) -> Int32 = { $0() }) -> Int32? {
        while true {
            var polled = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            ]
            let ready = poll(&polled, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if polled[1].revents != 0 { return nil }
            guard polled[0].revents & Int16(POLLIN) != 0 else { continue }
            let descriptor = self.descriptor
            let client = admit { Glibc.accept(descriptor, nil, nil) }
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // curl subprocesses must not inherit it
                return client
            }
            switch errno {
            case EINTR, EAGAIN, ECONNABORTED, EPROTO: continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: usleep(10_000)  // out of resources: back off, retry
            default: return nil
            }
        }
    }

    /// True when a connection waits in the accept queue.
    var hasPendingConnection: Bool {
        var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&polled, 1, 0) > 0 && polled.revents & Int16(POLLIN) != 0
    }

    /// Makes a pending or future ``accept()`` return nil.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Closes the listener and the wake-up pipe; call after the accept thread has returned.
    func close() {
        Glibc.close(descriptor)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }
}
