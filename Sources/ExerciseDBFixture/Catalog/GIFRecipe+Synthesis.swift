import GIFSynthesis
import GifPackGIF

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
