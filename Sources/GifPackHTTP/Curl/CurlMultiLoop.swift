import CCurl
import Foundation
import Synchronization

/// The dedicated thread that owns a `CURLM` handle and drives every transfer of one client.
///
/// Callers only touch the lock-protected queues (``submit(_:)``, ``cancel(_:)``) and then call
/// `curl_multi_wakeup`, the one multi function that is safe from any thread. Everything else —
/// adding and removing easy handles, `curl_multi_perform`, the callbacks, reading completions,
/// the easy-handle pool — happens on the loop thread, so curl is never used concurrently and the
/// Swift cooperative pool never blocks on it. The loop thread also frees the multi handle when it
/// stops; every wakeup is sent under the lock and only while not stopping, so none can reach a
/// freed handle.
///
/// Admission: at most `maxConcurrent` transfers are in curl at once; later ones wait in the
/// loop's own FIFO and start as running ones end. curl therefore never queues a transfer itself
/// (its pending queue counts the wait against the transfer's total timeout and releases waiters
/// one at a time), and with one transfer per connection at most `maxConcurrent` connections are
/// open or cached at any time. A request with an ``HTTPAdmission`` is asked at its turn whether
/// it may go; one declined is not sent and fails with ``HTTPError/notAdmitted``.
final class CurlMultiLoop: @unchecked Sendable {  // @unchecked: what tasks hand the loop is in the `shared` Mutex; the rest is the loop thread's only.
    private struct Shared {
        var submitted: [Transfer] = []
        var cancelled: [Transfer] = []
        var stopping = false
        var statistics = HTTPClientStatistics()
    }

    private let multi: UnsafeMutableRawPointer
    private let shared = Mutex(Shared())
    private let maxConcurrent: Int
    private let caFile: String?

    // Loop thread only.
    private var waiting: [Transfer] = []
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []

    init(maxConnections: Int, caFile: String?) throws(HTTPError) {
        try CurlGlobal.ensureInitialized()
        guard let multi = curl_multi_init() else {
            throw .transport(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_multi_init failed")
        }
        self.multi = multi
        maxConcurrent = maxConnections
        self.caFile = caFile
        let codes = [
            gp_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnections),
            gp_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        ]
        if let failed = codes.first(where: { $0 != CURLM_OK }) {
            curl_multi_cleanup(multi)
            throw .transport(code: Int(failed.rawValue), message: String(cString: curl_multi_strerror(failed)))
        }
    }

