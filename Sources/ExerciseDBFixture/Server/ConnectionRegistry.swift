import Foundation
import Glibc

/// The open client connections. Connection threads close their descriptors through it, and
/// `stop()` shuts them all down (waking any blocked `recv`/`send`) and waits until every
/// connection thread has finished, all under one lock so a descriptor is never shut down after
/// it was closed and reused.
///
/// ```swift
/// guard registry.admit(fd) else { close(fd); return }
/// defer { registry.close(fd, reset: false) }
/// ```
final class ConnectionRegistry: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = Set<Int32>()
    private var closing = false

    /// Registers a new connection; false when the server is stopping (the caller closes it).
    func admit(_ descriptor: Int32) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closing else { return false }
        open.insert(descriptor)
        return true
    }

    /// Closes a connection; with `reset`, SO_LINGER 0 makes the close send a TCP RST.
    func close(_ descriptor: Int32, reset: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if reset {
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        Glibc.close(descriptor)
        open.remove(descriptor)
        condition.broadcast()
    }

    /// Shuts every connection down and waits (up to `timeout` seconds) until all were closed.
    func closeAll(timeout: Double) {
        condition.lock()
        defer { condition.unlock() }
        closing = true
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !open.isEmpty, condition.wait(until: deadline) {}
    }

    /// Accepts connections again after ``closeAll(timeout:)``, for a restarted server.
    func reopen() {
        condition.lock()
        closing = false
        condition.unlock()
    }
}
