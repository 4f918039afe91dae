import Foundation
import Glibc

/// Loopback ports and child server processes, shared by every server the tests start (nginx, moto):
/// a port that was free a moment ago, waiting until a child accepts connections on one, and
/// stopping a child for good.
///
/// ```swift
/// let port = try LoopbackPort.free()
/// let process = try ChildProcess(…)
/// guard await LoopbackPort.waitUntilListening(port: port, process: process, seconds: 10) else { … }
/// defer { LoopbackPort.kill(process) }
/// ```
enum LoopbackPort {
    /// A port the kernel just handed out for 127.0.0.1 (free a moment ago: a parallel test can take
    /// it before the child binds it, so callers try a few).
    static func free() throws -> Int {
        let (fd, port) = try listening(backlog: 1)
        close(fd)
        return port
    }

    /// A socket listening on 127.0.0.1 at a port the kernel picks (close-on-exec, `SO_REUSEADDR`),
    /// and that port: for the tests' own loopback servers.
    static func listening(backlog: Int32 = 64) throws -> (fd: Int32, port: Int) {
        try bound(listeningWith: backlog)
    }

    /// A socket bound to 127.0.0.1 at a port the kernel picks, listening with `backlog` (nil: not
    /// listening, so a connection to it is refused), and that port.
    static func bound(listeningWith backlog: Int32?) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        // Not for a refusing socket: Linux lets another SO_REUSEADDR socket bind a port whose
        // sockets all allow it and none listens.
        if backlog != nil {
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && (backlog.map { listen(fd, $0) == 0 } ?? true) && getsockname(fd, pointer, &length) == 0
            }
        }
        guard ready else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EADDRINUSE)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// True when something accepts a connection on 127.0.0.1:`port` now.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Waits (up to `seconds`, polling) until every port accepts connections while `process` runs;
    /// false when the process exited or time ran out. `ready`, when given, must hold first (nginx
    /// writes its pid file once it has bound its ports).
    static func waitUntilListening(
        ports: [Int], process: ChildProcess, seconds: Double,
        ready: @escaping () -> Bool = { true }
    ) async -> Bool {
        do {
            try await waitUntil(deadline: .milliseconds(Int(seconds * 1000))) {
                !process.isRunning || (ready() && ports.allSatisfy(accepts))
            }
        } catch {
            return false
        }
        return process.isRunning
    }

    static func waitUntilListening(port: Int, process: ChildProcess, seconds: Double) async -> Bool {
        await waitUntilListening(ports: [port], process: process, seconds: seconds)
    }

    /// Stops a child for good: SIGKILL, then reaps it. Not SIGTERM: a child spawned from a test
    /// thread inherits that thread's blocked signals, and a single-process nginx never sees a blocked
    /// SIGTERM.
    static func kill(_ process: ChildProcess) {
        process.killAndReap()
    }
}

/// A loopback port that refuses every connection for as long as this value lives: a socket bound to
/// it that never listens. A stopped server's port is no such thing: in the suite's one process
/// another test's server can be handed the same port a moment later, and a connection meant to be
/// refused is then accepted and reset.
///
/// ```swift
/// let refusing = try RefusingPort()
/// let url = "http://127.0.0.1:\(refusing.port)/exercises"   // connect-failed, every time
/// ```
final class RefusingPort: @unchecked Sendable {
    // @unchecked: `fd` and `port` are set once in init and only read after; deinit closes the socket.
    let port: Int
    private let fd: Int32

    init() throws {
        (fd, port) = try LoopbackPort.bound(listeningWith: nil)
    }

    deinit { close(fd) }
}
