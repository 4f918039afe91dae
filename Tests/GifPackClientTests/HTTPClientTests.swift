import ExerciseDBFixture
import Foundation
@testable import GifPackHTTP
import Synchronization
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// GifPackHTTP against the loopback fixture server: bodies and digests, compression, connection
/// reuse, the byte cap, every transport failure the fixture can stage, cancellation, shutdown,
/// header handling, and that no error ever shows a request header value.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HTTPClientTests {
    static let secret = "sk-http-test-9a8b7c6d5e4f"

    // MARK: Bodies

    @Test func transfersInFlightAreIntegratedOverTime() {
        var statistics = HTTPClientStatistics()
        let start = ContinuousClock.now
        #expect(statistics.inFlightSeconds(at: start) == 0)
        statistics.setInFlight(3, at: start)
        #expect(abs(statistics.inFlightSeconds(at: start + .seconds(2)) - 6) < 1e-9)
        statistics.setInFlight(1, at: start + .seconds(2))
        #expect(abs(statistics.inFlightSeconds(at: start + .milliseconds(2500)) - 6.5) < 1e-9)
        statistics.setInFlight(0, at: start + .seconds(3))
        #expect(abs(statistics.inFlightSeconds(at: start + .seconds(10)) - 7) < 1e-9, "nothing in flight adds nothing")
    }

    @Test func listIsFetchedZstdCompressedAndDecoded() async throws {
        let (server, client) = try Self.start { $0.exerciseCount = 30 }
        defer { client.shutdown(); server.stop() }
        let url = "\(server.rapidAPIBaseURL)/exercises?limit=30&offset=0"

        let compressed = try await client.data(HTTPRequest(url: url, acceptCompressedBody: true), maxBytes: 1 << 20)
        #expect(compressed.head.status == 200)
        #expect(compressed.head.httpVersion == "1.1")
        #expect(compressed.head.headers["content-encoding"] == "zstd")
        #expect(compressed.head.contentType == "application/json; charset=utf-8")
        let decoded = try JSONDecoder().decode([RapidAPIExercise].self, from: Data(compressed.body))
        #expect(decoded == server.catalog.exercises)

        let plain = try await client.data(HTTPRequest(url: url), maxBytes: 1 << 20)
        #expect(plain.head.headers["content-encoding"] == nil)
        #expect(plain.body == compressed.body)
        let sentLength = try #require(compressed.head.headers["content-length"].flatMap { Int($0) })
        #expect(sentLength < plain.body.count, "the compressed body travelled, not the plain one")
    }

    @Test func downloadStreamsTheGIFWithItsDigestAndPrefix() async throws {
        let (server, client) = try Self.start { $0.gifDimension = 48 }
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[3].id
        let expected = try #require(server.catalog.gifBytes(id: id, resolution: 180))
        let path = directory.file("gif")

        let download = try await client.download(HTTPRequest(url: Self.imageURL(server, id)), to: path, maxBytes: 1 << 20)

        #expect(download.head.status == 200)
        #expect(download.head.contentType == "image/gif")
        #expect(download.head.headers["ETag"] == server.catalog.gifETag(id: id, resolution: 180))
        #expect(download.bytesWritten == Int64(expected.count))
        #expect(download.sha256 == sha256Hex(expected))
        #expect(download.prefix == Array(expected.prefix(512)))
        #expect(download.elapsed > .zero)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == expected)
    }

    /// The builder writes a download over the file of one it did not keep (`DownloadFiles`): a
    /// shorter body leaves no byte of the longer one behind.
    @Test func aDownloadOverALongerFileLeavesExactlyItsBody() async throws {
        let (server, client) = try Self.start { $0.gifDimension = 48 }
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[3].id
        let expected = try #require(server.catalog.gifBytes(id: id, resolution: 180))
        let path = directory.file("gif.part")
        try Data(repeating: 0x5A, count: expected.count * 3).write(to: URL(fileURLWithPath: path))

        let download = try await client.download(HTTPRequest(url: Self.imageURL(server, id)), to: path, maxBytes: 1 << 20)

        #expect(download.sha256 == sha256Hex(expected))
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == expected)
    }

    @Test func anErrorStatusIsAResponseWithItsBody() async throws {
        let (server, client) = try Self.start { $0.apiKey = Self.secret }
        defer { client.shutdown(); server.stop() }
        let response = try await client.data(
            HTTPRequest(
                url: "\(server.rapidAPIBaseURL)/exercises",
                headers: ["X-RapidAPI-Key": "wrong-key"]), maxBytes: 1 << 16)
        #expect(response.head.status == 401)
        #expect(String(decoding: response.body, as: UTF8.self).contains("Invalid API key"))

        let accepted = try await client.data(
            HTTPRequest(
                url: "\(server.rapidAPIBaseURL)/exercises",
                headers: ["x-rapidapi-key": Self.secret]), maxBytes: 1 << 16)
        #expect(accepted.head.status == 200)
    }

    // MARK: Connections

    @Test func concurrentDownloadsReuseConnections() async throws {
        let (server, client) = try Self.start(maxConnections: 4) { $0.exerciseCount = 20 }
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let catalog = server.catalog

        let digests = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for exercise in catalog.exercises {
                group.addTask {
                    let download = try await client.download(
                        HTTPRequest(url: Self.imageURL(server, exercise.id)),
                        to: directory.file(exercise.id), maxBytes: 1 << 20)
                    return (exercise.id, download.sha256)
                }
            }
            return try await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
        }

        #expect(digests.count == 20)
        for exercise in catalog.exercises {
            #expect(digests[exercise.id] == catalog.gifBytes(id: exercise.id).map(sha256Hex))
        }
        let statistics = client.statistics
        #expect(statistics.requestsStarted == 20)
        #expect(statistics.requestsCompleted == 20)
        #expect(statistics.currentlyInFlight == 0)
        #expect(statistics.maxInFlight > 1)
        #expect(statistics.connectionsOpened >= 1 && statistics.connectionsOpened <= 4)
        #expect(server.stats.connectionsAccepted == statistics.connectionsOpened)
        #expect(server.stats.maxInFlight <= 4)
        #expect(statistics.bytesReceived == Int64(catalog.exercises.compactMap { catalog.gifBytes(id: $0.id)?.count }.reduce(0, +)))
    }

    // MARK: Byte cap

    @Test func announcedBodyOverTheCapIsRefused() async throws {
        let (server, client) = try Self.start()
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let path = directory.file("capped")
        let id = server.catalog.exercises[0].id
        let size = try #require(server.catalog.gifBytes(id: id)?.count)

        let error = await Self.error {
            try await client.download(HTTPRequest(url: Self.imageURL(server, id)), to: path, maxBytes: Int64(size - 1))
        }
        #expect(error == .bodyTooLarge(limit: Int64(size - 1)))
        #expect(try Self.fileSize(path) < size, "the partial file is never the whole body")
        #expect(
            await Self.error { try await client.data(HTTPRequest(url: Self.imageURL(server, id)), maxBytes: 10) }
                == .bodyTooLarge(limit: 10))
    }

    /// A compressed body's Content-Length is under the cap, its decoded bytes are not: only the
    /// write callback can stop it.
    @Test func decodedBodyOverTheCapIsStoppedInTheWriteCallback() async throws {
        let (server, client) = try Self.start { $0.exerciseCount = 100 }
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let url = "\(server.rapidAPIBaseURL)/exercises?limit=100&offset=0"
        let plainSize = try await client.data(HTTPRequest(url: url), maxBytes: 1 << 22).body.count
        let head = try await client.data(HTTPRequest(url: url, acceptCompressedBody: true), maxBytes: 1 << 22).head
        let compressedSize = try #require(head.headers["content-length"].flatMap { Int($0) })
        let cap = Int64(compressedSize + (plainSize - compressedSize) / 2)
        try #require(compressedSize < Int(cap) && Int(cap) < plainSize)

        let memoryError = await Self.error {
            try await client.data(HTTPRequest(url: url, acceptCompressedBody: true), maxBytes: cap)
        }
        #expect(memoryError == .bodyTooLarge(limit: cap))

        let path = directory.file("list.json")
        let fileError = await Self.error {
            try await client.download(HTTPRequest(url: url, acceptCompressedBody: true), to: path, maxBytes: cap)
        }
        #expect(fileError == .bodyTooLarge(limit: cap))
        #expect(try Self.fileSize(path) <= Int(cap), "nothing past the cap reaches the file")
    }

    // MARK: Transport failures

    @Test func truncatedBodyIsReported() async throws {
        let (server, client) = try Self.start()
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[1].id
        let size = try #require(server.catalog.gifBytes(id: id)?.count)
        server.schedule([.truncatedBody], forExercise: id)

        let error = await Self.error {
            try await client.download(HTTPRequest(url: Self.imageURL(server, id)), to: directory.file("t"), maxBytes: 1 << 20)
        }
        #expect(error == .truncated(expected: Int64(size), received: Int64(size / 2)))
        #expect(error?.reason == "truncated")

        let retry = try await client.download(HTTPRequest(url: Self.imageURL(server, id)), to: directory.file("t"), maxBytes: 1 << 20)
        #expect(retry.bytesWritten == Int64(size), "the file is truncated again, not appended to")
        #expect(try Self.fileSize(directory.file("t")) == size)
    }

    @Test func connectionResetIsReported() async throws {
        let (server, client) = try Self.start()
        defer { client.shutdown(); server.stop() }
        let id = server.catalog.exercises[2].id
        server.setDefaultFault(.connectionReset, forExercise: id)

        let error = await Self.error { try await client.data(HTTPRequest(url: Self.imageURL(server, id)), maxBytes: 1 << 20) }
        guard case .connectionReset = error else {
            Issue.record("expected connectionReset, got \(String(describing: error))")
            return
        }
        #expect(error?.reason == "connection-reset")
    }

    @Test func lowSpeedAndTotalLimitsTimeOut() async throws {
        let (server, client) = try Self.start { $0.gifDimension = 64 }
        defer { client.shutdown(); server.stop() }
        let id = server.catalog.exercises[0].id

        // Causes, not durations: each limit ends its request with the message naming that limit (the
        // whole body would take minutes at 10 or 100 B/s, so nothing but the limit can end it first).
        server.schedule([.slowBody(bytesPerSecond: 10)], forExercise: id)
        let lowSpeed = HTTPTimeouts(lowSpeedBytesPerSecond: 2000, lowSpeedWindow: .seconds(1))
        let slowError = await Self.error {
            try await client.data(HTTPRequest(url: Self.imageURL(server, id), timeouts: lowSpeed), maxBytes: 1 << 20)
        }
        guard case .timedOut(let message) = slowError else {
            Issue.record("expected timedOut, got \(String(describing: slowError))")
            return
        }
        #expect(message.contains("too slow"), "\(message)")

        server.schedule([.slowBody(bytesPerSecond: 100)], forExercise: id)
        let total = HTTPTimeouts(total: .milliseconds(400), lowSpeedBytesPerSecond: 0)
        let totalError = await Self.error {
            try await client.data(HTTPRequest(url: Self.imageURL(server, id), timeouts: total), maxBytes: 1 << 20)
        }
        #expect(totalError == .timedOut(total.totalMessage(for: Self.imageURL(server, id))), "\(String(describing: totalError))")
        #expect(client.statistics.requestsFailed == 2)
    }

    @Test func unreachableHostAndMalformedURLFail() async throws {
        let (server, client) = try Self.start()
        server.stop()
        defer { client.shutdown() }
        let refusing = try RefusingPort()

        let refused = await Self.error { try await client.data(HTTPRequest(url: "http://127.0.0.1:\(refusing.port)/exercises"), maxBytes: 100) }
        #expect(refused?.reason == "connect-failed")
        for url in ["not a url", "ftp://127.0.0.1/file", "http://", "http://exa mple.com/"] {
            #expect(await Self.error { try await client.data(HTTPRequest(url: url), maxBytes: 100) } == .invalidURL(url))
        }
    }

    /// The fixture ignores `Range`, so a resumed request gets the whole body with 200: curl
    /// refuses to append it, and the partial file keeps its bytes.
    @Test func resumeAgainstAServerWithoutRangesKeepsThePartialFile() async throws {
        let (server, client) = try Self.start()
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[0].id
        let gif = try #require(server.catalog.gifBytes(id: id))
        let path = directory.file("partial")
        try Data(gif.prefix(10)).write(to: URL(fileURLWithPath: path))

        var request = HTTPRequest(url: Self.imageURL(server, id))
        request.resumeFrom = 10
        let error = await Self.error { try await client.download(request, to: path, maxBytes: 1 << 20) }
        #expect(error?.reason == "transport")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == Array(gif.prefix(10)))
    }

    // MARK: Cancellation and shutdown

    @Test func cancellingASlowDownloadReturnsPromptly() async throws {
        let (server, client) = try Self.start { $0.gifDimension = 64 }
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[0].id
        server.schedule([.slowBody(bytesPerSecond: 5)], forExercise: id)

        let task = testTask {
            try await client.download(Self.slowRequest(Self.imageURL(server, id)), to: directory.file("slow"), maxBytes: 1 << 20)
        }
        // Polled, not slept on: on a loaded machine the task may take long to reach curl. The server
        // must have read the request too, or a cancel before it is sent leaves the slow-body fault
        // queued for the request after it.
        try await waitUntil { client.statistics.currentlyInFlight == 1 && server.stats.inFlight == 1 }
        #expect(client.statistics.currentlyInFlight == 1)
        task.cancel()
        let result = await task.result
        // The cause, not a duration: the body would take many minutes at 5 B/s (and the 120 s total limit
        // would end it as a timeout), so a `.cancelled` failure is the cancellation ending it.
        #expect(Self.httpError(result) == .cancelled)
        #expect(client.statistics.requestsCancelled == 1)
        #expect(client.statistics.currentlyInFlight == 0)

        let alreadyCancelled = testTask {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.data(HTTPRequest(url: Self.imageURL(server, id)), maxBytes: 1 << 20)
        }
        #expect(Self.httpError(await alreadyCancelled.result) == .cancelled)

        let after = try await client.data(HTTPRequest(url: Self.imageURL(server, id)), maxBytes: 1 << 20)
        #expect(after.head.status == 200, "the client goes on serving after a cancellation")
    }

    @Test func requestsBeyondTheLimitQueueAndCanBeCancelledThere() async throws {
        let (server, client) = try Self.start(maxConnections: 1) { $0.gifDimension = 64 }
        defer { client.shutdown(); server.stop() }
        let ids = server.catalog.exercises.map(\.id)
        server.schedule([.slowBody(bytesPerSecond: 5)], forExercise: ids[0])

        let running = testTask { try await client.data(Self.slowRequest(Self.imageURL(server, ids[0])), maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyInFlight == 1 && server.stats.inFlight == 1 }
        let queued = testTask { try await client.data(HTTPRequest(url: Self.imageURL(server, ids[1])), maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyQueued == 1 }
        #expect(client.statistics.currentlyInFlight == 1)
        #expect(client.statistics.currentlyQueued == 1)

        queued.cancel()
        #expect(Self.httpError(await queued.result) == .cancelled)
        #expect(client.statistics.currentlyQueued == 0)
        running.cancel()
        #expect(Self.httpError(await running.result) == .cancelled)
        #expect(server.stats.requestsByExercise[ids[1]] == nil, "the queued request never reached the server")

        let next = try await client.data(HTTPRequest(url: Self.imageURL(server, ids[1])), maxBytes: 1 << 20)
        #expect(next.head.status == 200)
        #expect(client.statistics.requestsStarted == 2)
        #expect(client.statistics.maxInFlight == 1)
    }

    @Test func anAdmissionCheckIsAskedAtTheRequestsTurnAndADeclinedRequestIsNeverSent() async throws {
        let (server, client) = try Self.start(maxConnections: 1) { $0.gifDimension = 64 }
        defer { client.shutdown(); server.stop() }
        let ids = server.catalog.exercises.map(\.id)
        server.schedule([.slowBody(bytesPerSecond: 5)], forExercise: ids[0])
        let asked = Mutex<[Int]>([])

        let running = testTask { try await client.data(Self.slowRequest(Self.imageURL(server, ids[0])), maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyInFlight == 1 && server.stats.inFlight == 1 }
        var declined = HTTPRequest(url: Self.imageURL(server, ids[1]))
        declined.admission = HTTPAdmission { inFlight in
            asked.withLock { $0.append(inFlight) }; return false
        }
        var admitted = HTTPRequest(url: Self.imageURL(server, ids[2]))
        admitted.admission = HTTPAdmission { inFlight in
            asked.withLock { $0.append(inFlight) }; return true
        }
        let first = testTask { try await client.data(declined, maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyQueued == 1 }
        let second = testTask { try await client.data(admitted, maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyQueued == 2 }
        // Order, not a window: both requests are queued and nothing has been asked yet; the check
        // below that each was asked with 0 in flight proves they were asked once the slot was freed.
        #expect(asked.withLock { $0 }.isEmpty, "nothing is asked while the only slot is taken")
        #expect(client.statistics.currentlyInFlight == 1)

        running.cancel()  // frees the slot
        #expect(Self.httpError(await running.result) == .cancelled)
        #expect(Self.httpError(await first.result) == .notAdmitted)
        #expect(try await second.value.head.status == 200)
        #expect(asked.withLock { $0 } == [0, 0], "each asked once, in order, when the slot was free")
        #expect(server.stats.requestsByExercise[ids[1]] == nil, "the declined request never reached the server")
        #expect(server.stats.requestsByExercise[ids[2]] == 1)
        let statistics = client.statistics
        #expect(statistics.requestsStarted == 2)
        #expect(statistics.requestsNotAdmitted == 1)
        #expect(statistics.requestsCancelled == 1)
        #expect(statistics.requestsFailed == 0)
        #expect(HTTPError.notAdmitted.reason == "not-admitted")
    }

    /// A build that is cancelled cancels every request, one after another: the first one's cancel
    /// frees its slot, and the next queued request must not take it before its own cancel comes.
    /// `cancelled` is heard before the transfer is dropped, so an admission check can close first.
    @Test func cancelledIsHeardBeforeTheSlotIsFreedSoTheRequestBehindIsNotSent() async throws {
        let (server, client) = try Self.start(maxConnections: 1) { $0.gifDimension = 64 }
        defer { client.shutdown(); server.stop() }
        let ids = server.catalog.exercises.map(\.id)
        server.schedule([.slowBody(bytesPerSecond: 5)], forExercise: ids[0])
        let closed = Mutex(false)
        var slow = Self.slowRequest(Self.imageURL(server, ids[0]))
        slow.admission = HTTPAdmission({ _ in !closed.withLock { $0 } }, cancelled: { closed.withLock { $0 = true } })
        var behind = HTTPRequest(url: Self.imageURL(server, ids[1]))
        behind.admission = HTTPAdmission({ _ in !closed.withLock { $0 } })

        let running = testTask { try await client.data(slow, maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyInFlight == 1 && server.stats.inFlight == 1 }
        let queued = testTask { try await client.data(behind, maxBytes: 1 << 20) }
        try await waitUntil { client.statistics.currentlyQueued == 1 }
        running.cancel()
        #expect(Self.httpError(await running.result) == .cancelled)
        #expect(Self.httpError(await queued.result) == .notAdmitted)
        #expect(server.stats.requestsByExercise[ids[1]] == nil, "the request behind never reached the server")
    }

    @Test func answeredHearsEveryResponseAndFailureBeforeTheNextRequestIsAdmitted() async throws {
        let (server, client) = try Self.start(maxConnections: 1) { $0.gifDimension = 64 }
        defer { client.shutdown(); server.stop() }
        let ids = Array(server.catalog.exercises.map(\.id).prefix(3))
        server.schedule([.truncatedBody], forExercise: ids[1])
        server.schedule([.status(503)], forExercise: ids[2])
        // What the loop thread saw, in order: "admit <id>" when a request is let through and
        // "<id> <what>" when its transfer ends.
        let events = Mutex<[String]>([])
        func request(_ id: String) -> HTTPRequest {
            var request = HTTPRequest(url: Self.imageURL(server, id))
            request.admission = HTTPAdmission(
                { _ in
                    events.withLock { $0.append("admit \(id)") }; return true
                },
                answered: { answer in
                    let what =
                        switch answer {
                        case .response(let head, let prefix, let bytes): "\(head.status) \(String(decoding: prefix.prefix(6), as: UTF8.self)) \(bytes)"
                        case .failed(let error): error.reason
                        }
                    events.withLock { $0.append("\(id) \(what)") }
                })
            return request
        }
        let tasks = ids.map(request).map { request in testTask { try? await client.data(request, maxBytes: 1 << 20) } }
        var bodies: [HTTPDataResponse?] = []
        for task in tasks { bodies.append(await task.value) }
        let size = try #require(bodies[0]).body.count
        #expect(bodies[1] == nil)
        #expect(bodies[2]?.head.status == 503)

        let seen = events.withLock { $0 }
        #expect(seen.count == 6)
        #expect(seen.contains("\(ids[0]) 200 GIF89a \(size)"))
        #expect(seen.contains { $0.hasPrefix("\(ids[1]) ") && !$0.hasPrefix("\(ids[1]) 200") }, "the cut body was heard as a failure: \(seen)")
        #expect(seen.contains { $0.hasPrefix("\(ids[2]) 503 ") })
        // One slot: each answer is heard before the next request is admitted.
        for (index, event) in seen.enumerated() {
            #expect(event.hasPrefix("admit") == index.isMultiple(of: 2), "\(seen)")
        }
    }

    @Test func shutdownFailsPendingAndLaterRequests() async throws {
        let (server, client) = try Self.start { $0.gifDimension = 64 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        server.setDefaultFault(.slowBody(bytesPerSecond: 5), forExercise: id)

        let pending = (0..<3).map { _ in
            testTask { try await client.data(Self.slowRequest(Self.imageURL(server, id)), maxBytes: 1 << 20) }
        }
        try await waitUntil { client.statistics.currentlyInFlight + client.statistics.currentlyQueued == 3 }
        client.shutdown()
        for task in pending { #expect(Self.httpError(await task.result) == .cancelled) }
        #expect(await Self.error { try await client.data(HTTPRequest(url: Self.imageURL(server, id)), maxBytes: 100) } == .cancelled)
        client.shutdown()
    }

    // MARK: Headers and secrets

    @Test func headersAreOrderedAndCaseInsensitive() async throws {
        var headers: HTTPHeaders = ["Accept": "application/json", "X-Trace": "one"]
        headers.append(name: "x-trace", value: "two")
        #expect(headers["ACCEPT"] == "application/json")
        #expect(headers["x-TRACE"] == "one")
        #expect(headers.values(for: "X-TRACE") == ["one", "two"])
        #expect(headers["missing"] == nil)
        headers["X-Trace"] = "three"
        #expect(headers.values(for: "x-trace") == ["three"])
        #expect(headers.map(\.name) == ["Accept", "X-Trace"])
        headers["accept"] = nil
        #expect(headers.count == 1)

        let (server, client) = try Self.start()
        defer { client.shutdown(); server.stop() }
        let response = try await client.data(HTTPRequest(url: Self.imageURL(server, server.catalog.exercises[0].id)), maxBytes: 1 << 20)
        #expect(response.head.headers["CONTENT-TYPE"] == "image/gif")
        #expect(response.head.headers["content-length"] == String(response.body.count))
        #expect(response.head.headers.contains(name: "etag"))
    }

    @Test func noErrorOrDescriptionShowsASentHeaderValue() async throws {
        let (server, client) = try Self.start {
            $0.apiKey = Self.secret; $0.gifDimension = 64
        }
        defer { client.shutdown() }
        let directory = try TemporaryDirectory()
        let ids = server.catalog.exercises.map(\.id)
        let headers: HTTPHeaders = ["X-RapidAPI-Key": Self.secret, "X-RapidAPI-Host": "exercisedb.p.rapidapi.com"]
        func request(_ id: String, _ timeouts: HTTPTimeouts = .init()) -> HTTPRequest {
            HTTPRequest(url: Self.imageURL(server, id), headers: headers, timeouts: timeouts)
        }
        server.schedule([.truncatedBody], forExercise: ids[0])
        server.setDefaultFault(.connectionReset, forExercise: ids[1])
        server.schedule([.slowBody(bytesPerSecond: 50)], forExercise: ids[2])

        var errors: [HTTPError?] = []
        errors.append(await Self.error { try await client.download(request(ids[0]), to: directory.file("a"), maxBytes: 1 << 20) })
        errors.append(await Self.error { try await client.data(request(ids[1]), maxBytes: 1 << 20) })
        errors.append(
            await Self.error {
                try await client.data(request(ids[2], HTTPTimeouts(total: .milliseconds(300))), maxBytes: 1 << 20)
            })
        errors.append(await Self.error { try await client.data(request(ids[3]), maxBytes: 16) })
        errors.append(await Self.error { try await client.download(request(ids[3]), to: directory.file("no/such/dir"), maxBytes: 1 << 20) })
        var leaked = HTTPRequest(url: "\(server.rapidAPIBaseURL)/image", headers: headers)
        leaked.headers.append(name: "X-Bad", value: "\(Self.secret)\r\nInjected: yes")
        errors.append(await Self.error { try await client.data(leaked, maxBytes: 100) })
        // A port nothing listens on (the stopped server's could be handed to another test's server).
        let refusing = try RefusingPort()
        errors.append(
            await Self.error {
                try await client.data(HTTPRequest(url: "http://127.0.0.1:\(refusing.port)/image", headers: headers), maxBytes: 1 << 20)
            })

        #expect(
            errors.map { $0?.reason } == [
                "truncated", "connection-reset", "timeout", "too-large", "file-error",
                "transport", "connect-failed"
            ])
        for error in errors {
            for text in [String(describing: error), String(reflecting: error)] {
                #expect(!text.contains(Self.secret), "an error shows the key: \(text)")
            }
        }
        var dumpedRequest = "", dumpedHeaders = ""
        dump(leaked, to: &dumpedRequest)
        dump(headers, to: &dumpedHeaders)
        let printedRequest = [String(describing: leaked), String(reflecting: leaked), dumpedRequest]
        for text in printedRequest + [String(describing: headers), String(reflecting: headers), dumpedHeaders] {
            #expect(!text.contains(Self.secret), "a description shows the key: \(text)")
            #expect(text.contains("X-RapidAPI-Key"))
        }
        for text in printedRequest {
            #expect(text.contains("X-Bad") && !text.contains("Injected"), "a request shows names, never values")
        }
    }

    /// The head kept is the final one: interim `100 Continue` and redirect heads are dropped,
    /// folded lines joined, trailers after the body ignored, HTTP/2 status lines understood.
    @Test func responseHeadKeepsOnlyTheFinalHead() {
        var collector = ResponseHeadCollector()
        let lines = [
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/2 301\r\n", "location: /elsewhere\r\n", "\r\n",
            "HTTP/2 200\r\n", "content-type: image/gif\r\n", "x-note: first\r\n", "\t second \r\n",
            "Set-Cookie: a=1\r\n", "set-cookie: b=2\r\n", "\r\n"
        ]
        for line in lines { Array(line.utf8).withUnsafeBytes { collector.consume($0) } }
        collector.bodyStarted = true
        Array("x-trailer: late\r\n".utf8).withUnsafeBytes { collector.consume($0) }

        #expect(collector.status == 200)
        #expect(collector.httpVersion == "2")
        #expect(collector.headers["Location"] == nil)
        #expect(collector.headers["Content-Type"] == "image/gif")
        #expect(collector.headers["X-Note"] == "first second")
        #expect(collector.headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(collector.headers["x-trailer"] == nil)
        #expect(collector.headers.count == 4)
    }

    /// Redirect hops keep the request headers only while scheme, host and port stay the same.
    @Test func redirectsKeepHeadersOnlyWithinTheOrigin() {
        var request = HTTPRequest(
            url: "https://exercisedb.p.rapidapi.com/exercises?limit=10",
            headers: ["X-RapidAPI-Key": Self.secret])
        request.followRedirects = true
        let sameOrigin = ["https://exercisedb.p.rapidapi.com/v2/exercises", "https://EXERCISEDB.p.rapidapi.com:443/x"]
        for url in sameOrigin {
            let next = RedirectPolicy.request(following: request, to: url)
            #expect(next.url == url)
            #expect(next.headers["x-rapidapi-key"] == Self.secret, "kept for \(url)")
            #expect(next.followRedirects)
        }
        let elsewhere = [
            "https://cdn.example.com/exercises", "http://exercisedb.p.rapidapi.com/exercises",
            "https://exercisedb.p.rapidapi.com:8443/exercises", "https://exercisedb.p.rapidapi.com.evil.example/"
        ]
        for url in elsewhere {
            #expect(RedirectPolicy.request(following: request, to: url).headers.isEmpty, "stripped for \(url)")
        }

        let location: HTTPHeaders = ["Location": "/next"]
        #expect(RedirectPolicy.follows(status: 302, headers: location, request: request))
        #expect(RedirectPolicy.follows(status: 308, headers: location, request: request))
        #expect(!RedirectPolicy.follows(status: 304, headers: location, request: request))
        #expect(!RedirectPolicy.follows(status: 301, headers: [:], request: request))
        request.followRedirects = false
        #expect(!RedirectPolicy.follows(status: 302, headers: location, request: request))
    }

    // MARK: Helpers

    static func start(maxConnections: Int = 8, _ configure: (inout FixtureConfiguration) -> Void = { _ in })
        throws -> (FixtureServer, HTTPClient)
    {
        let server = try startFixture(count: 12, apiKey: nil) { configuration in
            configuration.gifDimension = 24
            configuration.framesRange = 2...3
            configure(&configuration)
        }
        return (server, try HTTPClient(maxConnections: maxConnections))
    }

    static func imageURL(_ server: FixtureServer, _ id: String) -> String {
        "\(server.rapidAPIBaseURL)/image?exerciseId=\(id)&resolution=180"
    }

    /// The ``HTTPError`` `body` throws, or nil when it succeeds (any other error is an issue).
    static func error<T>(_ body: () async throws -> T) async -> HTTPError? {
        do {
            _ = try await body()
            return nil
        } catch let error as HTTPError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    /// A request for a body dripped at 50 B/s that curl's low-speed limit (1 KiB/s over 30 s by
    /// default) does not end: only the test's cancellation does, however long a busy cooperative
    /// pool keeps the test from getting there (up to the 120 s total).
    static func slowRequest(_ url: String) -> HTTPRequest {
        HTTPRequest(url: url, timeouts: HTTPTimeouts(lowSpeedBytesPerSecond: 1))
    }

    static func httpError<T>(_ result: Result<T, any Error>) -> HTTPError? {
        guard case .failure(let error) = result else { return nil }
        return error as? HTTPError
    }

    /// The file's size; a missing file throws (it must not pass a "smaller than" check).
    static func fileSize(_ path: String) throws -> Int {
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber
        return try #require(size).intValue
    }
}
