/// How to synthesize one original generated GIF at any resolution: the frame and colour counts
/// and pixel seed are fixed per GIF, the dimension follows the resolution.
///
/// ```swift
/// let recipe = GIFRecipe(key: "g0", frames: 4, colors: 3, seed: 99)
/// recipe.dimension(baseDimension: 32, resolution: 360)   // 64
/// ```
struct GIFRecipe: Sendable, Equatable {
    let key: String
    let frames: Int
    let colors: Int
    let seed: UInt64
    /// The size to pad the GIF up to at resolution 180 (``FixtureConfiguration/gifSizes``), nil: as synthesized.
    var targetBytes: Int? = nil

    /// Pixels per side at `resolution`, scaled linearly from `baseDimension` at 180.
    func dimension(baseDimension: Int, resolution: Int) -> Int {
        max(1, baseDimension * resolution / FixtureCatalog.baseResolution)
    }
}
