import GIFSynthesis
import Foundation
import GifPackGIF

/// Maps a request to its response: the RapidAPI routes (`/exercises`, `/image`, keyed), the v1
/// routes (`/api/v1/exercises`, `/media/<id>.gif`, open), and the control routes (`/__stats`,
/// `/__reset`). Pure apart from the shared state it reads and the faults/quota it consumes; the
/// connection handler does the timing and the writing.
///
/// ```swift
/// let routed = router.route(request)
/// routed.response.status   // e.g. 200
/// ```
struct FixtureRouter: Sendable {
    static let jsonType = "application/json; charset=utf-8"

    let configuration: FixtureConfiguration
    let state: FixtureState
    let faults: FaultBook
    let stats: StatsRecorder

    /// Control routes are neither delayed nor counted.
    static func isControl(_ request: HTTPRequest) -> Bool {
        request.path == "/__stats" || request.path == "/__reset"
    }

    func route(_ request: HTTPRequest) -> RoutedResponse {
        if FixtureRouter.isControl(request) { return control(request) }
        var routed = RoutedResponse(response: dataResponse(request), kind: kind(of: request))
        if let limit = state.quotaLimit {
            routed.response.addHeader("x-ratelimit-requests-limit", String(limit))
            routed.response.addHeader("x-ratelimit-requests-remaining", String(state.quotaRemaining ?? 0))
        }
        if request.method == "HEAD" { routed.response.omitsBody = true }
        return routed
    }

