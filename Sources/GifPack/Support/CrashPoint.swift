import Foundation

/// Named places in the build where crash-safety tests kill the process with SIGKILL.
///
/// In debug builds (what `swift test` builds; `GIFPACK_CRASH_POINTS` is defined for them in
/// Package.swift), setting `GIFPACK_CRASH_AT=<name>` (for example `before-index-rename`) makes the
/// process send itself SIGKILL when it reaches that point — an exact, repeatable `kill -9` for the
/// tests that prove a crash never leaves a broken index. Release builds contain no hook at all:
/// ``reach(_:)`` is empty and the variable is never read.
///
/// ```swift
/// CrashPoint.reach(.beforeIndexRename)
/// ```
package enum CrashPoint: String, Sendable, CaseIterable {
    /// After a few GIFs were stored, while other downloads are in flight.
    case duringDownloads = "during-downloads"
    /// Halfway through writing a pack file.
    case midPack = "mid-pack"
    /// A pack file is complete under its temporary name.
    case beforePackRename = "before-pack-rename"
    /// The new index is written under its temporary name.
    case beforeIndexRename = "before-index-rename"

    /// True when this build contains the hook (debug builds only).
    package static var isCompiledIn: Bool {
        #if GIFPACK_CRASH_POINTS
            true
        #else
            false
        #endif
    }

    #if GIFPACK_CRASH_POINTS
        private static let armed: String? = ProcessCalls.environment("GIFPACK_CRASH_AT")
        private static let pausing: Set<String> = Set(
            (ProcessCalls.environment("GIFPACK_PAUSE_AT") ?? "").split(separator: ",").map(String.init))
        private static let pauseDirectory: String? = ProcessCalls.environment("GIFPACK_PAUSE_DIR")
    #endif

    @inline(__always)
    package static func reach(_ point: CrashPoint) { reach(named: point.rawValue) }

    /// The one hook every set of crash points goes through (``PublishCrashPoint`` too), in debug
    /// builds only: kills the process when `GIFPACK_CRASH_AT` is `name`; and when `GIFPACK_PAUSE_AT`
    /// (a comma-separated list) names it, creates `<GIFPACK_PAUSE_DIR>/<name>.reached` and waits
    /// until the test creates `<GIFPACK_PAUSE_DIR>/<name>.go` (at most two minutes), so a test can
    /// act exactly while the process stands at that point — an install while a publish is half done.
    @inline(__always)
    package static func reach(named name: String) {
        #if GIFPACK_CRASH_POINTS
            if armed == name { ProcessCalls.killSelf() }
            if pausing.contains(name), let directory = pauseDirectory { pause(at: name, directory: directory) }
        #endif
    }

    #if GIFPACK_CRASH_POINTS
        private static func pause(at name: String, directory: String) {
            let reached = SystemCalls.open("\(directory)/\(name).reached", [.writeOnly, .create, .closeOnExec], mode: 0o644)
            if reached >= 0 { SystemCalls.close(reached) }
            for _ in 0..<6000 where !FileSystem.exists("\(directory)/\(name).go") {
                ProcessCalls.pause(microseconds: 20_000)
            }
        }
    #endif
}
