import Foundation

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
        HTTPResponse(status: status, contentType: jsonType,
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