    /// The response for a request the connection could not even parse.
    static func rejection(status: Int) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: jsonType,
            body: GatewayBodies.message(HTTPResponse.reasonPhrase(for: status)))
    }

    static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, contentType: jsonType, body: body)
    }

    private func kind(of request: HTTPRequest) -> StatsRecorder.Kind {
        switch request.path {
        case "/exercises", "/api/v1/exercises": return .list
        case "/image": return .image(id: request.query["exerciseId"])
        default: return mediaID(request.path).map { .image(id: $0) } ?? .other
        }
    }

    /// `<id>` of `/media/<id>.gif`.
    private func mediaID(_ path: String) -> String? {
        guard path.hasPrefix("/media/"), path.hasSuffix(".gif"), path.count > 11 else { return nil }
        return String(path.dropFirst(7).dropLast(4))
    }

    private func dataResponse(_ request: HTTPRequest) -> HTTPResponse {
        let media = mediaID(request.path)
        guard ["/exercises", "/image", "/api/v1/exercises"].contains(request.path) || media != nil else {
            return FixtureRouter.json(404, GatewayBodies.message("Endpoint '\(request.path)' does not exist"))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = FixtureRouter.json(405, GatewayBodies.forStatus(405))
            response.addHeader("Allow", "GET, HEAD")
            return response
        }
        switch request.path {
        case "/exercises": return authorizationFailure(request) ?? rapidAPIList(request)
        case "/image": return authorizationFailure(request) ?? rapidAPIImage(request)
        case "/api/v1/exercises": return v1List(request)
        default: return v1Media(id: media ?? "", request: request)
        }
    }

    /// 401 unless the configured key (if any) came in `X-RapidAPI-Key`.
    private func authorizationFailure(_ request: HTTPRequest) -> HTTPResponse? {
        guard let key = configuration.apiKey, request.header("x-rapidapi-key") != key else { return nil }
        return FixtureRouter.json(401, GatewayBodies.invalidKey)
    }

    private func control(_ request: HTTPRequest) -> RoutedResponse {
        let response: HTTPResponse
        switch (request.path, request.method) {
        case ("/__stats", "GET"):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let body = (try? encoder.encode(stats.snapshot)).map { [UInt8]($0) } ?? []
            response = FixtureRouter.json(200, body)
        case ("/__reset", "POST"):
            stats.reset()
            response = FixtureRouter.json(200, Array(#"{"reset":true}"#.utf8))
        default:
            var refused = FixtureRouter.json(405, GatewayBodies.forStatus(405))
            refused.addHeader("Allow", request.path == "/__stats" ? "GET" : "POST")
            response = refused
        }
        return RoutedResponse(response: response, kind: .other)
    }
}

extension FixtureRouter {
    /// `GET /exercises?limit=&offset=`: a bare JSON array of RapidAPI exercises.
    func rapidAPIList(_ request: HTTPRequest) -> HTTPResponse {
        let page: PageRequest
        do {
            page = try PageRequest(query: request.query, maxPageSize: configuration.maxPageSize)
        } catch {
            return FixtureRouter.json(422, GatewayBodies.message(error.message))
        }
        var exercises = state.catalog.exercises
        if let listed = state.listedCount, listed < exercises.count { exercises = Array(exercises.prefix(listed)) }
        if let fault = state.listFault {
            return faultyRapidAPIList(fault, page: page, exercises: exercises, request: request)
        }
        let range = page.range(in: exercises.count)
        return state.listPage(.init(range: range, compressed: request.accepts(encoding: "zstd"))) {
            listResponse(encoding: Array(exercises[range]), for: request, nesting: configuration.recordNesting)
        }
    }

    private func faultyRapidAPIList(
        _ fault: ListFault, page: PageRequest, exercises: [RapidAPIExercise],
        request: HTTPRequest
    ) -> HTTPResponse {
        let key = request.header("x-rapidapi-key") ?? ""
        switch fault {
        case .echoKeyInErrorBody(let status):
            return FixtureRouter.json(status, GatewayBodies.message("bad key \(key)"))
        case .echoKeyInRecord:
            let records = exercises[page.range(in: exercises.count)].map { ExtendedExercise(exercise: $0, field: "note", value: "echo: \(key)") }
            return listResponse(encoding: Array(records), for: request)
        case .endless(let paddingBytes):
            let template =
                exercises.first
                ?? RapidAPIExercise(
                    bodyPart: "waist", equipment: "body weight", id: "0001",
                    name: "sit-up", target: "abs", secondaryMuscles: [],
                    instructions: [], description: "", difficulty: "beginner",
                    category: "strength")
            let padding = String(repeating: "x", count: paddingBytes)
            let records = (page.offset..<page.offset + page.limit).map { position -> ExtendedExercise in
                var exercise = template
                exercise.id = "e\(position)"
                return ExtendedExercise(exercise: exercise, field: "padding", value: padding)
            }
            return listResponse(encoding: records, for: request)
        case .repeatFirstPage:
            return listResponse(encoding: Array(exercises[0..<min(exercises.count, page.limit)]), for: request)
        }
    }

    /// `GET /api/v1/exercises?limit=&offset=`: the v1 envelope with `gifUrl`s on this server.
    func v1List(_ request: HTTPRequest) -> HTTPResponse {
        let page: PageRequest
        do {
            page = try PageRequest(query: request.query, maxPageSize: configuration.maxPageSize)
        } catch {
            return FixtureRouter.json(422, GatewayBodies.message(error.message))
        }
        let base = state.baseURL ?? ""
        var exercises = state.catalog.v1Exercises
        if let listed = state.listedCount, listed < exercises.count { exercises = Array(exercises.prefix(listed)) }
        return listResponse(
            encoding: V1Page(
                exercises: exercises, page: page, mediaBase: base,
                listURL: base + "/api/v1/exercises", reportedTotal: state.v1ReportedTotal),
            for: request)
    }

    /// JSON, zstd-compressed when the client accepts it. With `nesting` above 0 every record
    /// (an object starting `{"bodyPart":`) gets `"attributes":[[…]]` nested that deep first.
    private func listResponse(encoding value: some Encodable, for request: HTTPRequest, nesting: Int = 0) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]  // deterministic bytes
        guard var json = try? encoder.encode(value) else {
            return FixtureRouter.json(500, GatewayBodies.forStatus(500))
        }
        if nesting > 0 {
            let deep = "{\"attributes\":" + String(repeating: "[", count: nesting) + String(repeating: "]", count: nesting) + ","
            json = Data(String(decoding: json, as: UTF8.self).replacingOccurrences(of: "{\"bodyPart\":", with: deep + "\"bodyPart\":").utf8)
        }
        var response = FixtureRouter.json(200, [UInt8](json))
        response.addHeader("Vary", "Accept-Encoding")
        if request.accepts(encoding: "zstd"), let compressed = ZstdCompressor.compress(response.body) {
            response.body = compressed
            response.addHeader("Content-Encoding", "zstd")
        }
        return response
    }
}

/// A RapidAPI record with one extra string field: `note` (``ListFault/echoKeyInRecord``) or
/// `padding` (``ListFault/endless(paddingBytes:)``).
private struct ExtendedExercise: Encodable {
    let exercise: RapidAPIExercise
    let field: String
    let value: String

    func encode(to encoder: any Encoder) throws {
        try exercise.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(value, forKey: Key(stringValue: field))
    }
}

