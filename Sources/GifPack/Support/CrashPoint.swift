#if canImport(Glibc)
import Glibc
#endif

/// Named places in the build where crash-safety tests kill the process with SIGKILL.
///
/// Setting `GIFPACK_CRASH_AT=<name>` (for example `before-index-rename`) makes the process send
/// itself SIGKILL when it reaches that point — an exact, repeatable `kill -9` for the tests that
/// prove a crash never leaves a broken index. Unset (always, in normal use) it does nothing.
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

    private static let armed: CrashPoint? = {
        guard let value = getenv("GIFPACK_CRASH_AT") else { return nil }
        return CrashPoint(rawValue: String(cString: value))
    }()

    public static func reach(_ point: CrashPoint) {
        if armed == point { kill(getpid(), SIGKILL) }
    }
}
