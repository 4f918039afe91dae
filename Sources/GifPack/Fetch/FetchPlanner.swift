import Foundation
import Synchronization

/// Decides, from the build state, what each wanted exercise needs: nothing (fetched recently
/// enough, or known to be missing), a conditional request (a stored GIF with an ETag or
/// Last-Modified), or a plain request.
///
/// ```swift
/// let planner = FetchPlanner(settings: manifest.fetch, store: store, now: Date())
/// let decisions = exercises.map { planner.decide($0, known: known[$0.id]) }
/// ```
struct FetchPlanner: Sendable {
    enum Decision: Sendable, Equatable {
        case reuseFresh(GIFState)
        case knownMissing(GIFState)
        case request(conditional: GIFState?)
    }

    let settings: FetchSettings
    let store: BlobStore
    let now: Date
    /// Blobs found in the store so far (a blob is never removed while the plan is made), so a GIF
    /// shared by many exercises is looked for once per build, not once per batch.
    private let present = PresentBlobs()

    init(settings: FetchSettings, store: BlobStore, now: Date) {
        self.settings = settings
        self.store = store
        self.now = now
    }

    private final class PresentBlobs: Sendable {
        let hashes = Mutex(Set<String>())
    }

    func decide(_ exercise: Exercise, known: GIFState?) -> Decision {
        var stored: [String: Bool] = [:]
        return decide(exercise, known: known, stored: &stored)
    }

    /// `stored` remembers which blobs the store holds, for the exercises of one batch.
    func decide(_ exercise: Exercise, known: GIFState?, stored: inout [String: Bool]) -> Decision {
        guard let known, known.url == exercise.imageURL else { return .request(conditional: nil) }
        if known.status == .missing, now.timeIntervalSince(known.attemptedAt) < settings.missingTTL.milliseconds / 1000 {
            return .knownMissing(known)
        }
        guard let metadata = known.metadata else { return .request(conditional: nil) }
        let present =
            stored[metadata.sha256]
            ?? (self.present.hashes.withLock { $0.contains(metadata.sha256) } || store.contains(sha256: metadata.sha256))
        stored[metadata.sha256] = present
        if present { self.present.hashes.withLock { _ = $0.insert(metadata.sha256) } }
        guard present else {
            return .request(conditional: nil)
        }
        if known.status == .ok, let refresh = settings.refreshAfter, let fetchedAt = known.fetchedAt,
            now.timeIntervalSince(fetchedAt) < refresh.milliseconds / 1000
        {
            return .reuseFresh(known)
        }
        return .request(conditional: (known.etag != nil || known.lastModified != nil) ? known : nil)
    }
}
