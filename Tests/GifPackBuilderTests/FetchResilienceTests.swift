import ExerciseDBFixture
import Foundation
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

@Suite("Fetching that survives the real API", .timeLimit(.minutes(5)))
struct FetchResilienceTests {
    func server(count: Int, configure: (inout FixtureConfiguration) -> Void = { _ in }) throws -> FixtureServer {
        try startFixture(count: count, configure: configure)
    }

    @Test func aFaultMixOnFirstAttemptsStillYieldsACompleteByteIdenticalPack() async throws {
        let server = try server(count: 30) { $0.latencyMilliseconds = 5 }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let mix: [[Fault]] = [
            [.status(500)], [.tooManyRequests(retryAfter: nil)], [.tooManyRequests(retryAfter: .seconds(1))],
            [.htmlWith200], [.truncatedBody], [.connectionReset], [.status(502), .status(503)], [.notAGIF],
            [.wrongContentType], [.status(504)], [.tooManyRequests(retryAfter: .httpDate(secondsFromNow: 1))]
        ]
        for (index, faults) in mix.enumerated() { server.schedule(faults, forExercise: ids[index * 2]) }
        let workspace = try TemporaryDirectory()

        let report = try await runBuild(manifest: rapidAPIManifest(server: server, maxMissing: "0"), workspace: workspace)

        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.gifs.valid == 30)
        // Every scheduled fault was served, and each faulted GIF was fetched again until it was good.
        // (curl itself resends a request whose reused connection was reset before any answer.)
        for (index, faults) in mix.enumerated() {
            #expect(server.stats.requestsByExercise[ids[index * 2]] == faults.count + 1, "\(faults)")
        }
        #expect(report.http.retries >= 11)
        #expect(server.stats.maxInFlight <= 3, "retries share the window")
        let pack = try #require(try readIndex(workspace.file("dist/index.json")).packs.first)
        let extract = workspace.file("extract")
        try FileManager.default.createDirectory(atPath: extract, withIntermediateDirectories: true)
        #expect(try await run("/usr/bin/tar", ["--zstd", "-xf", workspace.file("dist/\(pack.file)"), "-C", extract]).status == 0)
        for id in ids {
            let entry = try #require(pack.gifEntry(forExercise: id))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(extract)/\(entry.location.path)"))
            #expect([UInt8](bytes) == server.catalog.gifBytes(id: id, resolution: 180), "\(id) differs from the server's GIF")
        }
    }

    /// The cause, not a stopwatch: the retry is scheduled by the 429's `Retry-After` (1 s, twenty
    /// times the 50 ms backoff cap of `rapidAPIManifest`, so only the header can explain it), and the
    /// server sees the 429 and then the one retry that succeeds, at least the header's second later
    /// by its own request log (a loaded machine only makes the gap longer).
    @Test func retryAfterDelaysThatExercisesRetry() async throws {
        let server = try server(count: 4)
        defer { server.stop() }
        let id = server.catalog.exercises.map(\.id).sorted()[1]
        server.schedule([.tooManyRequests(retryAfter: .seconds(1))], forExercise: id)
        let workspace = try TemporaryDirectory()
        let attempts = Mutex<[AttemptEvent]>([])
        let manifest = try ManifestLoader().parse(rapidAPIManifest(server: server), environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let options = BuildOptions(
            outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"),
            sourceDateEpoch: 1_700_000_000)

        let report = await BuildPipeline(manifest: manifest, options: options) { event in
            if case .attempt(let attempt) = event, attempt.exerciseID == id { attempts.withLock { $0.append(attempt) } }
        }.run()

        #expect(report.exitStatus == .success, "\(report.message)")
        let served = server.requestLog.filter { $0.exerciseID == id }
        #expect(served.map(\.status) == [429, 200])
        let seen = attempts.withLock { $0 }
        #expect(seen.map(\.outcome) == [.retry, .downloaded])
        #expect(seen.map(\.status) == [429, 200])
        let retryIn = try #require(seen.first?.retryIn)
        #expect(retryIn <= .seconds(1), "the retry was scheduled \(retryIn) after the 429, past its Retry-After")
        if served.count == 2 {
            let gap = served[1].answeredAt.timeIntervalSince(served[0].answeredAt)
            #expect(gap >= 0.9, "the retry came \(gap) s after the 429: Retry-After (1 s) was not honoured")
        }
        #expect(report.http.rateLimited == 1)
    }

    @Test func aRejectedKeyStopsTheBuildWithFewerThanTenRequests() async throws {
        let server = try server(count: 40)
        defer { server.stop() }
        for exercise in server.catalog.exercises { server.setDefaultFault(.status(403), forExercise: exercise.id) }
        let workspace = try TemporaryDirectory()

        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)

        #expect(report.exitStatus == .authRejected)
        #expect(server.stats.imageRequests < 10)
        #expect(report.message.contains("GIFPACK_TEST_KEY"))
        #expect(!report.message.contains(testAPIKey))
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    @Test func theMonthlyQuotaStopsTheBuildAndTheNextRunFetchesOnlyWhatIsMissing() async throws {
        let server = try server(count: 20) { $0.quota = 8 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)

        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .quotaExhausted, "\(first.message)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        let fetchedFirst = Set(server.requestLog.filter { $0.status == 200 && $0.exerciseID != nil }.compactMap(\.exerciseID))
        #expect(!fetchedFirst.isEmpty)

        server.setQuota(100)
        server.resetStats()
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .success, "\(second.message)")
        let requestedSecond = Set(server.requestLog.compactMap(\.exerciseID))
        #expect(requestedSecond.isDisjoint(with: fetchedFirst), "GIFs stored by the first run were fetched again")
        #expect(requestedSecond.count + fetchedFirst.count == 20)
        #expect(second.gifs.skippedFresh == fetchedFirst.count)
    }

    @Test func aRequestBudgetStopsTheBuild() async throws {
        let server = try server(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server, fetch: "  max_requests: 6"), workspace: workspace)
        #expect(report.exitStatus == .quotaExhausted)
        // The budget is claimed as each request reaches curl, so the ones queued behind the window
        // when it ran out are never sent: exactly the budget, list page included.
        #expect(server.stats.totalRequests == 6)
        #expect(server.stats.maxInFlight <= 3)
        #expect(report.stopReason == .requestBudgetSpent(limit: 6))
        #expect(server.stats.imageRequests == 6 - server.stats.listRequests)
        #expect(report.notAttempted?.count == 12 - server.stats.imageRequests, "every exercise not sent is reported as not attempted")
    }

    @Test func aWholeWindowQueuesRequestsBehindTheOnesInFlightAndNeverSendsMoreThanThree() async throws {
        let server = try startFixture(count: 30) { $0.latencyMilliseconds = 15 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .success)
        #expect(report.gifs.downloaded == 30)
        #expect(server.stats.imageRequests == 30, "no request was sent twice")
        #expect(server.stats.maxInFlight <= 3)
        #expect(report.http.maxInFlight == 3)
        #expect(report.http.requests == server.stats.totalRequests)
    }

    @Test func theQuotaReserveStopsTheRequestsQueuedBehindTheWindow() async throws {
        let server = try startFixture(count: 40) {
            $0.quota = 20; $0.latencyMilliseconds = 10
        }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server, fetch: "  quota_reserve: 10"), workspace: workspace)
        #expect(report.exitStatus == .quotaExhausted, "\(report.message)")
        guard case .quotaReserveReached(let remaining, 10)? = report.stopReason else {
            Issue.record("expected the quota reserve to stop the build, got \(String(describing: report.stopReason))")
            return
        }
        // The first answer saying at most 10 remain stops the build; besides it only the requests
        // already in flight (two at most) may have been sent, never the ones queued behind them
        // (their admission sees the stop).
        #expect(remaining <= 10 && remaining >= 8)
        #expect(server.stats.imageRequests >= 10)
        #expect(server.stats.imageRequests <= 12, "requests queued behind the window were sent after the stop")
        #expect(report.notAttempted?.count == 40 - server.stats.imageRequests)
    }

    @Test func theCircuitBreakerEndsABuildAgainstADeadAPI() async throws {
        let server = try server(count: 40)
        defer { server.stop() }
        for exercise in server.catalog.exercises { server.setDefaultFault(.status(500), forExercise: exercise.id) }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server, fetch: "  circuit_breaker: 6"), workspace: workspace)
        #expect(report.exitStatus == .failed)
        guard case .circuitOpen? = report.stopReason else {
            Issue.record("expected the circuit breaker to stop the build, got \(String(describing: report.stopReason))")
            return
        }
        // The sixth failure in a row opens the breaker on curl's thread as it arrives: only the two
        // requests then in flight are still sent, never the ones queued behind the window.
        #expect(server.stats.imageRequests >= 6)
        #expect(server.stats.imageRequests <= 8, "requests queued behind the window were sent after the breaker opened")
        #expect(report.notAttempted != nil)
    }

    @Test func aFailingGIFKeepsTheLastKnownGoodOne() async throws {
        let server = try server(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0", maxMissing: "0")
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success)
        let id = server.catalog.exercises[2].id
        let good = server.catalog.gifBytes(id: id, resolution: 180)!
        server.setDefaultFault(.status(500), forExercise: id)

        let second = try await runBuild(manifest: manifest, workspace: workspace)

        #expect(second.exitStatus == .success, "\(second.message)")
        #expect(second.reusedLastGood.map(\.exerciseID) == [id])
        #expect(second.gifs.reusedLastGood == 1)
        let pack = try #require(try readIndex(workspace.file("dist/index.json")).packs.first)
        #expect(pack.gifEntry(forExercise: id)?.sha256 == sha256Hex(good))
    }

    @Test func missingExercisesWithinMaxMissingPublishWithThePartialStatus() async throws {
        let server = try server(count: 10)
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        server.setDefaultFault(.status(404), forExercise: id)
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server, maxMissing: "10%"), workspace: workspace)
        #expect(report.exitStatus == .partial)
        let pack = try #require(try readIndex(workspace.file("dist/index.json")).packs.first)
        #expect(pack.exercises.first { $0.id == id }?.gif == nil)
        #expect(server.stats.requestsByExercise[id] == 1, "a 404 is not retried")
    }

    @Test(.computes) func retryAfterParsesBothForms() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.parseRetryAfter("2", now: now) == .seconds(2))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: now.addingTimeInterval(30))
        #expect(RetryPolicy.parseRetryAfter(date, now: now) == .seconds(30))
        #expect(RetryPolicy.parseRetryAfter("soon", now: now) == nil)
        var policy = RetryPolicy()
        policy.maxRetryAfter = .seconds(10)
        #expect(policy.retryAfter("3600", now: now) == .seconds(10))
    }

    @Test(.computes) func backoffIsFullJitterWithACap() {
        var policy = RetryPolicy()
        policy.baseDelay = .milliseconds(100)
        policy.maxDelay = .milliseconds(250)
        #expect(policy.delay(beforeAttempt: 2, random: 0.999) < .milliseconds(100))
        #expect(policy.delay(beforeAttempt: 3, random: 0.999) < .milliseconds(200))
        #expect(policy.delay(beforeAttempt: 9, random: 0.999) <= .milliseconds(250))
        #expect(policy.delay(beforeAttempt: 9, random: 0) == .zero)
    }
}

