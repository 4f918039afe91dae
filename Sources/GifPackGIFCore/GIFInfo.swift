/// What ``GIFInspector`` learned about a structurally valid GIF.
///
/// `durationMilliseconds` is the sum over frames of the graphics control extension delays
/// (centiseconds x 10; frames without one count 0). `loopCount` is nil when the file has no
/// NETSCAPE2.0/ANIMEXTS1.0 extension (play once), 0 for "loop forever", otherwise the count
/// stored in the file. `version` is "87a" or "89a" from the signature.
///
/// ```swift
/// let info = try GIFInspector.inspect(path: "/tmp/a.gif")
/// // GIFInfo(width: 180, height: 180, frameCount: 12, durationMilliseconds: 960,
/// //         loopCount: 0, version: "89a")
/// ```
package struct GIFInfo: Sendable, Codable, Equatable {
    package var width: Int
    package var height: Int
    package var frameCount: Int
    package var durationMilliseconds: Int
    package var loopCount: Int?
    package var version: String

    package init(
        width: Int, height: Int, frameCount: Int, durationMilliseconds: Int,
        loopCount: Int?, version: String
    ) {
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.durationMilliseconds = durationMilliseconds
        self.loopCount = loopCount
        self.version = version
    }
}
