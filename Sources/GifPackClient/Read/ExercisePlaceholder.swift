import GifPackFormat

/// Everything an app needs to lay out an exercise's cell and detail view before its GIF is
/// downloaded or decoded: a BlurHash and average colour for the placeholder, the GIF's size for
/// the aspect ratio, and its timing (format 1.2 indexes; a 1.0 or 1.1 index has none).
///
/// ```swift
/// let index = try await PackIndexSource("https://cdn.example.com/gifpack/index.json").load()
/// if let placeholder = index.placeholder(forExercise: "0001") {
///     cell.backgroundColor = UIColor(hex: placeholder.averageColor)
///     cell.imageView.image = UIImage(blurHash: placeholder.blurHash, size: CGSize(width: 32, height: 32))
///     cell.aspectRatio = Double(placeholder.width) / Double(placeholder.height)
/// }
/// ```
@dynamicMemberLookup
package struct ExercisePlaceholder: Sendable, Equatable {
    package var exerciseID: String
    /// The pack that lists the exercise (the first one, by name, when several do).
    package var pack: String
    /// SHA-256 of the exercise's GIF: the key of its posters (`posters/<size>/<sha256>.gif`).
    package var gifSHA256: String
    /// The GIF's entry in the index: BlurHash, average colour, size and timing, read through this
    /// value as `placeholder.blurHash`, `placeholder.width`, `placeholder.loopCount`, …
    package var gif: GIFPlaceholder

    package subscript<Value>(dynamicMember keyPath: KeyPath<GIFPlaceholder, Value>) -> Value { gif[keyPath: keyPath] }
}

extension PackIndex {
    /// The placeholder of exercise `id` from the index alone, or nil when no pack lists the
    /// exercise with a GIF or the index predates format 1.2.
    package func placeholder(forExercise id: String) -> ExercisePlaceholder? {
        for pack in packs {
            guard let entry = pack.gifEntry(forExercise: id), let value = entry.placeholder else { continue }
            return ExercisePlaceholder(exerciseID: id, pack: pack.name, gifSHA256: entry.sha256, gif: value)
        }
        return nil
    }
}
