/// Upper bounds ``GIFInspector`` enforces before it decodes any pixels, so a hostile or broken
/// file cannot make it spend unbounded time or memory.
///
/// `maxTotalPixels` bounds the sum of all frames' areas (the decoding work); `maxWidth` and
/// `maxHeight` bound the logical screen (and so the one line buffer); `maxFrames` bounds the
/// number of image records.
///
/// ```swift
/// var limits = GIFLimits.standard
/// limits.maxFrames = 300
/// let info = try GIFInspector.inspect(bytes: bytes, limits: limits)
/// ```
package struct GIFLimits: Sendable, Equatable {
    package var maxWidth: Int
    package var maxHeight: Int
    package var maxFrames: Int
    package var maxTotalPixels: Int

    package init(
        maxWidth: Int = 4096, maxHeight: Int = 4096, maxFrames: Int = 5000,
        maxTotalPixels: Int = 400_000_000
    ) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxFrames = maxFrames
        self.maxTotalPixels = maxTotalPixels
    }

    /// 4096x4096 screen, 5000 frames, 400 million decoded pixels in total.
    package static let standard = GIFLimits()
}
