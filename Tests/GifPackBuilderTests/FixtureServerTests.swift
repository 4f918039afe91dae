import ExerciseDBFixture
import Foundation
import Glibc
import GifPackGIF
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// The loopback ExerciseDB stand-in, driven over real sockets by /usr/bin/curl (and, for the
/// byte-level cases, by a raw socket): list shapes and paging, image bytes, auth, quota, every
/// fault's observable behaviour, conditional requests, zstd, keep-alive, stats and stopping.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct FixtureServerTests {
    // MARK: Lists

    @Test func rapidAPIListPagesThroughTheWholeCatalog() async throws {
        let server = try startedServer { $0.exerciseCount = 23 }
        defer { server.stop() }
        var collected: [RapidAPIExercise] = []
        for offset in stride(from: 0, to: 30, by: 10) {
            let page = try await curl("\(server.rapidAPIBaseURL)/exercises?limit=10&offset=\(offset)")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "application/json; charset=utf-8")
            collected += try JSONDecoder().decode([RapidAPIExercise].self, from: Data(page.body))
        }
        #expect(collected == server.catalog.exercises)
        #expect(collected.map(\.id) == collected.map(\.id).sorted())
        #expect(collected.allSatisfy { $0.id.count == 4 && Int($0.id) != nil })
        #expect(collected.contains { $0.name == "45° side bend" })
        let ids = collected.compactMap { Int($0.id) }
        #expect(zip(ids, ids.dropFirst()).contains { $1 - $0 > 1 }, "ids have gaps")

        let defaultPage = try decodeList(await curl("\(server.rapidAPIBaseURL)/exercises"))
        #expect(defaultPage.count == 10)
        let pastTheEnd = try decodeList(await curl("\(server.rapidAPIBaseURL)/exercises?offset=500"))
        #expect(pastTheEnd.isEmpty)
        #expect(try await curl("\(server.rapidAPIBaseURL)/exercises?limit=ten").status == 422)
    }

    @Test func listLimitIsClampedToTheMaximumPageSize() async throws {
        let server = try startedServer {
            $0.exerciseCount = 20
            $0.maxPageSize = 8
        }
        defer { server.stop() }
        #expect(try await decodeList(curl("\(server.rapidAPIBaseURL)/exercises?limit=50")).count == 8)
        let v1 =
            try JSONSerialization.jsonObject(
                with: Data(await curl("\(server.v1BaseURL)/exercises?limit=50").body)) as? [String: Any]
        #expect((v1?["data"] as? [Any])?.count == 8)
    }

    @Test func v1ListHasTheEnvelopeAndFollowableLinks() async throws {
        let server = try startedServer { $0.exerciseCount = 12 }
        defer { server.stop() }
        var url: String? = "\(server.v1BaseURL)/exercises?limit=5&offset=0"
        var collected: [V1Exercise] = []
        var pages = 0
        while let next = url {
            let response = try await curl(next)
            #expect(response.status == 200)
            let envelope = try JSONDecoder().decode(V1Envelope.self, from: Data(response.body))
            #expect(envelope.success)
            #expect(envelope.metadata.totalExercises == 12)
            #expect(envelope.metadata.totalPages == 3)
            #expect(envelope.metadata.currentPage == pages + 1)
            #expect((envelope.metadata.previousPage == nil) == (pages == 0))
            collected += envelope.data
            url = envelope.metadata.nextPage
            pages += 1
        }
        #expect(pages == 3)
        #expect(collected == server.catalog.v1Exercises)
        #expect(collected.allSatisfy { $0.exerciseId.count == 7 && $0.instructions.first?.hasPrefix("Step:1 ") == true })
        #expect(collected.allSatisfy { $0.gifUrl == "\(server.rapidAPIBaseURL)/media/\($0.exerciseId).gif" })
        #expect(Set(collected.map(\.name)) == Set(server.catalog.exercises.map(\.name)))
    }

    @Test func zstdListsDecodeToTheSameJSON() async throws {
        let server = try startedServer { $0.exerciseCount = 30 }
        defer { server.stop() }
        let url = "\(server.rapidAPIBaseURL)/exercises?limit=30"
        let plain = try await curl(url)
        let compressed = try await curl(url, "--compressed")
        #expect(plain.headers["content-encoding"] == nil)
        #expect(compressed.headers["content-encoding"] == "zstd")
        #expect(Int(compressed.headers["content-length"] ?? "") ?? .max < plain.body.count)
        #expect(compressed.body == plain.body)
        let onlyGzip = try await curl(url, "-H", "Accept-Encoding: gzip, zstd;q=0")
        #expect(onlyGzip.headers["content-encoding"] == nil)
        let gif = try await curl(imageURL(server, id: server.catalog.exercises[0].id), "--compressed")
        #expect(gif.headers["content-encoding"] == nil)
    }

    // MARK: Images

    @Test func imagesServeTheCatalogBytes() async throws {
        let server = try startedServer { $0.exerciseCount = 14 }
        defer { server.stop() }
        let catalog = server.catalog
        for exercise in catalog.exercises.prefix(8) {
            let response = try await curl(imageURL(server, id: exercise.id))
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "image/gif")
            #expect(response.body == catalog.gifBytes(id: exercise.id))
            #expect(response.headers["etag"] == catalog.gifETag(id: exercise.id))
            #expect(response.headers["last-modified"] != nil)
        }
        for (twin, original) in zip(catalog.v1Exercises, catalog.exercises).prefix(3) {
            let response = try await curl(twin.gifUrl)
            #expect(response.status == 200 && response.body == catalog.gifBytes(id: original.id))
        }
        // duplicateEvery 7: the 7th exercise reuses an earlier exercise's exact bytes.
        let seventh = try #require(catalog.gifBytes(id: catalog.exercises[6].id))
        #expect(catalog.exercises.prefix(6).contains { catalog.gifBytes(id: $0.id) == seventh })
        #expect(catalog.distinctGIFs().count == 12)
        #expect(try GIFInspector.inspect(bytes: seventh).width == 16)
    }

    @Test func distinctGIFsCapsTheGIFsMadeAndLaterExercisesShareThem() async throws {
        let server = try startedServer {
            $0.exerciseCount = 60
            $0.distinctGIFs = 5
        }
        defer { server.stop() }
        let catalog = server.catalog
        #expect(catalog.exercises.count == 60)
        #expect(catalog.distinctGIFs().count == 5)
        let last = try await curl(imageURL(server, id: catalog.exercises[59].id))
        #expect(last.status == 200)
        #expect(catalog.exercises.prefix(5).contains { catalog.gifBytes(id: $0.id) == last.body })
        var invalid = FixtureConfiguration()
        invalid.distinctGIFs = 0
        #expect(throws: FixtureError.self) { try FixtureServer(invalid) }
    }

    @Test func gifSizesPadEveryDistinctGIFToADrawnSizeAndItStillDecodes() async throws {
        let sizes = [3_000, 4_500, 6_000]
        let server = try startedServer {
            $0.exerciseCount = 12
            $0.gifSizes = sizes
        }
        defer { server.stop() }
        let catalog = server.catalog
        let plain = try startedServer { $0.exerciseCount = 12 }
        defer { plain.stop() }
        for exercise in catalog.exercises {
            let bytes = try #require(catalog.gifBytes(id: exercise.id))
            // The fixture's 16 px GIFs are far below every size drawn: each is padded to exactly one of them.
            #expect(sizes.contains(bytes.count), "\(bytes.count)")
            let padded = try GIFInspector.inspect(bytes: bytes)
            let original = try GIFInspector.inspect(bytes: try #require(plain.catalog.gifBytes(id: exercise.id)))
            #expect(padded == original, "the comment extensions change no frame, size or timing")
            let served = try await curl(imageURL(server, id: exercise.id))
            #expect(served.status == 200 && served.body == bytes)
        }
        #expect(Set(catalog.exercises.compactMap { catalog.gifBytes(id: $0.id)?.count }).count > 1, "sizes are drawn, not one")
    }

    @Test func resolutionScalesAndIsCappedByThePlan() async throws {
        let server = try startedServer {
            $0.exerciseCount = 3
            $0.planMaxResolution = 360
        }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        let at360 = try await curl(imageURL(server, id: id, resolution: 360))
        let at1080 = try await curl(imageURL(server, id: id, resolution: 1080))
        #expect(at360.status == 200 && at1080.status == 200)
        #expect(try GIFInspector.inspect(bytes: at360.body).width == 32)
        #expect(at1080.body == at360.body)
        #expect(server.catalog.gifBytes(id: id, resolution: 720) == at360.body)
    }

    /// Every resolution is drawn at its own size (a different GIF, not a copy), and each plan's
    /// ceiling answers a higher resolution with the ceiling's GIF, still 200.
    @Test func eachPlanServesItsResolutionsAndAnswersHigherOnesAtItsCeiling() async throws {
        #expect(FixturePlan.allCases.map(\.maxResolution) == [180, 360, 1080, 1080])
        for plan in FixturePlan.allCases {
            let server = try startedServer {
                $0.exerciseCount = 2
                $0.planMaxResolution = plan.maxResolution
            }
            defer { server.stop() }
            let id = server.catalog.exercises[0].id
            var widths: [Int: Int] = [:]
            var bodies: [Int: [UInt8]] = [:]
            for resolution in FixtureCatalog.resolutions {
                let answer = try await curl(imageURL(server, id: id, resolution: resolution))
                #expect(answer.status == 200, "\(plan) \(resolution)")
                widths[resolution] = try GIFInspector.inspect(bytes: answer.body).width
                bodies[resolution] = answer.body
            }
            for resolution in FixtureCatalog.resolutions {
                let served = min(resolution, plan.maxResolution)
                #expect(widths[resolution] == 16 * served / 180, "\(plan) asked \(resolution)")
                #expect(bodies[resolution] == bodies[served])
            }
            if plan.maxResolution >= 360 { #expect(bodies[360] != bodies[180]) }
        }
    }

    @Test func imageParametersAreValidated() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let base = server.rapidAPIBaseURL
        #expect(try await curl("\(base)/image?resolution=180").status == 422)
        #expect(try await curl("\(base)/image?exerciseId=abc&resolution=180").status == 422)
        #expect(try await curl("\(base)/image?exerciseId=0001").status == 422)
        #expect(try await curl("\(base)/image?exerciseId=0001&resolution=200").status == 422)
        #expect(try await curl("\(base)/image?exerciseId=9999&resolution=180").status == 404)
        #expect(try await curl("\(base)/media/nope123.gif").status == 404)
        #expect(try await curl("\(base)/elsewhere").status == 404)
        #expect(try await curl("\(base)/image?exerciseId=0001&resolution=180", "-X", "DELETE").status == 405)
        let head = try await curl(imageURL(server, id: server.catalog.exercises[0].id), "-I")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(Int(head.headers["content-length"] ?? "") == server.catalog.gifBytes(id: server.catalog.exercises[0].id)?.count)
    }

    // MARK: Auth and quota

    @Test func rapidAPIRoutesRequireTheKey() async throws {
        let server = try startedServer {
            $0.exerciseCount = 3
            $0.apiKey = "secret"
        }
        defer { server.stop() }
        let url = imageURL(server, id: server.catalog.exercises[0].id)
        let missing = try await curl(url)
        #expect(missing.status == 401)
        #expect(missing.text.contains("Invalid API key"))
        #expect(try await curl(url, "-H", "X-RapidAPI-Key: wrong").status == 401)
        #expect(try await curl("\(server.rapidAPIBaseURL)/exercises").status == 401)
        #expect(try await curl(url, "-H", "x-rapidapi-key: secret").status == 200)
        #expect(try await curl("\(server.v1BaseURL)/exercises").status == 200)
        #expect(try await curl(server.catalog.v1Exercises[0].gifUrl).status == 200)
    }

    @Test func quotaIsSpentByImageRequestsAndReported() async throws {
        let server = try startedServer {
            $0.exerciseCount = 3
            $0.quota = 2
        }
        defer { server.stop() }
        let url = imageURL(server, id: server.catalog.exercises[0].id)
        let first = try await curl(url)
        #expect(first.headers["x-ratelimit-requests-limit"] == "2")
        #expect(first.headers["x-ratelimit-requests-remaining"] == "1")
        let list = try await curl("\(server.rapidAPIBaseURL)/exercises")
        #expect(list.status == 200 && list.headers["x-ratelimit-requests-remaining"] == "1")
        #expect(try await curl(url).headers["x-ratelimit-requests-remaining"] == "0")
        let exhausted = try await curl(url)
        #expect(exhausted.status == 429)
        #expect(exhausted.text.contains("MONTHLY quota"))
        #expect(server.quotaRemaining == 0)
    }

    // MARK: Faults

    @Test func scheduledFaultsAreConsumedInOrder() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[1].id
        server.schedule([.status(500), .status(502), .status(404)], forExercise: id)
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await curl(imageURL(server, id: id)).status) }
        #expect(statuses == [500, 502, 404, 200])

        server.setDefaultFault(.status(503), forExercise: id)
        server.schedule([.status(403)], forExercise: id)
        var persistent: [Int] = []
        for _ in 0..<3 { persistent.append(try await curl(imageURL(server, id: id)).status) }
        #expect(persistent == [403, 503, 503])
        server.setDefaultFault(nil, forExercise: id)
        #expect(try await curl(imageURL(server, id: id)).status == 200)

        // A fault set through the v1 id reaches the RapidAPI twin and vice versa.
        server.schedule([.status(502)], forExercise: server.catalog.v1Exercises[1].exerciseId)
        let gateway = try await curl(imageURL(server, id: id))
        #expect(gateway.status == 502 && gateway.text.contains("unreachable"))
        server.schedule([.status(500)], forExercise: id)
        #expect(try await curl(server.catalog.v1Exercises[1].gifUrl).status == 500)
    }

    @Test func htmlWith200AndWrongContentTypeAndNotAGIF() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        let gif = try #require(server.catalog.gifBytes(id: id))
        server.schedule([.htmlWith200, .wrongContentType, .notAGIF], forExercise: id)

        let html = try await curl(imageURL(server, id: id))
        #expect(html.status == 200)
        #expect(html.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(html.text.hasPrefix("<!DOCTYPE html>") && html.text.contains("maintenance"))

        let octets = try await curl(imageURL(server, id: id))
        #expect(octets.status == 200)
        #expect(octets.headers["content-type"] == "application/octet-stream")
        #expect(octets.body == gif)

        let png = try await curl(imageURL(server, id: id))
        #expect(png.status == 200 && png.headers["content-type"] == "image/gif")
        #expect(png.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(throws: GIFRejection.notAGIF) { try GIFInspector.inspect(bytes: png.body) }
    }

    @Test func truncatedBodyAnnouncesTheFullLengthAndCloses() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        let gif = try #require(server.catalog.gifBytes(id: id))
        server.schedule([.truncatedBody], forExercise: id)
        let response = try await curl(imageURL(server, id: id))
        #expect(response.exitCode == 18, "curl: partial file")
        #expect(response.headers["content-length"] == String(gif.count))
        #expect(response.body == Array(gif.prefix(gif.count / 2)))
        #expect(try await curl(imageURL(server, id: id)).body == gif)
    }

    @Test func tooManyRequestsCarriesRetryAfterInBothForms() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        server.schedule(
            [
                .tooManyRequests(retryAfter: .seconds(7)),
                .tooManyRequests(retryAfter: .httpDate(secondsFromNow: 120)),
                .tooManyRequests(retryAfter: nil),
                .monthlyQuotaExceeded
            ], forExercise: id)
        let seconds = try await curl(imageURL(server, id: id))
        #expect(seconds.status == 429 && seconds.headers["retry-after"] == "7")
        #expect(seconds.text.contains("rate limit per second"))

        let asked = Date()
        let dated = try await curl(imageURL(server, id: id))
        let answered = Date()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = try #require(formatter.date(from: dated.headers["retry-after"] ?? ""))
        // 120 s after the server answered (whole seconds), however long this task then waited to resume.
        #expect(date.timeIntervalSince(asked) > 120 - 5 && date.timeIntervalSince(answered) < 120 + 5)

        let bare = try await curl(imageURL(server, id: id))
        #expect(bare.status == 429 && bare.headers["retry-after"] == nil)
        let monthly = try await curl(imageURL(server, id: id))
        #expect(monthly.status == 429 && monthly.text.contains("MONTHLY quota"))
    }

    @Test func slowBodyIsDripped() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        let gif = try #require(server.catalog.gifBytes(id: id))
        let rate = gif.count * 3  // about a third of a second
        server.schedule([.slowBody(bytesPerSecond: rate)], forExercise: id)
        let started = Date()
        let slow = try await curl(imageURL(server, id: id))
        let elapsed = Date().timeIntervalSince(started)
        #expect(slow.body == gif)
        #expect(elapsed >= 0.25, "took \(elapsed) s")
    }

    @Test func connectionResetGivesNoResponse() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        server.schedule([.connectionReset], forExercise: id)
        let reset = try await curl(imageURL(server, id: id))
        #expect([52, 56].contains(reset.exitCode), "curl exit \(reset.exitCode)")
        #expect(reset.status == 0)
        #expect(server.stats.statusCounts[0] == 1)
        #expect(try await curl(imageURL(server, id: id)).status == 200)
    }

    @Test func corruptFramePlacesTheFrameOffScreen() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        server.schedule([.corruptFrame], forExercise: id)
        let corrupt = try await curl(imageURL(server, id: id))
        #expect(corrupt.status == 200 && corrupt.headers["content-type"] == "image/gif")
        #expect(corrupt.body.count == server.catalog.gifBytes(id: id)?.count)
        #expect {
            try GIFInspector.inspect(bytes: corrupt.body)
        } throws: { error in
            guard case GIFRejection.badFrame(let message) = error else { return false }
            return message.contains("outside")
        }
    }

    // MARK: Conditional requests and upstream changes

    @Test func ifNoneMatchAndIfModifiedSinceGive304() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        let url = imageURL(server, id: id)
        let first = try await curl(url)
        let etag = try #require(first.headers["etag"])
        let lastModified = try #require(first.headers["last-modified"])

        let unchanged = try await curl(url, "-H", "If-None-Match: \(etag)")
        #expect(unchanged.status == 304 && unchanged.body.isEmpty)
        #expect(unchanged.headers["etag"] == etag)
        #expect(try await curl(url, "-H", "If-Modified-Since: \(lastModified)").status == 304)
        #expect(try await curl(url, "-H", "If-None-Match: \"other\"").status == 200)
        #expect(server.stats.notModified == 2)

        let replacement = try GIFSynthesizer.animatedGIF(width: 8, height: 8, frames: 2, colors: 2, seed: 99)
        server.replaceGIF(id: id, with: replacement)
        let changed = try await curl(url, "-H", "If-None-Match: \(etag)")
        #expect(changed.status == 200 && changed.body == replacement)
        #expect(changed.headers["etag"] != etag)
        #expect(try await curl(server.catalog.v1Exercises[0].gifUrl).body == replacement)
        #expect(server.catalog.gifBytes(id: id) == replacement)
    }

    // MARK: Connections, concurrency and stats

    @Test func maxInFlightSeesParallelRequests() async throws {
        let server = try startedServer {
            $0.exerciseCount = 3
            $0.latencyMilliseconds = 500
        }
        defer { server.stop() }
        let urls = server.catalog.exercises.map { imageURL(server, id: $0.id) }
        let result = try await curl(
            [
                "--parallel", "--parallel-immediate", "--parallel-max", "3", "-o", "/dev/null", "-o", "/dev/null",
                "-o", "/dev/null", "-w", "%{http_code}\n"
            ] + urls, includeHeaders: false)
        #expect(result.text.split(separator: "\n") == ["200", "200", "200"])
        let stats = await settledStats(server)
        #expect(stats.maxInFlight == 3)
        #expect(stats.imageRequests == 3)
        #expect(stats.connectionsAccepted == 3)
    }

    @Test func keepAliveReusesOneConnectionUnlessClosed() async throws {
        let server = try startedServer { $0.exerciseCount = 4 }
        defer { server.stop() }
        let urls = server.catalog.exercises.map { imageURL(server, id: $0.id) }
        let sink = Array(repeating: ["-o", "/dev/null"], count: urls.count).flatMap { $0 }
        _ = try await curl(sink + urls, includeHeaders: false)
        #expect(server.stats.connectionsAccepted == 1)
        #expect(server.stats.imageRequests == 4)
        server.resetStats()
        _ = try await curl(sink + ["-H", "Connection: close"] + urls, includeHeaders: false)
        #expect(server.stats.connectionsAccepted == 4)
    }

    @Test func pipelinedAndMalformedRequestsOverARawSocket() throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let list = "GET /exercises?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n"
        let replies = try rawExchange(port: server.port, send: list + list + "GET /exercises HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(replies.components(separatedBy: "HTTP/1.1 200 OK").count == 4)
        #expect(replies.contains("Connection: close"))
        let garbage = try rawExchange(port: server.port, send: "NONSENSE\r\n\r\n")
        #expect(garbage.hasPrefix("HTTP/1.1 400 Bad Request"))
    }

    @Test func statsCountAndResetOverHTTP() async throws {
        let server = try startedServer { $0.exerciseCount = 3 }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        _ = try await curl("\(server.rapidAPIBaseURL)/exercises")
        _ = try await curl(imageURL(server, id: id))
        _ = try await curl(imageURL(server, id: id))
        _ = try await curl("\(server.rapidAPIBaseURL)/image?exerciseId=9999&resolution=180")
        let stats = await settledStats(server)
        #expect(stats.totalRequests == 4 && stats.listRequests == 1 && stats.imageRequests == 3)
        #expect(stats.requestsByExercise == [id: 2, "9999": 1])
        #expect(stats.statusCounts == [200: 3, 404: 1])
        #expect(stats.bytesSent > 2 * (server.catalog.gifBytes(id: id)?.count ?? 0))
        #expect(stats.inFlight == 0 && stats.maxInFlight == 1)

        let overHTTP = try JSONDecoder().decode(FixtureStats.self, from: Data(await curl("\(server.rapidAPIBaseURL)/__stats").body))
        #expect(overHTTP == server.stats, "control routes are not counted")
        #expect(try await curl("\(server.rapidAPIBaseURL)/__reset", "-X", "POST").status == 200)
        #expect(server.stats.totalRequests == 0 && server.stats.requestsByExercise.isEmpty)
        _ = try await curl(imageURL(server, id: id))
        _ = await settledStats(server)
        server.resetStats()
        #expect(server.stats == FixtureStats())
    }

    @Test func stopIsPromptDuringSlowResponsesAndTheServerCanRestart() async throws {
        let server = try startedServer {
            $0.exerciseCount = 3
            // Long enough that a poll starved of the cooperative pool still finds the request in
            // flight; stop() ends it at once.
            $0.latencyMilliseconds = 120_000
        }
        let url = imageURL(server, id: server.catalog.exercises[0].id)
        let client = try ChildProcess("/usr/bin/curl", ["-s", "-o", "/dev/null", url])
        // A loaded machine can take seconds to start curl.
        try await waitUntil(deadline: .seconds(30)) { server.stats.inFlight != 0 }
        try #require(server.stats.inFlight == 1)
        let started = Date()
        server.stop()
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(await client.exitStatus() != 0)
        #expect(try await curl(url).exitCode == 7, "connection refused once stopped")

        server.setLatency(milliseconds: 0)
        try server.start()
        defer { server.stop() }
        #expect(try await curl(imageURL(server, id: server.catalog.exercises[0].id)).status == 200)
        #expect(throws: FixtureError.alreadyRunning) { try server.start() }
    }

    @Test func invalidConfigurationIsRejectedWithTheField() {
        var configuration = FixtureConfiguration()
        configuration.planMaxResolution = 500
        #expect(
            throws: FixtureError.invalidConfiguration(
                field: "planMaxResolution", reason: "must be one of [180, 360, 720, 1080], got 500")
        ) {
            try FixtureServer(configuration)
        }
    }

    @Test func generationIsDeterministicPerSeed() throws {
        var configuration = FixtureConfiguration()
        configuration.exerciseCount = 6
        configuration.gifDimension = 8
        let first = try FixtureServer(configuration).catalog
        let second = try FixtureServer(configuration).catalog
        configuration.seed = 2
        let other = try FixtureServer(configuration).catalog
        #expect(first.exercises == second.exercises && first.v1Exercises == second.v1Exercises)
        #expect(first.distinctGIFs() == second.distinctGIFs())
        #expect(first.exercises != other.exercises)
    }

    @Test(.enabled(if: RealSample.has("images.csv"), RealSample.missing))
    func realDataIsServedWhenAvailable() async throws {
        let server = try startedServer { $0.realDataDirectory = RealSample.directory }
        defer { server.stop() }
        let catalog = server.catalog
        let list = try decodeList(await curl("\(server.rapidAPIBaseURL)/exercises?limit=100"))
        #expect(list == Array(catalog.exercises.prefix(100)))
        let id = catalog.exercises[0].id
        let gif = try await curl(imageURL(server, id: id))
        #expect(gif.status == 200 && gif.body == catalog.gifBytes(id: id))
        #expect(try GIFInspector.inspect(bytes: gif.body).width == 180)
        let v1 = try await curl(catalog.v1Exercises[0].gifUrl)
        #expect(v1.status == 200 && v1.body == catalog.gifBytes(id: catalog.v1Exercises[0].exerciseId))
        #expect(catalog.distinctGIFs().count <= catalog.exercises.count + catalog.v1Exercises.count)
    }
}

