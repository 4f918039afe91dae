import Foundation
import GifPackHTTP

/// Downloads the GIFs of a list of exercises with at most `concurrency` requests in flight.
///
/// The window is a `TaskGroup` that never holds more than `concurrency` child tasks: it starts that
/// many downloads, and each time one finishes it hands the file to the ``GIFProcessor`` and starts
/// the next — a sliding window, not one task per exercise parked on a semaphore. Each child task
/// only awaits curl (which runs on its own thread), streams the body to a temporary file in the
/// cache and makes the cheap response checks; decoding and storing happen on the processor's queue.
///
/// ```swift
/// let fetcher = GIFFetcher(client: client, manifest: manifest, layout: layout, frames: frames)
/// let results = await fetcher.fetch(catalog.exercises)
/// ```
struct GIFFetcher: Sendable {
    let client: HTTPClient
    let source: SourceSettings
    let settings: FetchSettings
    let layout: CacheLayout
    let processor: GIFProcessor

    init(client: HTTPClient, source: SourceSettings, settings: FetchSettings, layout: CacheLayout, frames: FrameCache) {
        self.client = client
        self.source = source
        self.settings = settings
        self.layout = layout
        let limits = GIFLimits(maxWidth: settings.maxWidth, maxHeight: settings.maxHeight,
                               maxFrames: settings.maxFrames, maxTotalPixels: settings.maxTotalPixels)
        self.processor = GIFProcessor(store: BlobStore(layout: layout), frames: frames, limits: limits,
                                      resolution: source.resolution)
    }

    func fetch(_ exercises: [Exercise]) async -> [String: GIFFetchResult] {
        let window = max(1, min(settings.concurrency, 3))
        await withTaskGroup(of: Void.self) { group in
            var pending = exercises.makeIterator()
            for _ in 0..<window {
                guard let exercise = pending.next() else { break }
                group.addTask { await download(exercise) }
            }
            while await group.next() != nil {
                if let exercise = pending.next() {
                    group.addTask { await download(exercise) }
                }
            }
        }
        return await processor.drain()
    }

    private func request(for exercise: Exercise) -> HTTPRequest {
        var request = HTTPRequest(url: exercise.imageURL,
                                  headers: source.kind == .rapidAPI ? CatalogSources.headers(for: source) : HTTPHeaders(),
                                  timeouts: HTTPTimeouts(connect: settings.connectTimeout, total: settings.requestTimeout,
                                                         lowSpeedBytesPerSecond: settings.lowSpeedBytesPerSecond,
                                                         lowSpeedWindow: settings.lowSpeedTime),
                                  acceptCompressedBody: false)
        request.followRedirects = source.kind == .v1
        return request
    }

    private func download(_ exercise: Exercise) async {
        let path = layout.newTemporaryDownloadPath()
        let url = exercise.imageURL
        do {
            let download = try await client.download(request(for: exercise), to: path, maxBytes: settings.maxGIFBytes)
            if let problem = ResponseChecks.problem(with: download) {
                FileSystem.remove(path)
                processor.record(.rejected(FetchRejection(exerciseID: exercise.id, url: url, reason: problem.reason,
                                                          detail: problem.detail, status: download.head.status)),
                                 for: exercise.id)
                return
            }
            processor.submit(exerciseID: exercise.id, url: url,
                             download: HTTPDownloadSummary(status: download.head.status, sha256: download.sha256,
                                                           bytes: download.bytesWritten),
                             path: path)
        } catch {
            FileSystem.remove(path)
            let detail = error == .bodyTooLarge(limit: settings.maxGIFBytes)
                ? "the body exceeds max_gif_bytes (\(settings.maxGIFBytes) bytes)" : String(describing: error)
            processor.record(.rejected(FetchRejection(exerciseID: exercise.id, url: url, reason: error.reason,
                                                      detail: detail, status: nil)),
                             for: exercise.id)
        }
    }
}
