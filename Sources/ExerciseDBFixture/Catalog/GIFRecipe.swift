import GIFSynthesis
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
    /// The size to pad the GIF up to at resolution 180 (``FixtureConfiguration/gifSizes``), nil: as synthesized.
    var targetBytes: Int? = nil

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
        let gif: [UInt8]
        do throws(GIFSynthesisError) {
            gif = try GIFSynthesizer.animatedGIF(
                width: side, height: side, frames: frames, colors: colors,
                seed: seed ^ UInt64(resolution))
        } catch {
            throw .gifSynthesisFailed(exerciseID: key, reason: error.description)
        }
        guard let targetBytes else { return gif }
        let scale = Double(resolution) / Double(FixtureCatalog.baseResolution)
        return Self.padded(gif, to: Int((Double(targetBytes) * scale * scale).rounded()))
    }

    /// `gif` grown to `size` bytes by comment extensions (`21 FE`, sub-blocks of up to 255 bytes,
    /// a zero terminator) before its trailer, which every decoder skips; unchanged when it is
    /// already that large or has no trailer.
    static func padded(_ gif: [UInt8], to size: Int) -> [UInt8] {
        guard gif.last == 0x3B, size > gif.count + 4 else { return gif }
        var padding = size - gif.count - 3  // 21 FE … 00: 3 bytes of framing
        var out = Array(gif.dropLast())
        out.reserveCapacity(size)
        out += [0x21, 0xFE]
        var filler: UInt8 = 0
        while padding > 0 {
            // A sub-block is its length byte and up to 255 bytes; never leave a 1-byte remainder
            // (a length byte alone would be a terminator).
            var chunk = min(255, padding - 1)
            if padding - (chunk + 1) == 1 { chunk -= 1 }
            out.append(UInt8(chunk))
            for _ in 0..<chunk { out.append(filler); filler &+= 97 }
            padding -= chunk + 1
        }
        out += [0x00, 0x3B]
        return out
    }
}
