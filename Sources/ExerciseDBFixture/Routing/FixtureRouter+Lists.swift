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

    private func faultyRapidAPIList(_ fault: ListFault, page: PageRequest, exercises: [RapidAPIExercise],
                                    request: HTTPRequest) -> HTTPResponse {
        let key = request.header("x-rapidapi-key") ?? ""
        switch fault {
        case .echoKeyInErrorBody(let status):
            return FixtureRouter.json(status, GatewayBodies.message("bad key \(key)"))
        case .echoKeyInRecord:
            let records = exercises[page.range(in: exercises.count)].map { ExtendedExercise(exercise: $0, field: "note", value: "echo: \(key)") }
            return listResponse(encoding: Array(records), for: request)
        case .endless(let paddingBytes):
            let template = exercises.first ?? RapidAPIExercise(bodyPart: "waist", equipment: "body weight", id: "0001",
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
            encoding: V1Page(exercises: exercises, page: page, mediaBase: base,
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
