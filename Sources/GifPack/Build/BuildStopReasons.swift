import Foundation

/// The build state could not be read at a step whose answer changes what the build does. The build
/// stops there, writes no pack or index, and says so; the error also goes into the report's `stateErrors`.
///
/// - planning fetches: without the state every GIF would be requested in full (no conditional
///   requests, nothing fresh, known-missing ones asked again), spending quota for nothing; no
///   request has been sent yet.
/// - looking up last known good GIFs: this run's failures would silently drop GIFs an earlier
///   pack had.
///
/// ```swift
/// catch let error as StateUnreadable { report.stateErrors.append(error.detail) }
/// ```
package struct StateUnreadable: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the build the state was read.
    package enum Step: String, Sendable, Equatable {
        case planningFetches = "planning fetches"
        case lookingUpLastKnownGood = "looking up last known good GIFs"
        case readingCatalog = "reading the catalog back"
    }

    package var step: Step
    package var path: String?
    package var error: String

    /// A catalog spool that could not be read back while the fetch planned or settled its exercises.
    init(_ spool: SpoolReadError) {
        self.init(step: .readingCatalog, path: spool.path, error: "at byte \(spool.offset): \(spool.problem)")
    }

    package init(step: Step, path: String?, error: String) {
        self.step = step
        self.path = path
        self.error = error
    }

    /// One line for the report's `stateErrors`.
    package var detail: String { "reading \(path ?? "the build state") while \(step.rawValue) failed: \(error)" }

    package var description: String {
        switch step {
        case .planningFetches:
            "cannot read the build state \(path ?? ""): \(error); no GIF was requested (without the state every GIF would be downloaded again in full) and no pack or index was written"
        case .lookingUpLastKnownGood:
            "cannot read the build state \(path ?? ""): \(error) while looking up last known good GIFs for this run's failures; no pack or index was written"
        case .readingCatalog:
            "cannot read the catalog back from \(path ?? "its spool"): \(error); no pack or index was written"
        }
    }
}

/// What a build stopped by a check of the whole list (an empty selector, a shrunk or contradictory
/// catalog) says of the GIF requests it sent while the list arrived (at most one per list request:
/// ``EarlyFeed``), counted once they are all back.
enum EarlyRequests {
    static func sentence(_ count: Int) -> String {
        switch count {
        case 0: "no GIF was requested"
        case 1: "1 GIF request was sent while the list arrived (what it fetched stays cached)"
        default: "\(count) GIF requests were sent while the list arrived (what they fetched stays cached)"
        }
    }
}

/// The catalog lacks more of the last catalog's exercises than `fetch.max_removed` allows. Whatever
/// the cause (a total that lied, an API answering half its list), building on it would drop those
/// exercises from every pack: the build stops before the fetch stage (the GIF requests sent while
/// the list arrived are at most one per list request: ``EarlyFeed``), writing no pack or index and
/// remembering the last catalog as it was, so the next run compares with it again. Exit status
/// ``ExitStatus/catalogShrank`` (8).
///
/// ```swift
/// catch let error as CatalogShrank { print(error.removed, error.previous) }
/// ```
package struct CatalogShrank: Error, Sendable, Equatable, CustomStringConvertible {
    /// Exercises of the last catalog this one lacks.
    package var removed: Int
    /// Exercises the last catalog had.
    package var previous: Int
    /// Exercises this catalog has.
    package var now: Int
    package var limit: MissingAllowance
    /// GIF requests sent while the list arrived, before the check (``EarlyFeed``).
    package var gifRequests = 0

    package var description: String {
        let share = previous > 0 ? Double(removed) * 100 / Double(previous) : 0
        return "the catalog would remove \(removed) of the last catalog's \(previous) exercises "
            + "(\(String(format: "%.1f", share))%; it now has \(now)), more than fetch.max_removed (\(limit)) allows; "
            + "\(EarlyRequests.sentence(gifRequests)) and no pack or index was written. If the removal is real, run again with --max-removed 100% "
            + "(or raise fetch.max_removed in the manifest)"
    }
}

/// `index.json` exists in the output directory but cannot be read, or the index reader refuses it
/// (``BuilderIndexReader``). Building on would restart every pack at version 1 and overwrite
/// the pack files written before, so the build stops.
package struct OutputIndexUnreadable: Error, Sendable, Equatable, CustomStringConvertible {
    package var path: String
    package var error: String

    package var description: String {
        "\(path) exists but cannot be read (\(error)); no pack or index was written. Restore it, or move it away to start the pack versions over"
    }
}
