import ArgumentParser
import Foundation
import GifPackClient
import GifPackFormat
import GifPackSystem

/// `--format`: the image formats wanted, in order of preference (format 1.4), for `install` and `cat`.
struct FormatOption: ParsableArguments {
    @Option(
        name: .customLong("format"),
        help: "Image formats in order of preference, comma-separated: webp,gif takes a pack's WebP rendition (format 1.4) where the index has one; default gif.")
    var text: String?

    /// The formats asked for (`[.gif]` without the option).
    var formats: [ImageFormat] {
        guard let text else { return [.gif] }
        return text.split(separator: ",").map { ImageFormat(rawValue: String($0).trimmingCharacters(in: .whitespaces).lowercased()) }
    }

    func validate() throws {
        guard text != nil else { return }
        let list = formats
        if list.isEmpty { throw ValidationError("--format needs at least one format (gif, webp)") }
        if let unknown = list.first(where: { !$0.isKnown }) {
            throw ValidationError("--format: unknown format \"\(TerminalText.escaped(unknown.rawValue, maxScalars: 20))\" (known: gif, webp)")
        }
        if Set(list).count != list.count { throw ValidationError("--format names a format twice") }
    }
}
