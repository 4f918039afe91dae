import Foundation
import GifPack
import Logging
import Synchronization

/// Shows a build's progress from its own thread, ten times a second at most.
///
/// `live`: a status line on the terminal, redrawn in place (through ``Console``) when its text
/// changes, fitted to the terminal's current width. `plain`: a log line (text or JSON, like every
/// other log record) every `interval` seconds and each time another 10% of the GIFs is done, with
/// no control characters. The thread only reads the ``ProgressTracker``; it never blocks the build.
///
/// ```swift
/// let renderer = ProgressRenderer(mode: .live(color: true), tracker: tracker, console: console,
///                                 logger: logger, terminal: terminal)
/// renderer.start()
/// let report = await pipeline.run()
/// renderer.stop()
/// ```
final class ProgressRenderer: Sendable {
    enum Mode: Sendable, Equatable {
        case live(color: Bool)
        case plain(interval: Double)
    }

    /// The shortest time between two redraws.
    static let tick = 0.1

    private let mode: Mode
    private let tracker: ProgressTracker
    private let console: Console
    private let logger: Logger
    private let terminal: TerminalInfo
    private let stopping = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    init(mode: Mode, tracker: ProgressTracker, console: Console, logger: Logger, terminal: TerminalInfo) {
        self.mode = mode
        self.tracker = tracker
        self.console = console
        self.logger = logger
        self.terminal = terminal
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "gifpack.progress"
        thread.start()
    }

    /// Stops the thread and erases the live line; returns once the thread is gone.
    func stop() {
        stopping.withLock { $0 = true }
        wake.signal()
        ended.wait()
        console.clearStatus()
    }

    private func run() {
        let clock = ContinuousClock()
        let started = clock.now
        var schedule: PlainProgressSchedule?
        if case .plain(let interval) = mode { schedule = PlainProgressSchedule(interval: interval) }
        var drawn: String?
        while !stopping.withLock({ $0 }) {
            let snapshot = tracker.snapshot()
            switch mode {
            case .live(let color):
                let line = ProgressLine.live(snapshot, width: terminal.width, color: color)
                if line != drawn {
                    console.showStatus(line)
                    drawn = line
                }
            case .plain:
                if schedule!.isDue(snapshot, at: (clock.now - started).secondsValue) {
                    logger.log(.info, ProgressLine.plain(snapshot), fields: Self.fields(snapshot))
                }
            }
            _ = wake.wait(timeout: .now() + ProgressRenderer.tick)
        }
        ended.signal()
    }

    private static func fields(_ snapshot: ProgressSnapshot) -> [String: LogField] {
        var fields: [String: LogField] = [
            "event": .string("progress"), "done": .int(Int64(snapshot.done)), "total": .int(Int64(snapshot.total ?? 0)),
            "bytes": .int(snapshot.bytesDownloaded), "retries": .int(Int64(snapshot.retries)),
            "failures": .int(Int64(snapshot.failures))
        ]
        if let percent = snapshot.percent { fields["percent"] = .int(Int64(percent)) }
        if let rate = snapshot.bytesPerSecond { fields["bytes_per_second"] = .double(rate.rounded()) }
        if let eta = snapshot.etaSeconds { fields["eta_seconds"] = .double((eta * 10).rounded() / 10) }
        return fields
    }
}

extension Duration {
    var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
