import ArgumentParser
import Foundation
import GifPack
import GifPackFormat
import GifPackHTTP

/// `gifpack catalog`: fetches a manifest's catalog (the list pages only, no GIF) and prints the
/// values of one selector field with how many exercises have each, to write selectors with.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "List the values of a selector field in a manifest's catalog, with how many exercises have each.",
        discussion: """
            Fetches the catalog's list pages as `gifpack build` does (same source, key, --base-url; no GIF is requested, \
            nothing is written) and prints one line per value, `value<TAB>count`, most exercises first, then by value. \
            Values are shown as the catalog spells them (selectors match them case-insensitively), control characters escaped. \
            A summary line goes to standard error. With --json: {"field", "exercises", "values": [{"value", "count"}]}.

            Exit status: 0 listed; 1 the catalog could not be fetched; 2 bad manifest or usage; 4 API key rejected; \
            5 API quota used up.

            Examples:
              gifpack catalog -m manifests/exercisedb.yaml --values bodyPart
              gifpack catalog -m manifests/demo.yaml --base-url http://127.0.0.1:8080 --values equipment --json
            """
    )

    /// The fields whose values can be listed.
    enum Field: String, ExpressibleByArgument, CaseIterable {
        case bodyPart, equipment, target

        var selectorField: SelectorField {
            switch self {
            case .bodyPart: .bodyPart
            case .equipment: .equipment
            case .target: .target
            }
        }
    }

    @OptionGroup var source: ManifestOptions

    @Option(help: ArgumentHelp("The selector field whose values to list: bodyPart, equipment or target.", valueName: "field"))
    var values: Field

    @Flag(help: "Print one JSON object instead of value<TAB>count lines.")
    var json = false

    func run() async throws {
        let (manifest, _) = try source.load(readsSigningKey: false)
        let catalog: Catalog
        do {
            let client = try HTTPClient(caFile: manifest.fetch.caFile)
            defer { client.shutdown() }
            catalog = try await CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client).fetchCatalog()
        } catch {
            Terminal.error("gifpack: " + SecretRedactor(source: manifest.source).redact(String(describing: error)))
            let status: ExitStatus =
                switch error {
                case CatalogError.authRejected: .authRejected
                case CatalogError.quotaExhausted: .quotaExhausted
                default: .failed
                }
            throw ExitCode(status.rawValue)
        }
        let counts = try CatalogValues.counts(of: values.selectorField, in: catalog.exercises)
        if json {
            let document = Document(field: values.rawValue, exercises: catalog.exercises.count, values: counts)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            Self.write(Self.terminalSafeJSON(String(decoding: try encoder.encode(document), as: UTF8.self)) + "\n")
        } else {
            Self.write(counts.map { "\(TerminalText.escaped($0.value))\t\($0.count)\n" }.joined())
        }
        Terminal.error(
            "catalog: \(catalog.exercises.count) exercises, \(counts.count) \(values.rawValue) value(s)"
                + (catalog.rejected.isEmpty ? "" : ", \(catalog.rejected.count) record(s) refused"))
    }

    private struct Document: Encodable {
        var field: String
        var exercises: Int
        var values: [ValueCount]
    }

    /// Standard output, as it is: the tab between value and count is the format (each value is
    /// escaped on its own).
    private static func write(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    /// JSON whose strings hold no character a terminal acts on raw: those JSONEncoder leaves as
    /// they are (C1 controls, bidi overrides, line separators) become `\uXXXX` escapes, which
    /// occur only inside strings and decode to the same text.
    static func terminalSafeJSON(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if TerminalText.isUnsafe(scalar) {
                out += String(format: "\\u%04x", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
