import Foundation
import GifPackSystem
import Synchronization

/// Why a build stopped scheduling requests before it had tried every GIF.
package enum StopReason: Sendable, Equatable, Codable, CustomStringConvertible {
    case authRejected(status: Int)
    case monthlyQuotaExhausted
    case quotaReserveReached(remaining: Int, reserve: Int)
    case requestBudgetSpent(limit: Int)
    case deadlinePassed(limit: Double)
    case circuitOpen(consecutiveFailures: Int)
    /// Writing into the cache failed with ENOSPC (or EDQUOT): every further download would be
    /// fetched only to be dropped.
    case diskFull(path: String)

    package var exitStatus: ExitStatus {
        switch self {
        case .authRejected: .authRejected
        case .monthlyQuotaExhausted, .quotaReserveReached, .requestBudgetSpent, .deadlinePassed: .quotaExhausted
        case .circuitOpen, .diskFull: .failed
        }
    }

    package var description: String {
        switch self {
        case .authRejected(let status): "the API rejected the key (HTTP \(status))"
        case .monthlyQuotaExhausted: "the API's monthly quota is used up (HTTP 429)"
        case .quotaReserveReached(let remaining, let reserve):
            "the API quota left (\(remaining) requests) reached the reserve of \(reserve)"
        case .requestBudgetSpent(let limit): "the request budget of this run (max_requests: \(limit)) is spent"
        case .deadlinePassed(let limit): "the run's deadline (max_duration: \(Int(limit)) s) passed"
        case .circuitOpen(let failures): "\(failures) requests in a row failed (circuit_breaker): the API looks down"
        case .diskFull(let path): "the cache's disk is full (no space left on device writing \(path)): free space and run again"
        }
    }
}

/// Shared fetch state that every request consults: the adaptive window, a cool-down after a 429,
/// the request budget, the quota headers, the circuit breaker and the reason to stop.
///
/// A 429 slows the whole build, not just one task: it halves the window (never below 1) and sets a
/// cool-down that every request waits out before it is sent; each run of successes grows the window
/// back by one, up to the manifest's cap (at most 3).
///
/// ```swift
/// let governor = FetchGovernor(settings: manifest.fetch, requestsAlreadySent: 3, startedAt: .now)
/// guard governor.reserveRequest() else { return }
/// ```
final class FetchGovernor: Sendable {
    private struct State {
        var window: Int
        var successStreak = 0
        var coolDownUntil: ContinuousClock.Instant?
        var stop: StopReason?
        var consecutiveFailures = 0
        var requestsSent: Int
        var quotaRemaining: Int?
        var retries = 0
        var rateLimited = 0
        var coolDownSleeps = 0
        var gifRequestsSent = 0
        var cancelled = false
    }

    private let state: Mutex<State>
    let cap: Int
    let settings: FetchSettings
    let deadline: ContinuousClock.Instant?
    static let successesToGrow = 5

    init(settings: FetchSettings, requestsAlreadySent: Int, startedAt: ContinuousClock.Instant) {
        self.settings = settings
        cap = Self.cap(for: settings)
        deadline = settings.maxDuration.map { startedAt + $0 }
        state = Mutex(State(window: cap, requestsSent: requestsAlreadySent))
    }

    /// The most requests in flight the manifest's `fetch.concurrency` allows (1 to 3).
    static func cap(for settings: FetchSettings) -> Int { max(1, min(settings.concurrency, 3)) }

    var window: Int { state.withLock { $0.window } }
    var stopReason: StopReason? { state.withLock { $0.stop } }
    var requestsSent: Int { state.withLock { $0.requestsSent } }
    var quotaRemaining: Int? { state.withLock { $0.quotaRemaining } }
    var retries: Int { state.withLock { $0.retries } }
    var rateLimited: Int { state.withLock { $0.rateLimited } }
    /// Sleeps begun waiting out cool-downs (``waitForCoolDown()``), by every request of the run.
    var coolDownSleeps: Int { state.withLock { $0.coolDownSleeps } }
    /// GIF requests admitted (sent to the source), retries included; list requests are not counted.
    var gifRequestsSent: Int { state.withLock { $0.gifRequestsSent } }

