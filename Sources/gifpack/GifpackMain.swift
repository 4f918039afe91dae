import CMalloc
import GifPackCLI

/// The `gifpack` executable: glibc's malloc settings for a long build (CMalloc's shim), then the
/// command line, which lives in the GifPackCLI library (one command per type, as
/// swift-argument-parser lays it out) so that tests can import it.
@main
enum GifpackMain {
    static func main() async {
        gp_tune_malloc()
        await CommandLineTool.main()
    }
}
