/// Plain string operations on `/`-separated paths.
///
/// Written out rather than taken from `NSString` (whose `lastPathComponent` and
/// `deletingLastPathComponent` crash on short paths in optimized builds of swift-corelibs-foundation
/// 6.3); trailing slashes are ignored.
///
/// ```swift
/// PathText.lastComponent("dist/packs/all-v1.tar.zst")   // "all-v1.tar.zst"
/// PathText.parent("dist/index.json")                     // "dist"
/// PathText.parent("index.json")                          // "."
/// ```
package enum PathText {
    package static func lastComponent(_ path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// The directory holding `path`: "." for a bare name, "/" for a top-level absolute path.
    package static func parent(_ path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    package static func trimmingTrailingSlashes(_ path: String) -> String {
        var result = Substring(path)
        while result.count > 1, result.hasSuffix("/") { result = result.dropLast() }
        return String(result)
    }
}