private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension FixtureRouter {
    /// `GET /image?exerciseId=&resolution=`: quota, then parameters (422), then the id (404),
    /// then faults, then the GIF (or 304).
    func rapidAPIImage(_ request: HTTPRequest) -> HTTPResponse {
        guard state.spendQuota() else { return FixtureRouter.json(429, GatewayBodies.monthlyQuotaExceeded) }
        guard let id = request.query["exerciseId"], (1...6).contains(id.count), id.allSatisfy(\.isASCII),
            id.allSatisfy(\.isNumber)
        else {
            return FixtureRouter.json(422, GatewayBodies.message("exerciseId must be a numeric exercise id"))
        }
        guard let resolution = request.query["resolution"].flatMap({ Int($0) }),
            FixtureCatalog.resolutions.contains(resolution)
        else {
            return FixtureRouter.json(422, GatewayBodies.message("resolution must be one of 180, 360, 720, 1080"))
        }
        let catalog = state.catalog
        guard catalog.isRapidID(id) else { return FixtureRouter.json(404, GatewayBodies.forStatus(404)) }
        return gifResponse(id: id, resolution: resolution, catalog: catalog, request: request)
    }

    /// `GET /media/<v1 id>.gif`: the GIF at 180.
    func v1Media(id: String, request: HTTPRequest) -> HTTPResponse {
        let catalog = state.catalog
        guard catalog.isV1ID(id) else { return FixtureRouter.json(404, GatewayBodies.forStatus(404)) }
        return gifResponse(id: id, resolution: FixtureCatalog.baseResolution, catalog: catalog, request: request)
    }

    private func gifResponse(
        id: String, resolution: Int, catalog: FixtureCatalog, request: HTTPRequest
    ) -> HTTPResponse {
        let fault = faults.next(for: catalog.canonicalID(id))
        if let fault, let response = response(for: fault, id: id) { return response }
        guard let gif = catalog.servedGIF(id: id, resolution: resolution) else {
            return FixtureRouter.json(500, GatewayBodies.forStatus(500))
        }
        if ConditionalRequest.isNotModified(request, etag: gif.etag, lastModified: gif.lastModified) {
            var response = HTTPResponse(status: 304)
            addValidators(of: gif, to: &response)
            return response
        }
        var response = HTTPResponse(status: 200, contentType: "image/gif", body: gif.bytes)
        addValidators(of: gif, to: &response)
        switch fault {
        case .wrongContentType?:
            response.setHeader("Content-Type", "application/octet-stream")
        case .truncatedBody?:
            response.delivery = .truncated(bodyBytes: gif.bytes.count / 2)
        case .slowBody(let rate)?:
            response.delivery = .dripped(bytesPerSecond: max(1, rate))
        case .corruptFrame?:
            response = HTTPResponse(
                status: 200, contentType: "image/gif",
                body: GIFCorruptor.placingFirstFrameOffScreen(gif.bytes) ?? gif.bytes)
        case .hugeHeader(let bytes)?:
            response.addHeader("X-Padding", String(repeating: "a", count: max(0, bytes)))
        default:
            break
        }
        return response
    }

    /// The whole response of a fault that replaces the GIF; nil for faults that alter how the
    /// real GIF is sent (handled by the caller).
    private func response(for fault: Fault, id: String) -> HTTPResponse? {
        switch fault {
        case .htmlWith200:
            return HTTPResponse(
                status: 200, contentType: "text/html; charset=utf-8",
                body: Array(
                    ("<!DOCTYPE html><html><head><title>Scheduled maintenance</title></head><body>"
                        + "<h1>We'll be back soon</h1><p>The service is down for maintenance.</p></body></html>").utf8))
        case .notAGIF:
            var random = SplitMix64(seed: id.utf8.reduce(0x504E_47) { $0 &* 31 &+ UInt64($1) })
            let noise = (0..<1016).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return HTTPResponse(
                status: 200, contentType: "image/gif",
                body: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + noise)
        case .status(let status):
            return FixtureRouter.json(status, GatewayBodies.forStatus(status))
        case .tooManyRequests(let retryAfter):
            var response = FixtureRouter.json(429, GatewayBodies.rateLimited)
            switch retryAfter {
            case .seconds(let seconds)?: response.addHeader("Retry-After", String(seconds))
            case .httpDate(let seconds)?: response.addHeader("Retry-After", HTTPDate.format(HTTPDate.now() + seconds))
            case nil: break
            }
            return response
        case .monthlyQuotaExceeded:
            return FixtureRouter.json(429, GatewayBodies.monthlyQuotaExceeded)
        case .connectionReset:
            var response = HTTPResponse(status: 0)
            response.delivery = .reset
            return response
        case .wrongContentType, .truncatedBody, .slowBody, .corruptFrame, .hugeHeader:
            return nil
        }
    }

    private func addValidators(of gif: ServedGIF, to response: inout HTTPResponse) {
        response.addHeader("ETag", gif.etag)
        response.addHeader("Last-Modified", HTTPDate.format(gif.lastModified))
        response.addHeader("Cache-Control", "public, max-age=86400")
    }
}
