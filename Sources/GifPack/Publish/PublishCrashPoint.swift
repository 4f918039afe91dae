import Foundation

/// Named places in `gifpack publish` where crash-safety tests kill the process with SIGKILL,
/// armed like ``CrashPoint`` by `GIFPACK_CRASH_AT=<name>` in debug builds only (release builds contain
/// no hook).
///
/// ```swift
/// PublishCrashPoint.reach(.beforeIndex)
/// ```
package enum PublishCrashPoint: String, Sendable, CaseIterable {
    /// Directory target: halfway through copying a pack to its temporary name.
    case midPack = "publish-mid-pack"
    /// The first pack was uploaded and confirmed, the others not yet.
    case afterFirstPack = "publish-after-first-pack"
    /// Every pack is up; neither the signature nor the index yet.
    case beforeIndex = "publish-before-index"
    /// The hash-named signature `signatures/<sha256>.minisig` is up (signed builds), the index not yet.
    case afterSignature = "publish-after-signature"
    /// Directory target: the new index is complete under its temporary name.
    case beforeIndexRename = "publish-before-index-rename"
    /// The new index is live; `index.json.zst` and `index.json.minisig` beside it not yet rewritten.
    case afterIndex = "publish-after-index"
    /// The new index and its compressed copy `index.json.zst` are live; `index.json.minisig` not yet rewritten.
    case afterCompressedIndex = "publish-after-compressed-index"
    /// The new index is live; retention has not run.
    case beforeRetention = "publish-before-retention"

    package static func reach(_ point: PublishCrashPoint) { CrashPoint.reach(named: point.rawValue) }
}
