import Foundation
import GifPackGIF
import GifPackHTTP
import Synchronization

/// One GIF's way into the cache, a step a concern: validated (decoded against the manifest's
/// limits), stored (fsynced into the blob store under its hash), precompressed (its pack frame
/// made while the blob is hashed again) and its placeholders and posters derived. Blocking: the
/// ``GIFProcessor``'s workers run it.
struct GIFIntake: Sendable {
    let store: BlobStore
    let frames: FrameCache
    let limits: GIFLimits
    /// The resolution asked for, which a GIF whose larger side differs misses.
    let resolution: Resolution
    /// Derives each stored GIF's placeholders and posters (nil: not wanted).
    let placeholders: PlaceholderCache?
    /// Encodes each stored GIF's WebP rendition (nil: the manifest asks for GIF only).
    var webp: WebPCache? = nil

    /// Decodes the downloaded file, refusing a GIF outside the limits.
    func inspect(path: String) throws(GIFRejection) -> GIFInfo {
        try GIFInspector.inspect(path: path, limits: limits)
    }

    /// Moves the download into the blob store (fsynced; false when the blob was there already)
    /// and makes its pack frame.
    func store(temporaryFile path: String, sha256: String, size: Int64) throws -> Bool {
        let newlyStored = try store.adopt(temporaryFile: path, sha256: sha256)
        try frames.ensureFrame(sha256: sha256, blobPath: store.path(sha256: sha256), size: size)
        return newlyStored
    }

    /// Derives the stored GIF's placeholders and posters, and encodes its WebP rendition, unless
    /// the caches have them: here, on the processing workers, the encoding runs beside the
    /// transfers. A WebP that cannot be made does not refuse the GIF: the pack stage asks again
    /// and reports it.
    func derive(sha256: String) throws {
        let blobPath = store.path(sha256: sha256)
        _ = try placeholders?.ensure(sha256: sha256, blobPath: blobPath)
        _ = try? webp?.ensure(sha256: sha256, blobPath: blobPath)
    }

    /// Whether the GIF's larger side misses the resolution asked for.
    func mismatch(_ info: GIFInfo) -> Bool {
        !resolution.matches(width: info.width, height: info.height)
    }

    /// The file a storing error names when the disk is full, nil for any other error.
    static func diskFullPath(_ error: any Error) -> String? {
        switch error {
        case FileSystemError.io(_, let file, let code) where FetchGovernor.isDiskFull(code): file
        case PackWriteError.io(let file, _, let code) where FetchGovernor.isDiskFull(code): file
        default: nil
        }
    }
}

/// The fetch's writes to the state: each finished GIF recorded in its own transaction, so a
/// killed run loses at most the requests in flight. A write that fails is kept for the report and
/// never stops the build.
final class FetchStateRecorder: Sendable {
    let state: BuildState?
    /// The resolution fetched: its ``Resolution/stateKey`` keys every record.
    let resolution: Resolution
    private let errors = Mutex<[String]>([])

    init(state: BuildState?, resolution: Resolution) {
        self.state = state
        self.resolution = resolution
    }

    /// State write failures so far.
    var writeErrors: [String] { errors.withLock { $0 } }

    /// A final failure (a 404 remembered as missing).
    func failure(_ rejection: FetchRejection, missing: Bool) {
        remember {
            try state?.recordFailure(
                exerciseID: rejection.exerciseID, resolution: resolution.stateKey, url: rejection.url,
                reason: "\(rejection.reason): \(rejection.detail)", missing: missing, at: Date())
        }
    }

    /// A GIF downloaded and stored, with the validators of its response.
    func success(_ gif: StoredGIF, exercise: Exercise, head: HTTPResponseHead) {
        remember {
            try state?.recordSuccess(
                GIFState(
                    exerciseID: exercise.id, resolution: resolution.stateKey, url: exercise.imageURL,
                    etag: head.headers["etag"], lastModified: head.headers["last-modified"],
                    metadata: gif.metadata, fetchedAt: Date()))
        }
    }

    /// A GIF the server confirmed unchanged (HTTP 304).
    func notModified(exerciseID: String) {
        remember { try state?.recordNotModified(exerciseID: exerciseID, resolution: resolution.stateKey, at: Date()) }
    }

    private func remember(_ change: () throws -> Void) {
        do { try change() } catch { errors.withLock { $0.append(String(describing: error)) } }
    }
}