    /// True for the errno of a full disk or quota (ENOSPC, EDQUOT).
    static func isDiskFull(_ code: Int32) -> Bool { Errno(code).meansDiskFull }

    func stop(_ reason: StopReason) {
        state.withLock { if $0.stop == nil { $0.stop = reason } }
    }

    /// Claims one request from the budget; false (and the build stops) when it is spent or the
    /// deadline has passed.
    func reserveRequest(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            if state.stop != nil { return false }
            if let deadline, now >= deadline {
                state.stop = .deadlinePassed(limit: settings.maxDuration!.milliseconds / 1000)
                return false
            }
            if let limit = settings.maxRequests, state.requestsSent >= limit {
                state.stop = .requestBudgetSpent(limit: limit)
                return false
            }
            state.requestsSent += 1
            return true
        }
    }

    /// The admission check of every image request, made the moment it would reach curl with
    /// `inFlight` requests running: yes while the build is not cancelled, the window has room, no
    /// cool-down is on and a request can be claimed from the budget (``reserveRequest(now:)``,
    /// which may stop the build).
    /// A request turned away is sent later, or never if the build stopped.
    func admit(inFlight: Int, now: ContinuousClock.Instant = .now) -> Bool {
        let open = state.withLock { state in
            !state.cancelled && inFlight < state.window && !(state.coolDownUntil.map { $0 > now } ?? false)
        }
        guard open, reserveRequest(now: now) else { return false }
        state.withLock { $0.gifRequestsSent += 1 }
        return true
    }

    /// A request's task was cancelled, which only a cancelled build does: nothing more is admitted,
    /// also when its transfer's end frees a slot before the cancels of those queued behind arrive.
    func noteCancelled() { state.withLock { $0.cancelled = true } }

    /// A request sent outside the GIF fetch (a list page while the early fetch runs): it counts
    /// against `max_requests` like those sent before the governor was made.
    func countRequestSent() { state.withLock { $0.requestsSent += 1 } }

    func noteRetry() { state.withLock { $0.retries += 1 } }

    /// Waits out a cool-down set by a 429 before sending. A cancelled task does not wait: the
    /// sleep's cancellation ends the wait and is thrown (a sleep that throws at once, retried in a
    /// loop, would spin a core until the cool-down ends).
    func waitForCoolDown() async throws(CancellationError) {
        while let until = state.withLock({ $0.coolDownUntil }), until > .now {
            state.withLock { $0.coolDownSleeps += 1 }
            do { try await Task.sleep(until: until, clock: .continuous) } catch { throw CancellationError() }
        }
    }

    func noteSuccess() {
        state.withLock { state in
            state.consecutiveFailures = 0
            state.successStreak += 1
            if state.successStreak >= Self.successesToGrow, state.window < cap {
                state.window += 1
                state.successStreak = 0
            }
        }
    }

    /// Counts a failed attempt towards the circuit breaker.
    func noteFailure() {
        state.withLock { state in
            state.consecutiveFailures += 1
            state.successStreak = 0
            if settings.circuitBreaker > 0, state.consecutiveFailures >= settings.circuitBreaker, state.stop == nil {
                state.stop = .circuitOpen(consecutiveFailures: state.consecutiveFailures)
            }
        }
    }

    /// A 429: shrink the window and make everyone wait `coolDown`.
    func noteRateLimited(coolDown: Duration) {
        state.withLock { state in
            state.rateLimited += 1
            state.window = max(1, state.window / 2)
            state.successStreak = 0
            let until = ContinuousClock.now + coolDown
            if state.coolDownUntil.map({ $0 < until }) ?? true { state.coolDownUntil = until }
        }
    }

    /// Reads `x-ratelimit-requests-remaining`; stops scheduling at the reserve.
    func noteQuota(remaining: Int) {
        state.withLock { state in
            state.quotaRemaining = remaining
            if remaining <= settings.quotaReserve, state.stop == nil {
                state.stop = .quotaReserveReached(remaining: remaining, reserve: settings.quotaReserve)
            }
        }
    }
}
