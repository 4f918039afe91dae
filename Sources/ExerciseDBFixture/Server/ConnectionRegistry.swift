import Foundation
import Glibc

/// The open client connections. Connection threads close their descriptors through it, and
/// `stop()` shuts them all down (waking any blocked `recv`/`send`) and waits until every
/// connection thread has finished, all under one lock so a descriptor is never shut down after
/// it was closed and reused.
///
/// ```swift
/// let fd = registry.acceptAndAdmit { accept(listener, nil, nil) }
/// defer { registry.close(fd, reset: false) }
/// ```
final class ConnectionRegistry: @unchecked Sendable {  // @unchecked: `open` and `closing` are read and written under `condition`.
    private let condition = NSCondition()
    private var open = Set<Int32>()
    private var closing = false

    /// Accepts a connection with `accept` and registers it, under the lock: the connection is in
    /// the accept queue or in the registry at every moment ``waitUntilIdle(timeout:hasPending:)``
    /// looks. A connection arriving while the server stops is closed at once.
    func acceptAndAdmit(_ accept: () -> Int32) -> Int32 {
        condition.lock()
        defer { condition.unlock() }
        let client = accept()
        guard client >= 0 else { return client }
        guard !closing else {
            Glibc.close(client)
            errno = ECONNABORTED
            return -1
        }
        open.insert(client)
        return client
    }

    /// Waits until no connection is open and `hasPending()` (the accept queue) is false, up to
    /// `timeout` seconds; true when that happened.
    func waitUntilIdle(timeout: Double, hasPending: () -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if open.isEmpty && !hasPending() { return true }
            guard Date() < deadline else { return false }
            // A closing connection broadcasts; a queued one does not, so look again soon.
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.01)))
        }
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
