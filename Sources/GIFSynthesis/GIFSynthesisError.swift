/// Why ``GIFSynthesizer`` could not produce a GIF.
///
/// `invalidArgument` names the offending parameter and the accepted range; `encoder` carries
/// giflib's own error text (for example "Failed to allocate required memory").
///
/// ```swift
/// do { _ = try GIFSynthesizer.animatedGIF(width: 0, height: 1, frames: 1, colors: 4, seed: 1) }
/// catch { print(error) }   // invalidArgument("width must be 1...65535, got 0")
/// ```
package enum GIFSynthesisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A parameter was outside the range a GIF can represent.
    case invalidArgument(String)
    /// giflib's encoder reported an error; the text is `GifErrorString` plus the failing step.
    case encoder(String)

    package var description: String {
        switch self {
        case .invalidArgument(let message): "invalid GIF synthesis argument: \(message)"
        case .encoder(let message): "giflib encoder failed: \(message)"
        }
    }
}
