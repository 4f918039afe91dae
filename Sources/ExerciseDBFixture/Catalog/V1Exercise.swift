/// One exercise in the open-source ExerciseDB v1 schema, as `GET /api/v1/exercises` returns it.
///
/// In a catalog taken from a running ``FixtureServer`` `gifUrl` points at that server
/// (`http://127.0.0.1:PORT/media/<exerciseId>.gif`); before the server has a port it is the bare
/// path `/media/<exerciseId>.gif`.
///
/// ```swift
/// let first = server.catalog.v1Exercises[0]
/// print(first.exerciseId, first.instructions[0])   // "trmte8s Step:1 Lie flat …"
/// ```
package struct V1Exercise: Sendable, Equatable, Codable {
    /// 7-character base62 id.
    package var exerciseId: String
    package var name: String
    package var gifUrl: String
    package var targetMuscles: [String]
    package var bodyParts: [String]
    package var equipments: [String]
    package var secondaryMuscles: [String]
    /// Prefixed `"Step:1 "`, `"Step:2 "`, ….
    package var instructions: [String]

    package init(
        exerciseId: String, name: String, gifUrl: String, targetMuscles: [String],
        bodyParts: [String], equipments: [String], secondaryMuscles: [String], instructions: [String]
    ) {
        self.exerciseId = exerciseId
        self.name = name
        self.gifUrl = gifUrl
        self.targetMuscles = targetMuscles
        self.bodyParts = bodyParts
        self.equipments = equipments
        self.secondaryMuscles = secondaryMuscles
        self.instructions = instructions
    }

    /// The server-relative path this exercise's GIF is served at.
    static func mediaPath(for exerciseId: String) -> String { "/media/\(exerciseId).gif" }
}