@Suite("Fetch governor", .timeLimit(.minutes(5)))
struct FetchGovernorTests {
    @Test(.computes) func a429ShrinksTheWindowAndSuccessesGrowItBackToTheCap() {
        var settings = FetchSettings()
        settings.concurrency = 3
        let governor = FetchGovernor(settings: settings, requestsAlreadySent: 0, startedAt: .now)
        #expect(governor.window == 3)
        governor.noteRateLimited(coolDown: .milliseconds(1))
        #expect(governor.window == 1)
        governor.noteRateLimited(coolDown: .milliseconds(1))
        #expect(governor.window == 1, "never below one")
        for _ in 0..<FetchGovernor.successesToGrow { governor.noteSuccess() }
        #expect(governor.window == 2)
        for _ in 0..<(FetchGovernor.successesToGrow * 5) { governor.noteSuccess() }
        #expect(governor.window == 3, "never above the cap")
    }

    @Test(.computes) func theBudgetTheDeadlineAndTheQuotaReserveStopScheduling() {
        var settings = FetchSettings()
        settings.maxRequests = 3
        let budget = FetchGovernor(settings: settings, requestsAlreadySent: 1, startedAt: .now)
        #expect(budget.reserveRequest() && budget.reserveRequest())
        #expect(!budget.reserveRequest())
        #expect(budget.stopReason == .requestBudgetSpent(limit: 3))

        var timed = FetchSettings()
        timed.maxDuration = .seconds(1)
        let deadline = FetchGovernor(settings: timed, requestsAlreadySent: 0, startedAt: .now - .seconds(2))
        #expect(!deadline.reserveRequest())
        #expect(deadline.stopReason == .deadlinePassed(limit: 1))

        var reserve = FetchSettings()
        reserve.quotaReserve = 10
        let quota = FetchGovernor(settings: reserve, requestsAlreadySent: 0, startedAt: .now)
        quota.noteQuota(remaining: 11)
        #expect(quota.stopReason == nil)
        quota.noteQuota(remaining: 10)
        #expect(quota.stopReason == .quotaReserveReached(remaining: 10, reserve: 10))
        #expect(quota.stopReason?.exitStatus == .quotaExhausted)
    }