// MARK: - Helpers

private func startedServer(_ configure: (inout FixtureConfiguration) -> Void) throws -> FixtureServer {
    try startFixture(apiKey: nil) { configuration in
        configuration.gifDimension = 16
        configuration.framesRange = 2...3
        configure(&configuration)
    }
}

/// The stats once every response has been fully written: a client can finish reading a
/// response a moment before the server's thread settles `inFlight`.
private func settledStats(_ server: FixtureServer) async -> FixtureStats {
    try? await waitUntil(deadline: .seconds(2), every: .milliseconds(1)) { server.stats.inFlight == 0 }
    return server.stats
}

private func imageURL(_ server: FixtureServer, id: String, resolution: Int = 180) -> String {
    "\(server.rapidAPIBaseURL)/image?exerciseId=\(id)&resolution=\(resolution)"
}

private func decodeList(_ response: CurlResponse) throws -> [RapidAPIExercise] {
    try JSONDecoder().decode([RapidAPIExercise].self, from: Data(response.body))
}

private struct V1Envelope: Decodable {
    struct Metadata: Decodable {
        let totalExercises: Int
        let totalPages: Int
        let currentPage: Int
        let previousPage: String?
        let nextPage: String?
    }

    let success: Bool
    let metadata: Metadata
    let data: [V1Exercise]
}