    /// Starts the loop thread; it keeps the loop alive until ``shutdown()``.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "gifpack-http"
        thread.start()
    }

    var statistics: HTTPClientStatistics { shared.withLock { $0.statistics } }

    // MARK: Any thread

    /// Queues a transfer whose continuation is installed; after shutdown it fails at once.
    func submit(_ transfer: Transfer) {
        let accepted = shared.withLock { shared -> Bool in
            guard !shared.stopping else { return false }
            shared.submitted.append(transfer)
            curl_multi_wakeup(multi)
            return true
        }
        if !accepted { transfer.finish(.failure(.cancelled)) }
    }

    /// Asks the loop to abandon a transfer its task no longer waits for.
    func cancel(_ transfer: Transfer) {
        transfer.requestCancel()
        shared.withLock { shared in
            guard !shared.stopping else { return }
            shared.cancelled.append(transfer)
            curl_multi_wakeup(multi)
        }
    }

    /// Tells the loop to stop, without waiting for it: the loop thread wakes at once, fails every
    /// queued or running transfer with `.cancelled`, frees curl's handles and exits; submissions
    /// made from now on fail at once.
    func shutdown() {
        shared.withLock { shared in
            guard !shared.stopping else { return }
            shared.stopping = true
            curl_multi_wakeup(multi)
        }
    }

    // MARK: Loop thread

    private func run() {
        while true {
            let (submitted, cancelled, stopping) = shared.withLock { shared -> ([Transfer], [Transfer], Bool) in
                defer { shared.submitted = []; shared.cancelled = [] }
                return (shared.submitted, shared.cancelled, shared.stopping)
            }
            if stopping {
                tearDown(unstarted: submitted)
                return
            }
            waiting += submitted
            cancelled.forEach(abandon)
            admitWaiting()
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            drainCompletions()
            // Slots freed by completions are refilled at once rather than after the poll.
            if !waiting.isEmpty && active.count < maxConcurrent { continue }
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

    /// Starts waiting transfers, oldest first, while there is a free slot. Statistics are
    /// updated before any continuation is resumed.
    private func admitWaiting() {
        while active.count < maxConcurrent, !waiting.isEmpty {
            let transfer = waiting.removeFirst()
            let failure: HTTPError? =
                if let admission = transfer.request.admission, !admission.admits(inFlight: active.count) {
                    .notAdmitted
                } else {
                    begin(transfer)
                }
            let (queued, inFlight) = (waiting.count, active.count)
            shared.withLock { shared in
                shared.statistics.currentlyQueued = queued
                shared.statistics.setInFlight(inFlight)
                switch failure {
                case nil:
                    shared.statistics.requestsStarted += 1
                    shared.statistics.maxInFlight = max(shared.statistics.maxInFlight, inFlight)
                case .cancelled?: shared.statistics.requestsCancelled += 1
                case .notAdmitted?: shared.statistics.requestsNotAdmitted += 1
                case _?: shared.statistics.requestsFailed += 1
                }
            }
            if let failure { transfer.finish(.failure(failure)) }
        }
        let queued = waiting.count
        shared.withLock { $0.statistics.currentlyQueued = queued }
    }

    /// Hands a transfer to curl: takes a pooled easy handle, opens the sink, sets the options,
    /// adds the handle. Returns why it could not start (everything acquired released again).
    private func begin(_ transfer: Transfer) -> HTTPError? {
        guard !transfer.isCancelRequested else { return .cancelled }
        guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
            return .transport(code: Int(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed")
        }
        do {
            try transfer.sink.open()
        } catch {
            recycle(easy)
            return error
        }
        do {
            try EasyHandleSetup.configure(easy, for: transfer, caFile: caFile)
        } catch {
            _ = transfer.sink.close()
            recycle(easy)
            transfer.releaseCurlResources()
            return error
        }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            _ = transfer.sink.close()
            recycle(easy)
            transfer.releaseCurlResources()
            return .transport(code: Int(added.rawValue), message: String(cString: curl_multi_strerror(added)))
        }
        transfer.easy = easy
        active[easy] = transfer
        return nil
    }

    private func drainCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard gp_msg_is_done(message) != 0, let easy = gp_msg_easy(message) else { continue }
            finish(easy: easy, code: gp_msg_result(message))
        }
    }

    /// Ends a transfer curl reported done: detach, read the results, recycle, resume.
    private func finish(easy: UnsafeMutableRawPointer, code: CURLcode) {
        guard let transfer = detach(easy) else { return }
        var result = outcome(of: transfer, easy: easy, code: code)
        if let closeFailure = transfer.sink.close(), case .success = result { result = .failure(closeFailure) }
        recordEnd(of: transfer, easy: easy, result: result)
        // Before any queued request is admitted: what this answer says (a quota, a 429, a failure
        // in a row) is known to the admission checks of the requests behind it.
        if let answered = transfer.request.admission?.answered {
            switch result {
            case .success(let outcome):
                answered(.response(outcome.head, bodyPrefix: transfer.sink.bodyPrefix, bodyBytes: transfer.sink.bodyBytes))
            case .failure(let error):
                answered(.failed(error))
            }
        }
        recycle(easy)
        transfer.releaseCurlResources()
        transfer.finish(result)
    }

    /// Ends a transfer its task cancelled: drops it from the waiting line, or removes it from
    /// curl if curl still runs it.
    private func abandon(_ transfer: Transfer) {
        if let index = waiting.firstIndex(where: { $0 === transfer }) {
            waiting.remove(at: index)
            let queued = waiting.count
            shared.withLock { shared in
                shared.statistics.requestsCancelled += 1
                shared.statistics.currentlyQueued = queued
            }
            transfer.finish(.failure(.cancelled))
            return
        }
        guard let easy = transfer.easy, active[easy] === transfer, detach(easy) != nil else { return }
        _ = transfer.sink.close()
        recordEnd(of: transfer, easy: easy, result: .failure(.cancelled))
        // Not pooled: a handle removed mid-transfer can keep its receive buffer through a reset, and
        // curl then refuses CURLOPT_BUFFERSIZE on it (CURLE_BAD_FUNCTION_ARGUMENT), failing the next
        // request (the whole-pack download after ranges were cancelled).
        curl_easy_cleanup(easy)
        transfer.releaseCurlResources()
        transfer.finish(.failure(.cancelled))
    }

    private func detach(_ easy: UnsafeMutableRawPointer) -> Transfer? {
        guard let transfer = active.removeValue(forKey: easy) else { return nil }
        curl_multi_remove_handle(multi, easy)
        return transfer
    }

    private func outcome(of transfer: Transfer, easy: UnsafeMutableRawPointer, code: CURLcode) -> Result<TransferOutcome, HTTPError> {
        let stoppedAtHead = transfer.stoppedAtHead && code == CURLE_WRITE_ERROR
        guard code == CURLE_OK || stoppedAtHead, transfer.callbackFailure == nil else {
            var length: curl_off_t = -1
            _ = gp_easy_getinfo_off(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            return .failure(CurlErrorMapping.error(for: code, transfer: transfer, expectedLength: length >= 0 ? Int64(length) : nil))
        }
        var status = 0
        _ = gp_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var micros: curl_off_t = 0
        _ = gp_easy_getinfo_off(easy, CURLINFO_TOTAL_TIME_T, &micros)
        let head = HTTPResponseHead(
            status: status > 0 ? status : transfer.head.status,
            httpVersion: transfer.head.httpVersion.isEmpty ? Self.httpVersion(of: easy) : transfer.head.httpVersion,
            headers: transfer.head.headers)
        var redirectURL: String?
        if transfer.discardsBody {
            var location: UnsafeMutablePointer<CChar>?
            _ = gp_easy_getinfo_string(easy, CURLINFO_REDIRECT_URL, &location)
            guard let location else { return .failure(.invalidURL(head.headers["location"] ?? "")) }
            redirectURL = String(cString: location)
        }
        return .success(TransferOutcome(head: head, elapsed: .microseconds(Int(micros)), redirectURL: redirectURL))
    }

    private static func httpVersion(of easy: UnsafeMutableRawPointer) -> String {
        var version = 0
        _ = gp_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return ""
        }
    }

    private func recordEnd(of transfer: Transfer, easy: UnsafeMutableRawPointer, result: Result<TransferOutcome, HTTPError>) {
        var connects = 0
        _ = gp_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        let inFlight = active.count
        shared.withLock { shared in
            switch result {
            case .success: shared.statistics.requestsCompleted += 1
            case .failure(.cancelled): shared.statistics.requestsCancelled += 1
            case .failure: shared.statistics.requestsFailed += 1
            }
            shared.statistics.connectionsOpened += connects
            shared.statistics.bytesReceived += transfer.bodyBytes
            shared.statistics.setInFlight(inFlight)
        }
    }

    /// Returns an easy handle to the pool, reset to defaults; the connection it used stays in the
    /// multi handle's cache.
    private func recycle(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        if idleHandles.count < maxConcurrent { idleHandles.append(easy) } else { curl_easy_cleanup(easy) }
    }

    private func tearDown(unstarted: [Transfer]) {
        for transfer in Array(active.values) + waiting { abandon(transfer) }
        for transfer in unstarted { transfer.finish(.failure(.cancelled)) }
        idleHandles.forEach { curl_easy_cleanup($0) }
        idleHandles = []
        curl_multi_cleanup(multi)
    }
}