    @Test(.computes) func admissionChecksTheWindowTheCoolDownAndTheBudget() {
        var settings = FetchSettings()
        settings.concurrency = 3
        settings.maxRequests = 4
        let governor = FetchGovernor(settings: settings, requestsAlreadySent: 0, startedAt: .now)
        #expect(governor.admit(inFlight: 2))
        #expect(!governor.admit(inFlight: 3), "a full window admits nothing")
        #expect(governor.requestsSent == 1, "a request turned away by the window claims no budget")
        governor.noteRateLimited(coolDown: .seconds(60))
        #expect(!governor.admit(inFlight: 0), "nothing goes during a cool-down")
        #expect(governor.admit(inFlight: 0, now: .now + .seconds(61)))
        #expect(!governor.admit(inFlight: 1, now: .now + .seconds(61)), "the window shrank to one after the 429")
        #expect(governor.admit(inFlight: 0, now: .now + .seconds(61)))
        #expect(governor.admit(inFlight: 0, now: .now + .seconds(61)))
        #expect(governor.requestsSent == 4)
        #expect(!governor.admit(inFlight: 0, now: .now + .seconds(61)))
        #expect(governor.stopReason == .requestBudgetSpent(limit: 4))
        #expect(FetchGovernor.cap(for: settings) == 3)
        settings.concurrency = 8
        #expect(FetchGovernor.cap(for: settings) == 3, "never more than three in flight")
    }

    @Test(.computes) func aCancelledRequestClosesAdmissionForEveryRequestBehindIt() {
        let governor = FetchGovernor(settings: FetchSettings(), requestsAlreadySent: 0, startedAt: .now)
        #expect(governor.admit(inFlight: 0))
        governor.noteCancelled()
        #expect(!governor.admit(inFlight: 0), "a slot freed by a cancel is not handed on")
        #expect(governor.requestsSent == 1 && governor.stopReason == nil)
    }

    @Test(.computes) func theCircuitOpensAfterConsecutiveFailuresOnly() {
        var settings = FetchSettings()
        settings.circuitBreaker = 3
        let governor = FetchGovernor(settings: settings, requestsAlreadySent: 0, startedAt: .now)
        governor.noteFailure(); governor.noteFailure(); governor.noteSuccess()
        governor.noteFailure(); governor.noteFailure()
        #expect(governor.stopReason == nil)
        governor.noteFailure()
        #expect(governor.stopReason == .circuitOpen(consecutiveFailures: 3))
    }
}
