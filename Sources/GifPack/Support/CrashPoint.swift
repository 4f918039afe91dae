#if canImport(Glibc)
import Glibc
#endif

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
public enum CrashPoint: String, Sendable, CaseIterable {
    /// After a few GIFs were stored, while other downloads are in flight.
    case duringDownloads = "during-downloads"
    /// Halfway through writing a pack file.
    case midPack = "mid-pack"
    /// A pack file is complete under its temporary name.
    case beforePackRename = "before-pack-rename"
    /// The new index is written under its temporary name.
    case beforeIndexRename = "before-index-rename"

    /// True when this build contains the hook (debug builds only).
    public static var isCompiledIn: Bool {
        #if GIFPACK_CRASH_POINTS
        true
        #else
        false
        #endif
    }

    #if GIFPACK_CRASH_POINTS
    private static let armed: String? = getenv("GIFPACK_CRASH_AT").map { String(cString: $0) }
    #endif

    @inline(__always)
    public static func reach(_ point: CrashPoint) { reach(named: point.rawValue) }

    /// The one hook every set of crash points goes through (``PublishCrashPoint`` too): kills the
    /// process when `GIFPACK_CRASH_AT` is `name`, in debug builds only.
    @inline(__always)
    public static func reach(named name: String) {
        #if GIFPACK_CRASH_POINTS
        if armed == name { kill(getpid(), SIGKILL) }
        #endif
    }
}
