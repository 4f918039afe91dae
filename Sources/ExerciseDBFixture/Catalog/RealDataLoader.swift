import Foundation

/// Reads a real ExerciseDB sample folder at runtime: `catalog-rapidapi.json` (bare array, RapidAPI
/// schema), `catalog-v1.json` (array, v1 schema), `images.csv` (`api,id,sha256`) and
/// `gifs/<sha256>.gif`. The data is licensed, so it is only ever read, never copied into the
/// project.
///
/// ```swift
/// let sample = try RealDataLoader.load(directory: "../shared/realdata/exercisedb-sample")
/// sample.exercises.count   // 221
/// ```
enum RealDataLoader {
    struct Output {
        var exercises: [RapidAPIExercise]
        var v1Exercises: [V1Exercise]
        /// RapidAPI id → SHA-256 of its GIF (the GIF key).
        var rapidGIFKeys: [String: String]
        /// v1 id → SHA-256 of its GIF.
        var v1GIFKeys: [String: String]
        /// SHA-256 → GIF bytes.
        var gifs: [String: [UInt8]]
    }

    static func load(directory: String) throws(FixtureError) -> Output {
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        let exercises = try decode([RapidAPIExercise].self, folder.appendingPathComponent("catalog-rapidapi.json"))
        var v1Exercises = try decode([V1Exercise].self, folder.appendingPathComponent("catalog-v1.json"))
        for index in v1Exercises.indices {
            v1Exercises[index].gifUrl = V1Exercise.mediaPath(for: v1Exercises[index].exerciseId)
        }

        let csvURL = folder.appendingPathComponent("images.csv")
        var rapidKeys: [String: String] = [:]
        var v1Keys: [String: String] = [:]
        for (number, line) in try text(csvURL).split(whereSeparator: \.isNewline).enumerated().dropFirst() {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 3, fields[2].count == 64 else {
                throw .realDataUnreadable(path: csvURL.path, reason: "line \(number + 1) is not api,id,sha256")
            }
            switch fields[0] {
            case "rapidapi": rapidKeys[fields[1]] = fields[2]
            case "v1": v1Keys[fields[1]] = fields[2]
            default: throw .realDataUnreadable(path: csvURL.path, reason: "line \(number + 1): unknown api \(fields[0])")
            }
        }
        for id in exercises.map(\.id) + v1Exercises.map(\.exerciseId) where rapidKeys[id] == nil && v1Keys[id] == nil {
            throw .realDataUnreadable(path: csvURL.path, reason: "no image listed for exercise \(id)")
        }

        var gifs: [String: [UInt8]] = [:]
        for sha in Set(rapidKeys.values).union(v1Keys.values) {
            let gifURL = folder.appendingPathComponent("gifs/\(sha).gif")
            guard let data = FileManager.default.contents(atPath: gifURL.path) else {
                throw .realDataUnreadable(path: gifURL.path, reason: "missing GIF")
            }
            gifs[sha] = [UInt8](data)
        }
        return Output(
            exercises: exercises, v1Exercises: v1Exercises, rapidGIFKeys: rapidKeys,
            v1GIFKeys: v1Keys, gifs: gifs)
    }

    private static func text(_ url: URL) throws(FixtureError) -> String {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw .realDataUnreadable(path: url.path, reason: "missing or unreadable")
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ url: URL) throws(FixtureError) -> T {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw .realDataUnreadable(path: url.path, reason: "missing or unreadable")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw .realDataUnreadable(path: url.path, reason: "not the expected JSON: \(error)")
        }
    }
}
