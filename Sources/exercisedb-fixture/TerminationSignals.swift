import Dispatch
import Glibc

/// Blocks the main thread until SIGTERM or SIGINT arrives, so the server can be stopped cleanly
/// instead of dying mid-response.
///
/// ```swift
/// TerminationSignals.wait()
/// server.stop()
/// ```
enum TerminationSignals {
    static func wait() {
        let arrived = DispatchSemaphore(value: 0)
        let sources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { arrived.signal() }
            source.resume()
            return source
        }
        arrived.wait()
        sources.forEach { $0.cancel() }
    }
}
