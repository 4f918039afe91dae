/// The "look again" list: what automatic checks flag in the new version, per GIF, for a person to
/// look at before the release ships.
///
/// - a blank first frame (one colour over the whole screen; the still then comes from a later
///   frame) or a GIF whose every frame is one colour;
/// - a size other than the rendition the index says was asked for (`source.resolution` on the
///   longer side);
/// - a poster whose mean colour is far (more than ``posterColorDistance`` on a channel) from the
///   GIF's own average colour;
/// - a GIF more than ``largeFactor`` times its pack's median GIF size (packs of at least
///   ``largeMinimumGIFs`` GIFs).
///
/// Each GIF is decoded up to its first non-blank frame (``StillFrameDecoder``), one at a time.
struct ReviewChecks {
    static let posterColorDistance = 48
    static let largeFactor: Int64 = 4
    static let largeMinimumGIFs = 4

    private let resolution: Int?
    private var medians: [String: Int64] = [:]

    init(index: PackIndex) {
        resolution = index.source.resolution
        for pack in index.packs where pack.gifs.count >= Self.largeMinimumGIFs {
            let sizes = pack.gifs.map(\.location.size).sorted()
            medians[pack.name] = sizes[sizes.count / 2]
        }
    }

    /// Why the exercise's GIF deserves a second look; empty when nothing is flagged.
    func reasons(for exercise: ReviewExercise, gifBytes: [UInt8]?, posterBytes: [UInt8]?) -> [String] {
        guard let gif = exercise.gif else { return [] }
        var reasons: [String] = []
        if let gifBytes { reasons += stillReasons(gifBytes) }
        if let resolution, gif.width > 0, max(gif.width, gif.height) != resolution {
            reasons.append("\(gif.width)×\(gif.height), not the \(resolution) px rendition asked for")
        }
        if let posterBytes, let average = gif.averageColor, let expected = Self.rgb(average),
            let still = try? StillFrameDecoder.decode(bytes: posterBytes), let actual = Self.rgb(still.image.averageColorHex)
        {
            let distance = max(abs(expected.0 - actual.0), abs(expected.1 - actual.1), abs(expected.2 - actual.2))
            if distance > Self.posterColorDistance {
                reasons.append("poster colour \(still.image.averageColorHex) is far from the GIF's \(average)")
            }
        }
        if let median = medians[exercise.pack], median > 0, gif.bytes > Self.largeFactor * median {
            reasons.append("\(HTMLText.bytes(gif.bytes)), more than \(Self.largeFactor)× its pack's median (\(HTMLText.bytes(median)))")
        }
        return reasons
    }

    private func stillReasons(_ bytes: [UInt8]) -> [String] {
        let still: StillFrame
        do { still = try StillFrameDecoder.decode(bytes: bytes) } catch { return ["the GIF does not decode: \(error)"] }
        if still.frameIndex > 0 { return ["blank first frame (one colour); the first frame with a picture is frame \(still.frameIndex + 1)"] }
        let pixels = still.image.pixels
        var offset = 3
        while offset < pixels.count {
            if pixels[offset] != pixels[0] || pixels[offset + 1] != pixels[1] || pixels[offset + 2] != pixels[2] { return [] }
            offset += 3
        }
        return ["every frame is one colour (\(still.image.averageColorHex))"]
    }

    static func rgb(_ hex: String) -> (Int, Int, Int)? {
        let digits = Array(hex.utf8)
        guard digits.count == 7, digits[0] == UInt8(ascii: "#"), let value = Int(String(decoding: digits[1...], as: UTF8.self), radix: 16) else {
            return nil
        }
        return (value >> 16, (value >> 8) & 255, value & 255)
    }
}
