/// One exercise in the current RapidAPI ExerciseDB schema, as `GET /exercises` returns it.
///
/// ```swift
/// let squat = server.catalog.exercises[0]
/// print(squat.id, squat.name)   // "0001 3/4 sit-up"
/// ```
public struct RapidAPIExercise: Sendable, Equatable, Codable {
    public var bodyPart: String
    public var equipment: String
    /// 4-digit zero-padded, with gaps between consecutive ids.
    public var id: String
    public var name: String
    public var target: String
    public var secondaryMuscles: [String]
    public var instructions: [String]
    public var description: String
    /// `beginner`, `intermediate` or `advanced`.
    public var difficulty: String
    /// `strength`, `stretching`, `cardio`, `mobility`, `plyometrics`, `balance` or `rehabilitation`.
    public var category: String

    public init(
        bodyPart: String, equipment: String, id: String, name: String, target: String,
        secondaryMuscles: [String], instructions: [String], description: String,
        difficulty: String, category: String
    ) {
        self.bodyPart = bodyPart
        self.equipment = equipment
        self.id = id
        self.name = name
        self.target = target
        self.secondaryMuscles = secondaryMuscles
        self.instructions = instructions
        self.description = description
        self.difficulty = difficulty
        self.category = category
    }
}
