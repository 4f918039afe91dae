import ArgumentParser
import Foundation
import GifPack

/// What the `gifpack` executable runs: parses the command line and runs the command it names,
/// then exits with the command's status (see ``GifpackCommand``).
package enum CommandLineTool {
    package static func main() async {
        await GifpackCommand.main()
    }
}

/// The `gifpack` command line: one subcommand per type.
///
/// `main()` parses the command line itself so that every command-line mistake (a missing or
/// unknown option, a bad value, `-q -v` together, a misspelled subcommand) exits with status 2 as
/// the README documents — swift-argument-parser's own `main()` would exit 64 (`EX_USAGE`) — and a
/// refused `build` still writes its metrics file, step summary and `report.json` (see
/// ``RunFiles``).
///
/// The executable `gifpack` (Sources/gifpack) is only its entry point: it calls
/// ``CommandLineTool/main()``. Everything else lives in this library, so tests can
/// `@testable import GifPackCLI`.
struct GifpackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gifpack",
        abstract: "Build verified, deduplicated, versioned offline packs of ExerciseDB GIFs.",
        version: BuildOptions.version,
        subcommands: [
            BuildCommand.self, PruneCommand.self, VerifyCommand.self, InspectCommand.self, InstallCommand.self, CatCommand.self, DiffCommand.self, ReviewCommand.self, KeygenCommand.self,
            PublishCommand.self, CatalogCommand.self
        ],
        defaultSubcommand: nil
    )

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // Help, --version, and the exit statuses the commands throw keep swift-argument-parser's handling.
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            let message = unknownCommandMessage(arguments) ?? fullMessage(for: error)
            Terminal.error(message)
            RunFiles(arguments: arguments).recordRefusal(message: message.split(separator: "\n").first.map(String.init) ?? message)
            exit(withError: ExitCode(ExitStatus.usage.rawValue))
        }
    }

    /// The names `gifpack <name>` accepts.
    static var commandNames: [String] {
        configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
    }

    /// "unknown command 'instal' — did you mean 'install'?" when the first argument is not an
    /// option and names no subcommand; nil otherwise.
    static func unknownCommandMessage(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), !commandNames.contains(first) else { return nil }
        let names = commandNames.filter { $0 != "help" }
        let nearest = names.map { ($0, EditDistance.between(first, $0)) }.min { $0.1 < $1.1 }
        let shown = TerminalText.escaped(first, maxScalars: 60)
        var message = "gifpack: unknown command '\(shown)'"
        if let (name, distance) = nearest, distance <= max(2, first.count / 3) {
            message += " — did you mean '\(name)'?"
        }
        return message + "\ncommands: \(names.joined(separator: ", ")) (gifpack --help)"
    }
}
