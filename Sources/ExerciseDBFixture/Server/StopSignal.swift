import Foundation

/// A latch the server's sleeps wait on: latency delays and dripped bodies end early the moment
/// `stop()` fires it, so stopping never waits out a sleep.
///
/// ```swift
/// let signal = StopSignal()
/// if !signal.sleep(milliseconds: 20) { return }   // stopped while sleeping
/// ```
final class StopSignal: @unchecked Sendable {  // @unchecked: `fired` is read and written under `condition`.
    private let condition = NSCondition()
    private var fired = false

    /// Sleeps up to `milliseconds`; false if the signal fired (before or during the sleep).
    func sleep(milliseconds: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: Double(max(0, milliseconds)) / 1000)
        while !fired {
            if !condition.wait(until: deadline) { return !fired }
        }
        return false
    }

    var isFired: Bool {
        condition.lock()
        defer { condition.unlock() }
        return fired
    }

    func fire() {
        condition.lock()
        fired = true
        condition.broadcast()
        condition.unlock()
    }

    func rearm() {
        condition.lock()
        fired = false
        condition.unlock()
    }
}
