import Foundation
import Synchronization

/// Validates, stores and precompresses downloaded GIFs off the Swift cooperative pool.
///
/// Decoding a GIF, fsyncing it into the blob store and compressing its pack frame are blocking,
/// CPU- and disk-heavy steps. They run one at a time on a dedicated serial dispatch queue, so the
/// fetch window is never held up by them and the second core does this work while curl's thread
/// waits on the network. `submit` returns at once; `drain()` waits for everything submitted.
///
/// ```swift
/// let processor = GIFProcessor(store: store, frames: frames, limits: .standard, resolution: 180)
/// processor.submit(exerciseID: "0001", url: url, download: download, path: partPath)
/// let results = await processor.drain()
/// ```
final class GIFProcessor: Sendable {
    private let queue = DispatchQueue(label: "gifpack.process", qos: .userInitiated)
    private let store: BlobStore
    private let frames: FrameCache
    private let limits: GIFLimits
    private let resolution: Int?
    private let results = Mutex<[String: GIFFetchResult]>([:])

    init(store: BlobStore, frames: FrameCache, limits: GIFLimits, resolution: Int?) {
        self.store = store
        self.frames = frames
        self.limits = limits
        self.resolution = resolution
    }

    /// Records a result decided without processing (a rejected response).
    func record(_ result: GIFFetchResult, for exerciseID: String) {
        results.withLock { $0[exerciseID] = result }
    }

    /// Queues a download that passed the response checks for full validation and storage.
    func submit(exerciseID: String, url: String, download: HTTPDownloadSummary, path: String) {
        queue.async { [self] in
            let result = process(exerciseID: exerciseID, url: url, download: download, path: path)
            results.withLock { $0[exerciseID] = result }
        }
    }

    /// Waits until every submitted GIF is processed and returns all results by exercise id.
    func drain() async -> [String: GIFFetchResult] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
        return results.withLock { $0 }
    }

    private func process(exerciseID: String, url: String, download: HTTPDownloadSummary, path: String) -> GIFFetchResult {
        let info: GIFInfo
        do { info = try GIFInspector.inspect(path: path, limits: limits) } catch {
            FileSystem.remove(path)
            return .rejected(FetchRejection(exerciseID: exerciseID, url: url, reason: error.reason,
                                            detail: error.detail, status: download.status))
        }
        let newlyStored: Bool
        do {
            newlyStored = try store.adopt(temporaryFile: path, sha256: download.sha256)
            try frames.ensureFrame(sha256: download.sha256, blobPath: store.path(sha256: download.sha256), size: download.bytes)
        } catch {
            FileSystem.remove(path)
            return .rejected(FetchRejection(exerciseID: exerciseID, url: url, reason: "store-failed",
                                            detail: String(describing: error), status: download.status))
        }
        let mismatch = resolution.map { max(info.width, info.height) != $0 } ?? false
        return .stored(StoredGIF(exerciseID: exerciseID, sha256: download.sha256, bytes: download.bytes, info: info,
                                 newlyStored: newlyStored, resolutionMismatch: mismatch))
    }
}

/// The parts of a finished download the processor needs.
struct HTTPDownloadSummary: Sendable {
    var status: Int
    var sha256: String
    var bytes: Int64
}
