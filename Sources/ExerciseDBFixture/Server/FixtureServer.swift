import GIFSynthesis
import Foundation
import Synchronization
import Glibc
import GifPackGIF

/// A loopback stand-in for ExerciseDB, in both API shapes, with switchable faults: an HTTP/1.1
/// server written directly on POSIX sockets so every byte (and every misbehaviour) is under
/// the test's control.
///
/// Design: all GIFs are made in `init` and kept in memory (other resolutions lazily). `start()`
/// binds 127.0.0.1 and runs one accept thread; each connection gets its own thread serving
/// keep-alive requests with `Content-Length` responses. `stop()` closes the listener, shuts
/// every connection down, interrupts latency sleeps and dripped bodies, and joins the threads.
/// Routes: `GET /exercises`, `GET /image` (RapidAPI, `X-RapidAPI-Key` when configured),
/// `GET /api/v1/exercises`, `GET /media/<id>.gif` (v1), `GET /__stats`, `POST /__reset`.
///
/// ```swift
/// var configuration = FixtureConfiguration()
/// configuration.exerciseCount = 12
/// let server = try FixtureServer(configuration)
/// try server.start()
/// defer { server.stop() }
/// server.schedule([.status(503)], forExercise: server.catalog.exercises[0].id)
/// print(server.rapidAPIBaseURL)   // http://127.0.0.1:41234
/// ```
package final class FixtureServer: Sendable {
    package let configuration: FixtureConfiguration

    private let state: FixtureState
    private let faults = FaultBook()
    private let recorder = StatsRecorder()
    private let registry = ConnectionRegistry()
    private let stopSignal = StopSignal()
    /// The listener and its accept thread while running; the port kept after `stop()`.
    private struct Running {
        var listener: ListeningSocket?
        var acceptThread: pthread_t?
        var boundPort = 0
    }

    private let running = Mutex(Running())

    /// Validates the configuration and builds the catalog with all its GIFs.
    package init(_ configuration: FixtureConfiguration) throws(FixtureError) {
        try configuration.validate()
        self.configuration = configuration
        state = FixtureState(catalog: try FixtureCatalog(configuration: configuration), configuration: configuration)
    }

    deinit { stop() }

    /// Binds 127.0.0.1 on ``FixtureConfiguration/port`` (0 = any free port) and starts serving.
    /// A stopped server can be started again.
    package func start() throws(FixtureError) {
        try running.withLock { (running) throws(FixtureError) in try start(&running) }
    }

    private func start(_ running: inout Running) throws(FixtureError) {
        guard running.listener == nil else { throw .alreadyRunning }
        let listener = try ListeningSocket.open(port: configuration.port)
        registry.reopen()
        stopSignal.rearm()
        state.baseURL = "http://127.0.0.1:\(listener.port)"
        let handler = ConnectionHandler(
            router: FixtureRouter(configuration: configuration, state: state, faults: faults, stats: recorder),
            registry: registry, stopSignal: stopSignal)
        let registry = registry
        do {
            running.acceptThread = try ServerThread.spawn {
                while let client = listener.accept(through: registry.acceptAndAdmit) {
                    do {
                        _ = try ServerThread.spawn(detached: true) { handler.serve(descriptor: client) }
                    } catch {
                        registry.close(client, reset: false)
                    }
                }
            }
        } catch {
            listener.close()
            throw error
        }
        running.listener = listener
        running.boundPort = listener.port
    }

    /// Stops accepting, closes every connection and waits for their threads; idempotent.
    package func stop() {
        let (listener, thread) = running.withLock { running in
            defer { (running.listener, running.acceptThread) = (nil, nil) }
            return (running.listener, running.acceptThread)
        }
        guard let listener else { return }
        listener.wake()
        if let thread { ServerThread.join(thread) }
        listener.close()
        stopSignal.fire()
        state.listGate.hold(from: nil)
        state.imageGate.release(nil)
        registry.closeAll(timeout: 5)
    }

    /// Waits until the server has handled every connection made so far to its end — none open,
    /// none waiting to be accepted — so the stats count every request a client (say, a process
    /// that was just killed) sent. False if that took longer than `timeout` seconds.
    ///
    /// ```swift
    /// _ = try run(gifpack, arguments, environment: crashing)   // killed mid-download
    /// #expect(server.waitUntilIdle())
    /// let before = server.stats.requestsByExercise
    /// ```
    @discardableResult
    package func waitUntilIdle(timeout: Double = 10) -> Bool {
        let listener = running.withLock { $0.listener }
        return registry.waitUntilIdle(timeout: timeout) { listener?.hasPendingConnection ?? false }
    }

    /// The port listened on (kept after `stop()`; 0 before the first `start()`).
    package var port: Int { running.withLock { $0.boundPort } }

    /// `http://127.0.0.1:PORT`, the base of `/exercises` and `/image`.
    package var rapidAPIBaseURL: String { "http://127.0.0.1:\(port)" }

    /// `http://127.0.0.1:PORT/api/v1`, the base of the v1 `/exercises`.
    package var v1BaseURL: String { rapidAPIBaseURL + "/api/v1" }

    /// What the server serves now (replacements included), v1 `gifUrl`s pointing at it.
    package var catalog: FixtureCatalog {
        let catalog = state.catalog
        return port == 0 ? catalog : catalog.resolvingMediaURLs(base: rapidAPIBaseURL)
    }

    package var stats: FixtureStats { recorder.snapshot }

    /// Requests left of the configured quota (nil without one).
    package var quotaRemaining: Int? { state.quotaRemaining }

    package func resetStats() { recorder.reset() }

    /// Image and list requests answered since the last reset, in order, with their times.
    package var requestLog: [FixtureRequestRecord] { recorder.requestLog }

    /// Sets the quota left (as if a new month began); nil removes the quota.
    package func setQuota(_ remaining: Int?) { state.setQuota(remaining) }

    /// Queues faults for the exercise's next image requests (either shape's id), one per
    /// request, in order; once consumed, requests behave normally (or get the default fault).
    package func schedule(_ faults: [Fault], forExercise id: String) {
        self.faults.schedule(faults, for: state.catalog.canonicalID(id))
    }

    /// A fault for every image request of the exercise once its queue is empty; nil clears it.
    package func setDefaultFault(_ fault: Fault?, forExercise id: String) {
        faults.setDefault(fault, for: state.catalog.canonicalID(id))
    }

    /// Serves `bytes` for the exercise (both shapes, every resolution) from now on, with a new
    /// `ETag` and `Last-Modified`: an upstream change.
    package func replaceGIF(id: String, with bytes: [UInt8]) {
        state.replaceGIF(id: id, with: bytes)
    }

    /// Serves `bytes` for the exercise when `resolution` is asked for, from now on (the other
    /// resolutions as before): an upstream change to one rendition.
    package func replaceGIF(id: String, resolution: Int, with bytes: [UInt8]) {
        state.replaceGIF(id: id, resolution: resolution, with: bytes)
    }

    /// Lists the exercise (either shape's id) under a new name from now on: one changed record,
    /// on one list page.
    package func renameExercise(id: String, to name: String) {
        state.renameExercise(id: id, to: name)
    }

    /// Serves only the first `count` exercises on both list routes from now on (an API bug
    /// answering part of its list, with totals and `nextPage` to match); nil serves them all again.
    /// Image routes still serve every exercise.
    package func listOnly(first count: Int?) {
        state.listedCount = count
    }

    /// Gives the RapidAPI list route `fault` from now on (``FixtureConfiguration/listFault`` at the
    /// start); nil serves the list as it is again.
    package func setListFault(_ fault: ListFault?) {
        state.listFault = fault
    }

    /// Makes every v1 page say `total` in `metadata.totalExercises` (a lying, or negative, total)
    /// while serving the list and its `nextPage` links as they are; nil: the true count again.
    package func setV1ReportedTotal(_ total: Int?) {
        state.v1ReportedTotal = total
    }

    /// Holds list requests (either route) at `offset` and past it unanswered from now on, each
    /// after its latency and before its answer is recorded; nil answers every held one now (as
    /// ``stop()`` does).
    package func holdListPages(fromOffset offset: Int?) {
        state.listGate.hold(from: offset)
    }

    /// Holds the GIF requests of these exercises (either shape's id) unanswered from now on, each
    /// after its latency and before its answer is recorded, until ``releaseImages(_:)`` (or ``stop()``).
    package func holdImages(_ ids: [String]) {
        state.imageGate.hold(Set(ids.map { state.catalog.canonicalID($0) }))
    }

    /// Answers the held GIF requests of these exercises now and holds them no more; nil: every one.
    package func releaseImages(_ ids: [String]?) {
        state.imageGate.release(ids.map { Set($0.map { state.catalog.canonicalID($0) }) })
    }

    /// Changes the delay added before each response.
    package func setLatency(milliseconds: Int) {
        state.latencyMilliseconds = milliseconds
    }
}

