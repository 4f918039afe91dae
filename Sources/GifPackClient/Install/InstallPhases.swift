import Foundation
import GifPackSystem
import GifPackTransport

/// Where an install's wall time went (``InstallReport/phases``), in seconds of the monotonic clock.
///
/// The phases follow one another on the install's path, so they add up to at most ``total``; what
/// no phase covers (comparing the generations' exercises for the report) is ``other``. Work that runs
/// beside a phase is inside that phase: a whole pack's GIFs decoded while it downloads
/// (`PackFollower`) are in ``transfer``, a local pack's SHA-256 checked beside the staging in
/// ``decode``.
///
/// - ``index``: from the call to the index accepted: the install lock taken, the installed generation's manifest read,
///   the index (and its signature, with ``PackInstaller/trust``) fetched or read, parsed and checked.
/// - ``planning``: the packs chosen, stale downloads removed, the sparse-upgrade basis read; once
///   the packs are in, their frame layout and catalogs checked (`InstallPlan`).
/// - ``transfer``: the packs (and posters packs) downloaded, or their frames fetched by range.
/// - ``decode``: the staging of every entry on every core — decompressed, hashed, walked against
///   its catalog record — less its share of ``fileWrites``.
/// - ``fileWrites``: the staging's share spent creating, moving and linking files (its threads' time
///   in those calls, as a share of all their time, applied to the staging's wall time), then the
///   posters, the id map, the placeholders and the manifest written, and the downloads discarded.
/// - ``sync``: everything new made durable (`Durability`: `syncfs`, or an `fsync` per file).
/// - ``InstallPhases/switch``: the staging renamed to its generation, the `rename(2)` of `<cache>`, the older
///   generations removed, the downloads deleted.
///
/// An unchanged install (nothing to fetch) has only ``index`` and ``planning``.
///
/// ```swift
/// let report = try await installer.install(from: source)
/// print("transfer \(report.phases.transfer) s of \(report.phases.total) s")
/// ```
package struct InstallPhases: Sendable, Equatable {
    package var index: Double = 0
    package var planning: Double = 0
    package var transfer: Double = 0
    package var decode: Double = 0
    package var fileWrites: Double = 0
    package var sync: Double = 0
    package var `switch`: Double = 0
    /// From the call to its return.
    package var total: Double = 0

    package init() {}

    /// The phases in the order an install goes through them, with their names.
    package var named: [(name: String, seconds: Double)] {
        [
            ("index", index), ("planning", planning), ("transfer", transfer), ("decode", decode),
            ("fileWrites", fileWrites), ("sync", sync), ("switch", `switch`)
        ]
    }

    /// ``total`` less every phase: what no phase covers (never below 0).
    package var other: Double { max(0, total - named.reduce(0) { $0 + $1.seconds }) }
}

/// The clock of one install's phases: ``enter(_:)`` closes the phase under way (its time added to
/// it) and opens the next; shared by the install's tasks and its dedicated threads.
final class InstallPhaseClock: Sendable {
    enum Phase: Sendable { case index, planning, transfer, decode, fileWrites, sync, `switch`, none }

    private struct State: Sendable {
        var phases = InstallPhases()
        var current = Phase.index
        var since: UInt64
        let start: UInt64
    }

    private let state: Locked<State>

    /// Starts the clock, in ``Phase/index``.
    init() {
        let now = TimeSpan.now()
        state = Locked(State(since: now, start: now))
    }

    /// Ends the phase under way and starts `next` (``Phase/none``: time not counted in any phase).
    func enter(_ next: Phase) {
        let now = TimeSpan.now()
        state.withLock { state in
            Self.add(Self.seconds(from: state.since, to: now), to: state.current, in: &state.phases)
            state.current = next
            state.since = now
        }
    }

    /// Moves `seconds` (at most what `from` holds) from one phase to another: the staging's wall
    /// time split between ``Phase/decode`` and ``Phase/fileWrites``.
    func move(_ seconds: Double, from: Phase, to: Phase) {
        state.withLock { state in
            let moved = min(max(0, seconds), Self.value(from, in: state.phases))
            Self.add(-moved, to: from, in: &state.phases)
            Self.add(moved, to: to, in: &state.phases)
        }
    }

    /// The phases so far, the phase under way included, with the total up to now.
    func phases() -> InstallPhases {
        let now = TimeSpan.now()
        return state.withLock { state in
            var phases = state.phases
            Self.add(Self.seconds(from: state.since, to: now), to: state.current, in: &phases)
            phases.total = Self.seconds(from: state.start, to: now)
            return phases
        }
    }

    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e9 : 0
    }

    private static func value(_ phase: Phase, in phases: InstallPhases) -> Double {
        switch phase {
        case .index: phases.index
        case .planning: phases.planning
        case .transfer: phases.transfer
        case .decode: phases.decode
        case .fileWrites: phases.fileWrites
        case .sync: phases.sync
        case .switch: phases.switch
        case .none: 0
        }
    }

    private static func add(_ seconds: Double, to phase: Phase, in phases: inout InstallPhases) {
        switch phase {
        case .index: phases.index += seconds
        case .planning: phases.planning += seconds
        case .transfer: phases.transfer += seconds
        case .decode: phases.decode += seconds
        case .fileWrites: phases.fileWrites += seconds
        case .sync: phases.sync += seconds
        case .switch: phases.switch += seconds
        case .none: break
        }
    }
}

/// Thread time the staging's entries spent in file calls and in all their work, summed over the
/// threads of ``GenerationBuilder/stageEntries(_:)``: the share of its wall time that goes to
/// ``InstallPhases/fileWrites``.
final class StagingTimes: Sendable {
    private let totals = Locked<(files: UInt64, all: UInt64)>((0, 0))

    func add(files: UInt64, all: UInt64) {
        totals.withLock {
            $0.files &+= files; $0.all &+= all
        }
    }

    /// Files' share of all the entries' time (0 when nothing was timed).
    var fileShare: Double {
        let (files, all) = totals.withLock { $0 }
        return all == 0 ? 0 : min(1, Double(files) / Double(all))
    }
}
