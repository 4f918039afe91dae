import Foundation
import GifPack
import Logging

/// Watches a running build for whoever runs it: every ``BuildEvent`` goes to the progress tracker
/// and, as a ``BuildEventLog`` entry, to the log; a ``ProgressRenderer`` (if any) shows the tracker.
///
/// ```swift
/// let monitor = BuildMonitor(logger: logger, progress: renderer, tracker: tracker)
/// monitor.start()
/// let report = await BuildPipeline(manifest: manifest, options: options, observer: monitor.observer).run()
/// monitor.stop()
/// ```
final class BuildMonitor: Sendable {
    let tracker: ProgressTracker
    let logger: Logger
    let renderer: ProgressRenderer?

    init(logger: Logger, renderer: ProgressRenderer?, tracker: ProgressTracker) {
        self.logger = logger
        self.renderer = renderer
        self.tracker = tracker
    }

    var observer: BuildObserver {
        { [tracker, logger] event in
            tracker.observe(event)
            guard let level = BuildEventLog.level(for: event), logger.allows(level) else { return }
            if let entry = BuildEventLog.entry(for: event) {
                logger.log(entry.level, entry.message, fields: entry.fields)
            }
        }
    }

    func start() { renderer?.start() }

    func stop() { renderer?.stop() }
}
