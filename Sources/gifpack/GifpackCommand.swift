import ArgumentParser
import CMalloc
import GifPack

/// The `gifpack` command line: one subcommand per type.
@main
struct GifpackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gifpack",
        abstract: "Build verified, deduplicated, versioned offline packs of ExerciseDB GIFs.",
        version: BuildOptions.version,
        subcommands: [BuildCommand.self, PruneCommand.self, VerifyCommand.self, InspectCommand.self, InstallCommand.self, CatCommand.self, DiffCommand.self],
        defaultSubcommand: nil
    )

    static func main() async {
        gp_limit_malloc_arenas()
        await main(nil)
    }
}