/// What one curl run produced: its exit code and, with `-i`, the parsed status, headers and body.
private struct CurlResponse {
    var exitCode: Int32
    var status = 0
    var headers: [String: String] = [:]
    var body: [UInt8] = []

    var text: String { String(decoding: body, as: UTF8.self) }
}

private func curl(_ url: String, _ options: String...) async throws -> CurlResponse {
    try await curl(options + [url])
}

/// Runs /usr/bin/curl; with `includeHeaders`, parses the `-i` output of a single transfer.
private func curl(_ arguments: [String], includeHeaders: Bool = true) async throws -> CurlResponse {
    let (status, bytes, _) = try await runCapturing("/usr/bin/curl", ["-s", "--max-time", "10"] + (includeHeaders ? ["-i"] : []) + arguments)
    var response = CurlResponse(exitCode: status)
    guard includeHeaders else {
        response.body = bytes
        return response
    }
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let end = (0...max(0, bytes.count - 4)).first(where: { bytes.count >= 4 && Array(bytes[$0..<$0 + 4]) == separator })
    else { return response }
    let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    response.status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        response.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
            .trimmingCharacters(in: .whitespaces)
    }
    response.body = Array(bytes[(end + 4)...])
    return response
}

/// Sends `request` bytes on a fresh TCP connection and reads until the server closes it.
private func rawExchange(port: Int, send request: String) throws -> String {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    try #require(connected == 0)
    let bytes = Array(request.utf8)
    try #require(bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) } == bytes.count)
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { break }
        received += chunk[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
}
