import GifPackGIF
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

    /// Pixels per side at `resolution`, scaled linearly from `baseDimension` at 180.
    func dimension(baseDimension: Int, resolution: Int) -> Int {
        max(1, baseDimension * resolution / FixtureCatalog.baseResolution)
    }
}

extension GIFRecipe {
    /// The recipe's GIF at `resolution`, made by ``GIFSynthesizer`` (deterministic: the same
    /// recipe and resolution always give the same bytes).
    func synthesize(baseDimension: Int, resolution: Int) throws(FixtureError) -> [UInt8] {
        let side = dimension(baseDimension: baseDimension, resolution: resolution)
        do throws(GIFSynthesisError) {
            return try GIFSynthesizer.animatedGIF(
                width: side, height: side, frames: frames, colors: colors,
                seed: seed ^ UInt64(resolution))
        } catch {
            throw .gifSynthesisFailed(exerciseID: key, reason: error.description)
        }
    }
}
