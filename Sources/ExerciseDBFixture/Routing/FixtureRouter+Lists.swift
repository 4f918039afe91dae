import Foundation

extension FixtureRouter {
    /// `GET /exercises?limit=&offset=`: a bare JSON array of RapidAPI exercises.
    func rapidAPIList(_ request: HTTPRequest) -> HTTPResponse {
        let page: PageRequest
        do {
            page = try PageRequest(query: request.query, maxPageSize: configuration.maxPageSize)
        } catch {
            return FixtureRouter.json(422, GatewayBodies.message(error.message))
        }
        let exercises = state.catalog.exercises
        return listResponse(encoding: Array(exercises[page.range(in: exercises.count)]), for: request,
                            nesting: configuration.recordNesting)
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
        return listResponse(
            encoding: V1Page(exercises: state.catalog.v1Exercises, page: page, mediaBase: base,
                             listURL: base + "/api/v1/exercises"),
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
