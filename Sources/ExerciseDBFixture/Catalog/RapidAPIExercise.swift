/// One exercise in the current RapidAPI ExerciseDB schema, as `GET /exercises` returns it.
///
/// ```swift
/// let squat = server.catalog.exercises[0]
/// print(squat.id, squat.name)   // "0001 3/4 sit-up"
/// ```
package struct RapidAPIExercise: Sendable, Equatable, Codable {
    package var bodyPart: String
    package var equipment: String
    /// 4-digit zero-padded, with gaps between consecutive ids.
    package var id: String
    package var name: String
    package var target: String
    package var secondaryMuscles: [String]
    package var instructions: [String]
    package var description: String
    /// `beginner`, `intermediate` or `advanced`.
    package var difficulty: String
    /// `strength`, `stretching`, `cardio`, `mobility`, `plyometrics`, `balance` or `rehabilitation`.
    package var category: String

    package init(
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
