import Foundation
import GifPackSystem

/// Counts one install's progress as it goes, for ``GIFLoader/refresh(progress:)``: the bytes of
/// the packs' transfers and the GIFs placed in the new generation, each done and total.
///
/// - GIFs: the total is set once the packs are chosen and an install is needed (``begin(gifs:)``:
///   the distinct GIFs the chosen packs' exercises use, from the index); one is done each time
///   the generation builder has verified and placed one (written or reused).
/// - Bytes: each transfer adds what it will fetch to the total when it starts (``transfer(expecting:)``:
///   the rest of a whole pack, or a sparse plan's ranges), and its body bytes to the done count as
///   they arrive (``Transfer/received(_:)``, handed to the transport as ``HTTPRequest/bodyProgress``),
///   never more than it expected. A transfer that ends with less (the server ignored `Range`, and
///   the whole pack follows) takes back what did not come (``Transfer/end()``).
///
/// Each change is reported to `report` under the lock, so reports arrive in order and their counts
/// never go down (bytes are reported in steps of about 1/256 of the total).
///
/// ```swift
/// let progress = InstallProgress { stage, counts in print(stage, counts) }
/// installer.progress = progress
/// ```
final class InstallProgress: Sendable {
    enum Stage: Sendable, Equatable {
        case fetching
        case installing
    }

    struct Counts: Sendable, Equatable {
        var bytesDone: Int64 = 0
        var bytesTotal: Int64 = 0
        var gifsDone = 0
        var gifsTotal = 0
    }

    private struct State {
        var counts = Counts()
        var stage = Stage.fetching
        var reportedBytes: Int64 = 0
    }

    private let state = Locked(State())
    private let report: @Sendable (Stage, Counts) -> Void

    init(report: @escaping @Sendable (Stage, Counts) -> Void) {
        self.report = report
    }

    /// What is counted so far.
    var current: Counts { state.withLock { $0.counts } }

    /// An install is needed: `gifs` GIFs to place.
    func begin(gifs: Int) {
        change { $0.gifsTotal = gifs }
    }

    /// A transfer of `bytes` bytes starts.
    func transfer(expecting bytes: Int64) -> Transfer {
        let expected = max(0, bytes)
        change { $0.bytesTotal += expected }
        return Transfer(progress: self, expected: expected)
    }

    /// Every transfer is over: the generation is built.
    func installing() {
        state.withLock { state in
            state.stage = .installing
            report(state.stage, state.counts)
        }
    }

    /// One GIF verified and placed in the new generation.
    func gifPlaced() {
        change { $0.gifsDone = min($0.gifsTotal, $0.gifsDone + 1) }
    }

    private func change(_ update: (inout Counts) -> Void, bytesOnly: Bool = false) {
        state.withLock { state in
            update(&state.counts)
            // Bytes arrive in small chunks: reported in steps, and when they reach the total.
            let step = max(1, state.counts.bytesTotal / 256)
            if bytesOnly, state.counts.bytesDone - state.reportedBytes < step, state.counts.bytesDone != state.counts.bytesTotal { return }
            state.reportedBytes = state.counts.bytesDone
            report(state.stage, state.counts)
        }
    }

    /// One transfer's share of the bytes.
    final class Transfer: @unchecked Sendable {  // @unchecked: `got` and `ended` change only inside `progress.change`, under the progress's lock.
        private let progress: InstallProgress
        private let expected: Int64
        private var got: Int64 = 0
        private var ended = false

        fileprivate init(progress: InstallProgress, expected: Int64) {
            self.progress = progress
            self.expected = expected
        }

        /// Body bytes arrived (a transport's ``HTTPRequest/bodyProgress``); a retry's bytes beyond
        /// what the transfer expected are not counted again.
        func received(_ bytes: Int64) {
            progress.change(
                { counts in
                    guard !ended else { return }
                    let counted = min(bytes, expected - got)
                    guard counted > 0 else { return }
                    got += counted
                    counts.bytesDone += counted
                }, bytesOnly: true)
        }

        /// The transfer is over: what it expected and did not get leaves the total.
        func end() {
            progress.change { counts in
                guard !ended else { return }
                ended = true
                counts.bytesTotal -= expected - got
            }
        }

        /// The transport's hook.
        var bodyProgress: @Sendable (Int64) -> Void { { [self] bytes in received(bytes) } }
    }
}