extension FixtureServer {
    /// Gives `percent` % of the exercises (at least one, evenly spread in id order) a newly drawn
    /// GIF of the same width and height: a later release of the same catalog, for upgrade tests
    /// and benchmarks. Same `seed`, same new bytes. Returns the ids changed, sorted.
    ///
    /// ```swift
    /// let changed = try server.renewGIFs(percent: 1)   // 13 of 1,324 exercises
    /// ```
    @discardableResult
    package func renewGIFs(percent: Double, seed: UInt64 = 0x5EED) throws -> [String] {
        let catalog = self.catalog
        let ids = catalog.exercises.map(\.id).sorted()
        guard !ids.isEmpty, percent > 0 else { return [] }
        let count = min(ids.count, max(1, Int((Double(ids.count) * percent / 100).rounded())))
        let step = Double(ids.count) / Double(count)
        var changed: [String] = []
        for slot in 0..<count {
            let id = ids[min(ids.count - 1, Int(Double(slot) * step))]
            let old = catalog.gifBytes(id: id, resolution: 180) ?? []
            let width = old.count >= 10 ? Int(old[6]) | Int(old[7]) << 8 : 32
            let height = old.count >= 10 ? Int(old[8]) | Int(old[9]) << 8 : 32
            let bytes = try GIFSynthesizer.animatedGIF(
                width: max(1, width), height: max(1, height), frames: 12, colors: 3,
                seed: seed &+ UInt64(slot))
            replaceGIF(id: id, with: bytes)
            changed.append(id)
        }
        return changed
    }
}
