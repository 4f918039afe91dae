import Foundation
import GIFSynthesis
import GifPackGIF

/// Builds a deterministic ExerciseDB-like catalog from a configuration's count and seed:
/// RapidAPI exercises with 4-digit ids that have gaps, their v1 twins with 7-char base62 ids,
/// and which GIF recipe each exercise serves (every Nth reuses an earlier exercise's GIF).
///
/// ```swift
/// let generated = CatalogGenerator.generate(FixtureConfiguration())
/// generated.exercises.count   // 40
/// ```
enum CatalogGenerator {
    struct Output {
        var exercises: [RapidAPIExercise] = []
        var v1Exercises: [V1Exercise] = []
        /// RapidAPI id → GIF key; v1 ids reach it through `rapidIDByV1ID`.
        var gifKeyByID: [String: String] = [:]
        var rapidIDByV1ID: [String: String] = [:]
        var recipes: [GIFRecipe] = []
    }

    private enum Stream: UInt64 { case ids = 1, names, details, v1IDs, duplicates, recipes, sizes }

    static func generate(_ configuration: FixtureConfiguration) -> Output {
        var output = Output()
        let ids = rapidIDs(count: configuration.exerciseCount, seed: configuration.seed)
        var names = SplitMix64(seed: configuration.seed, stream: Stream.names.rawValue)
        var details = SplitMix64(seed: configuration.seed, stream: Stream.details.rawValue)
        var usedNames = Set<String>()
        var usedV1IDs = Set<String>()
        for (index, id) in ids.enumerated() {
            let exercise = makeExercise(
                index: index, id: id, names: &names, details: &details, usedNames: &usedNames)
            let v1ID = makeV1ID(for: id, seed: configuration.seed, used: &usedV1IDs)
            output.exercises.append(exercise)
            output.v1Exercises.append(v1Twin(of: exercise, v1ID: v1ID))
            output.rapidIDByV1ID[v1ID] = id
        }
        assignGIFs(configuration, ids: ids, into: &output)
        return output
    }

    /// Ascending ids with gaps of up to 5, kept within four digits while the count allows.
    private static func rapidIDs(count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed, stream: Stream.ids.rawValue)
        let maxStep = max(1, min(6, 9000 / max(count, 1)))
        var next = 1
        return (0..<count).map { _ in
            defer { next += Int.random(in: 1...maxStep, using: &random) }
            let digits = String(next)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
    }

    private static func makeExercise(
        index: Int, id: String, names: inout SplitMix64, details: inout SplitMix64,
        usedNames: inout Set<String>
    ) -> RapidAPIExercise {
        let vocabulary = ExerciseVocabulary.self
        let movement: ExerciseVocabulary.Movement
        var name: String
        let equipment: String
        if index % 3 == 1, index / 3 < vocabulary.awkwardNames.count {
            let awkward = vocabulary.awkwardNames[index / 3]
            movement = vocabulary.movements[awkward.movement]
            name = awkward.name
            equipment = awkward.equipment
        } else {
            movement = vocabulary.movements.randomElement(using: &names)!
            equipment = movement.equipment.randomElement(using: &names)!
            let modifier = vocabulary.modifiers.randomElement(using: &names)!
            let base = movement.names.randomElement(using: &names)!
            name = [equipment, modifier, base].filter { !$0.isEmpty }.joined(separator: " ")
        }
        var variant = 2
        let plainName = name
        while usedNames.contains(name) {
            name = "\(plainName) v. \(variant)"
            variant += 1
        }
        usedNames.insert(name)

        let secondary = Array(
            vocabulary.secondaryMuscles.shuffled(using: &details).prefix(Int.random(in: 1...3, using: &details)))
        let difficulty = vocabulary.difficulties.randomElement(using: &details)!
        let category =
            Int.random(in: 0..<10, using: &details) == 0
            ? ["plyometrics", "balance", "rehabilitation", "mobility"].randomElement(using: &details)!
            : movement.category
        return RapidAPIExercise(
            bodyPart: movement.bodyPart, equipment: equipment, id: id, name: name,
            target: movement.target, secondaryMuscles: secondary,
            instructions: instructions(
                name: name, equipment: equipment, target: movement.target,
                random: &details),
            description: "The \(name) is a \(category) exercise performed with \(equipment) that "
                + "targets the \(movement.target), with the \(secondary.joined(separator: " and ")) "
                + "assisting. It suits \(difficulty) trainees.",
            difficulty: difficulty, category: category)
    }

