import GifPackGIF

/// One rung tried: its settings, the WebP's size and how it compared with the GIF.
package struct WebPAttempt: Sendable, Equatable, Codable {
    package var settings: WebPEncoderSettings
    package var bytes: Int
    package var comparison: WebPComparison
    /// Structure matched and every frame at or above the policy's SSIM floor.
    package var passedGate: Bool
}

/// What the WebP rendition holds for one GIF.
package struct WebPRendition: Sendable, Equatable {
    package enum Choice: Sendable, Equatable {
        /// The WebP of this rung: it cleared the gate and is smaller than the GIF.
        case webp(bytes: [UInt8], settings: WebPEncoderSettings, comparison: WebPComparison)
        /// No rung cleared the gate with fewer bytes than the GIF: the rendition lists the GIF.
        case useGIF
    }

    package var choice: Choice
    /// Every rung tried, in order.
    package var attempts: [WebPAttempt]

    /// `q75`, `q80`, `q90`, `lossless` (the chosen rung's label) or `gif`.
    package var outcomeLabel: String {
        switch choice {
        case .webp(_, let settings, _): settings.label
        case .useGIF: "gif"
        }
    }
}

/// Encodes one GIF's WebP rendition under a ``WebPEncodingPolicy``: each rung in turn is encoded
/// (``WebPAnimationEncoder``), decoded back and compared (``WebPComparison``); the first that
/// clears the gate with fewer bytes than the GIF is chosen, and when none does the rendition lists
/// the GIF. CPU work on the calling thread: the builder calls it on its computing pool.
///
/// ```swift
/// let rendition = try WebPRenditionEncoder.encode(gif: bytes, gifLoopCount: info.loopCount, policy: .standard)
/// if case .webp(let webp, let settings, let comparison) = rendition.choice { … }
/// ```
package enum WebPRenditionEncoder {
    package static func encode(gif: [UInt8], gifLoopCount: Int?, policy: WebPEncodingPolicy) throws(WebPCodecError) -> WebPRendition {
        var attempts: [WebPAttempt] = []
        for settings in policy.rungs {
            let webp: [UInt8]
            do {
                webp = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: gifLoopCount, settings: settings)
            } catch .canvasTooLarge {
                return WebPRendition(choice: .useGIF, attempts: attempts)
            }
            let comparison = try WebPComparison.compare(webp: webp, gif: gif, gifLoopCount: gifLoopCount)
            let passed = comparison.mismatch == nil && comparison.worstSSIM >= policy.ssimFloor
            attempts.append(WebPAttempt(settings: settings, bytes: webp.count, comparison: comparison, passedGate: passed))
            if passed, webp.count < gif.count {
                return WebPRendition(choice: .webp(bytes: webp, settings: settings, comparison: comparison), attempts: attempts)
            }
        }
        return WebPRendition(choice: .useGIF, attempts: attempts)
    }
}
