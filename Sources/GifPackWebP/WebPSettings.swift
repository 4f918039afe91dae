import CWebP

/// One pinned setting of libwebp's animation encoder (`WebPAnimEncoder`): the same GIF and the same
/// settings give the same bytes (one thread, no timestamps in the file, the same libwebp).
///
/// Lossy rungs are method 5 with lossy frames only: on the real catalog's GIFs, mixed frames
/// (`allow_mixed`, libwebp trying each frame lossless too, as `gif2webp -mixed`) gave the very same
/// bytes for 15 % more CPU, and method 5 is 1.3 % smaller than 4 for 12 % more (method 6: 2.4 %
/// smaller for 7 times the CPU). Alpha is always coded losslessly (`alpha_quality` 100), so
/// transparency stays exactly the GIF's.
package struct WebPEncoderSettings: Sendable, Hashable, Codable {
    /// libwebp's quality, 0...100 (for lossless, its effort).
    package var quality: Float
    /// libwebp's method, 0 (fast) ... 6 (slow, smaller).
    package var method: Int
    package var lossless: Bool
    package var allowMixed: Bool

    package init(quality: Float, method: Int = 5, lossless: Bool = false, allowMixed: Bool = false) {
        self.quality = quality
        self.method = method
        self.lossless = lossless
        self.allowMixed = lossless ? false : allowMixed
    }

    package static let q75 = WebPEncoderSettings(quality: 75)
    package static let q80 = WebPEncoderSettings(quality: 80)
    package static let q90 = WebPEncoderSettings(quality: 90)
    package static let lossless = WebPEncoderSettings(quality: 75, method: 4, lossless: true)

    /// `q75`, `q80`, `q90`, `lossless`: how the report counts the rungs.
    package var label: String {
        lossless ? "lossless" : "q\(Int(quality.rounded()))"
    }

    /// Every field, for cache keys: `q75-m5`, `q75-m4-mixed`, `lossless-q75-m4`.
    package var key: String {
        let quality = quality == quality.rounded() ? "\(Int(quality))" : "\(quality)"
        return lossless ? "lossless-q\(quality)-m\(method)" : "q\(quality)-m\(method)\(allowMixed ? "-mixed" : "")"
    }
}

/// The rungs an exercise's WebP climbs and the bar each must clear: the first rung whose WebP has
/// the GIF's canvas, frame count, delays and loop count, an SSIM of at least `ssimFloor` on every
/// frame, and fewer bytes than the GIF is the rendition; when none has, the rendition lists the GIF.
package struct WebPEncodingPolicy: Sendable, Hashable {
    package var rungs: [WebPEncoderSettings]
    package var ssimFloor: Double

    package init(rungs: [WebPEncoderSettings], ssimFloor: Double = 0.98) {
        self.rungs = rungs
        self.ssimFloor = ssimFloor
    }

    /// Lossy quality 75, then 80, then 90, then lossless; SSIM at least 0.98 on every frame. The
    /// q80 rung catches the GIFs q75 leaves just under the bar (all 9 of the real sample's 221)
    /// with 150 KB fewer than q90 took for them.
    package static let standard = WebPEncodingPolicy(rungs: [.q75, .q80, .q90, .lossless])

    /// What an encoded result depends on besides the GIF's bytes: the rungs, the bar, the rules of
    /// this module (`webp1`: bump when the frame handling or the comparison changes) and libwebp's
    /// encoder version. A cache keyed by the GIF's SHA-256 and this holds nothing stale.
    package var cacheKey: String {
        let version = WebPGetEncoderVersion()
        let libwebp = "\(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)"
        return "webp1;libwebp \(libwebp);\(rungs.map(\.key).joined(separator: ","));ssim \(ssimFloor)"
    }
}
