/// The structural rules both GIF readers apply — the client's pure-Swift ``GIFWalker`` and the
/// builder's giflib-based inspector — kept in one place so that the two cannot drift apart.
///
/// ```swift
/// let version = try GIFFrameRules.signatureVersion(Array(bytes.prefix(6)))   // "89a"
/// try GIFFrameRules.checkFrame(number: 1, left: 0, top: 0, width: 8, height: 6,
///                              screenWidth: 8, screenHeight: 6, totalPixels: &total, limits: .standard)
/// ```
package enum GIFFrameRules {
    /// "87a" or "89a" for a valid signature; `truncated` for a strict prefix of one, else `notAGIF`.
    package static func signatureVersion(_ head: [UInt8]) throws(GIFRejection) -> String {
        for version in ["87a", "89a"] {
            let signature = Array("GIF\(version)".utf8)
            if head == signature { return version }
            if head.count < signature.count, head == Array(signature.prefix(head.count)) {
                throw .truncated
            }
        }
        throw .notAGIF
    }

    /// A frame must have an area, lie inside the logical screen, and keep the frames' total pixel
    /// count within `limits.maxTotalPixels` (added to `totalPixels`).
    package static func checkFrame(
        number: Int, left: Int, top: Int, width: Int, height: Int, screenWidth: Int, screenHeight: Int,
        totalPixels: inout Int, limits: GIFLimits
    ) throws(GIFRejection) {
        guard width > 0, height > 0 else {
            throw .badFrame("frame \(number) has zero size (\(width)x\(height))")
        }
        guard left + width <= screenWidth, top + height <= screenHeight else {
            throw .badFrame(
                "frame \(number) (\(width)x\(height) at \(left),\(top)) lies outside the "
                    + "\(screenWidth)x\(screenHeight) logical screen")
        }
        totalPixels += width * height
        guard totalPixels <= limits.maxTotalPixels else {
            throw .tooLarge("frames hold more than \(limits.maxTotalPixels) pixels in total")
        }
    }
}
