import ArgumentParser
import Foundation
import GifPack
import Logging

/// How a build talks to whoever runs it: progress, logs, and the files cron jobs and CI read
/// afterwards (metrics, step summary).
///
/// ```
/// gifpack build -m manifests/exercisedb.yaml --log-format json --metrics-file /var/lib/node_exporter/gifpack.prom
/// ```
struct OperationOptions: ParsableArguments {
    enum ProgressMode: String, CaseIterable, ExpressibleByArgument {
        case auto, live, plain, off
    }

    enum LogFormat: String, CaseIterable, ExpressibleByArgument {
        case text, json
    }

    enum LogLevel: String, CaseIterable, ExpressibleByArgument {
        case trace, debug, info, notice, warning, error, critical
    }

    @Flag(name: .shortAndLong, help: "Print nothing after a success, else only the last line; no progress, no log lines (unless --log-level).")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also log every request attempt (log level debug).")
    var verbose = false

    @Option(help: "Log level (default: info; debug with --verbose; with --quiet none but the last line).")
    var logLevel: LogLevel?

    @Option(help: "Log lines on standard error: text for people, json for one object per line.")
    var logFormat: LogFormat = .text

    @Option(
        help: ArgumentHelp(
            "Progress: auto (a live line on a terminal, else a log line every --progress-interval seconds and every 10%), live, plain or off.",
            valueName: "mode"))
    var progress: ProgressMode = .auto

    @Option(help: ArgumentHelp("Seconds between plain progress lines.", valueName: "seconds"))
    var progressInterval: Double = 10

    @Option(
        help: ArgumentHelp(
            "Write Prometheus metrics here, atomically, for node_exporter's textfile collector (name it *.prom).",
            valueName: "path"))
    var metricsFile: String?

    @Option(help: ArgumentHelp("Append a Markdown summary of the build here, e.g. \"$GITHUB_STEP_SUMMARY\".", valueName: "path"))
    var summaryFile: String?

    @Option(
        help: ArgumentHelp(
            "Append the step outputs published=true|false, exit-status=N and packs=<pack>-v<N> ... here, e.g. \"$GITHUB_OUTPUT\".",
            valueName: "path"))
    var githubOutput: String?

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other") }
        guard progressInterval > 0, progressInterval.isFinite else {
            throw ValidationError("--progress-interval must be a positive number of seconds")
        }
    }

    var resolvedLogLevel: Logger.Level {
        if let logLevel { return Logger.Level(rawValue: logLevel.rawValue) ?? .info }
        // --quiet: the last line says what failed; an error log line before it would say it twice.
        return verbose ? .debug : (quiet ? .critical : .info)
    }

    /// The progress display for this terminal, or nil for none.
    func progressMode(terminal: TerminalInfo) -> ProgressRenderer.Mode? {
        switch progress {
        case .off: return nil
        case .live: return .live(color: terminal.allowsColor)
        case .plain: return .plain(interval: progressInterval)
        case .auto:
            if quiet { return nil }
            return terminal.canRedraw ? .live(color: terminal.allowsColor) : .plain(interval: progressInterval)
        }
    }
}