    private static func instructions(
        name: String, equipment: String, target: String, random: inout SplitMix64
    ) -> [String] {
        let templates = ExerciseVocabulary.instructionTemplates
        var chosen = [templates[Int.random(in: 0...1, using: &random)], templates[2]]
        if Bool.random(using: &random) { chosen.append(templates[3]) }
        chosen.append(templates[4])
        if Bool.random(using: &random) { chosen.append(templates[5]) }
        chosen.append(templates[6])
        return chosen.map {
            $0.replacingOccurrences(of: "%E", with: equipment)
                .replacingOccurrences(of: "%M", with: name)
                .replacingOccurrences(of: "%T", with: target)
        }
    }

    private static let base62 = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    /// A 7-character base62 id derived from the RapidAPI id and seed alone.
    private static func makeV1ID(for rapidID: String, seed: UInt64, used: inout Set<String>) -> String {
        var random = SplitMix64(seed: seed, stream: Stream.v1IDs.rawValue &+ (UInt64(rapidID) ?? 0) << 8)
        while true {
            let candidate = String((0..<7).map { _ in base62[Int(random.next() % 62)] })
            if used.insert(candidate).inserted { return candidate }
        }
    }

    private static func v1Twin(of exercise: RapidAPIExercise, v1ID: String) -> V1Exercise {
        V1Exercise(
            exerciseId: v1ID, name: exercise.name, gifUrl: V1Exercise.mediaPath(for: v1ID),
            targetMuscles: [exercise.target], bodyParts: [exercise.bodyPart],
            equipments: [exercise.equipment], secondaryMuscles: exercise.secondaryMuscles,
            instructions: exercise.instructions.enumerated().map { "Step:\($0.offset + 1) \($0.element)" })
    }

    /// Gives each exercise an original recipe, except every Nth, which takes an earlier one's key,
    /// and, once ``FixtureConfiguration/distinctGIFs`` originals exist, every later one.
    private static func assignGIFs(_ configuration: FixtureConfiguration, ids: [String], into output: inout Output) {
        var duplicates = SplitMix64(seed: configuration.seed, stream: Stream.duplicates.rawValue)
        var recipes = SplitMix64(seed: configuration.seed, stream: Stream.recipes.rawValue)
        var sizes = SplitMix64(seed: configuration.seed, stream: Stream.sizes.rawValue)
        let every = configuration.duplicateEvery
        var keys: [String] = []
        for index in ids.indices {
            let capped = configuration.distinctGIFs.map { output.recipes.count >= $0 } ?? false
            if capped || (every > 0 && index > 0 && (index + 1) % every == 0) {
                keys.append(keys[Int.random(in: 0..<index, using: &duplicates)])
                continue
            }
            var recipe = GIFRecipe(
                key: "g\(index)",
                frames: Int.random(in: configuration.framesRange, using: &recipes),
                colors: colorCount(configuration, random: &recipes),
                seed: recipes.next())
            if let drawn = configuration.gifSizes, !drawn.isEmpty {
                recipe.targetBytes = drawn[Int(sizes.next() % UInt64(drawn.count))]
            }
            output.recipes.append(recipe)
            keys.append(recipe.key)
        }
        for (id, key) in zip(ids, keys) { output.gifKeyByID[id] = key }
    }

    /// The typical count 70% of the time (when configured); otherwise a draw from the range whose
    /// bits per pixel are skewed low (u³), so large GIFs stay rare.
    private static func colorCount(_ configuration: FixtureConfiguration, random: inout SplitMix64) -> Int {
        if let typical = configuration.typicalColors, Double.random(in: 0..<1, using: &random) < 0.7 {
            return typical
        }
        let range = configuration.colorsRange
        let lowBits = log2(Double(range.lowerBound))
        let highBits = log2(Double(range.upperBound))
        let u = Double.random(in: 0..<1, using: &random)
        let colors = Int(pow(2, lowBits + (highBits - lowBits) * u * u * u).rounded())
        return min(max(colors, range.lowerBound), range.upperBound)
    }
}
