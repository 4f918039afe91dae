import GifPack

/// When a non-terminal progress log line is due: every `interval` seconds, and each time the fetch
/// crosses another `step` of the GIFs wanted (10% by default), whichever comes first. Lines are
/// only due while GIFs are being fetched: the other stages log their own start.
///
/// ```swift
/// var schedule = PlainProgressSchedule(interval: 10)
/// if schedule.isDue(snapshot, at: clock.seconds) { logger.info("\(ProgressLine.plain(snapshot))") }
/// ```
struct PlainProgressSchedule: Sendable, Equatable {
    var interval: Double
    var step: Double
    private var lastTime: Double?
    private var lastStep = 0

    init(interval: Double = 10, step: Double = 0.1) {
        self.interval = interval
        self.step = step
    }

    /// True when a line is due for `snapshot` at `seconds` (any monotonic clock); marks it as
    /// reported.
    mutating func isDue(_ snapshot: ProgressSnapshot, at seconds: Double) -> Bool {
        guard snapshot.stage == .fetch, let fraction = snapshot.fraction else { return false }
        // A tiny epsilon so 0.3 / 0.1 counts as the third step, not 2.999….
        let currentStep = step > 0 ? Int((fraction / step + 1e-9).rounded(.down)) : 0
        guard let last = lastTime else {
            // The first call starts the clock; nothing has happened yet.
            lastTime = seconds
            lastStep = currentStep
            return false
        }
        let due = currentStep > lastStep || (interval > 0 && seconds - last >= interval)
        if due {
            lastTime = seconds
            lastStep = max(lastStep, currentStep)
        }
        return due
    }
}
