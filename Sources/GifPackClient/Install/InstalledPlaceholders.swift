import Foundation
import GifPackFormat
import GifPackIndexReader

/// The placeholders of an installed generation: `<generation>/gifpack-placeholders.json`, the
/// index's ``GIFPlaceholder`` (BlurHash, average colour, size, timing) of every installed GIF, keyed
/// by the GIF's SHA-256, so an app lays out its cells offline and after a relaunch without the
/// index (``GIFLoader/placeholder(for:)``). Written by `GenerationBuilder` before the manifest
/// (a generation with a manifest has its placeholders file too) when the index gives placeholders
/// (format 1.2); generations installed before this file existed, or from a 1.0/1.1 index, have
/// none, and readers treat a missing file as "no placeholders".
///
/// ```json
/// {"gifs": {"3f1c…": {"averageColor": "#a0b1c2", "blurHash": "LEHV6n…", "width": 180, …}}}
/// ```
package struct InstalledPlaceholders: Sendable, Equatable, Codable {
    package static let fileName = "gifpack-placeholders.json"

    /// GIF SHA-256 → its placeholder.
    package var gifs: [String: GIFPlaceholder]

    package init(gifs: [String: GIFPlaceholder]) { self.gifs = gifs }

    /// The placeholders of the generation at `directory`, or nil when it has no placeholders file.
    package static func read(directory: String) throws(PackClientError) -> InstalledPlaceholders? {
        let path = "\(directory)/\(fileName)"
        guard FileOps.regularFileSize(path) != nil else { return nil }
        let data = try PackIndexSource.readFile(path, maxBytes: 256 << 20)
        do {
            return try JSONValueDecoder.decode(InstalledPlaceholders.self, from: [UInt8](data), limits: JSONLimits(maxBytes: 256 << 20))
        } catch {
            throw .unreadable(location: path, detail: "not a gifpack placeholders file: \(JSONValueDecoder.describe(error))")
        }
    }

    func encoded() throws(PackClientError) -> [UInt8] {
        try InstallManifest.canonicalJSON(self, path: Self.fileName)
    }
}
