import ArgumentParser
import GifPackHTTP

/// `--deadline`, shared by the commands that read an index over the network (install, cat): the
/// longest the command may spend on it, every request and retry included (``HTTPTimeouts/deadline``).
/// A cron job sets it so that a server that drips bytes cannot hold the job for hours.
///
/// ```
/// gifpack install --index https://cdn.example.com/index.json --cache /var/cache/gifs --deadline 600
/// ```
struct DeadlineOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Give up after this many seconds over the network, every request and retry included (default: no overall limit; each request still ends after 30 s below 1 KB/s).",
            valueName: "seconds"))
    var deadline: Double?

    func validate() throws {
        if let deadline, !(deadline > 0 && deadline <= 7 * 24 * 3600) {
            throw ValidationError("--deadline must be a number of seconds above 0 (at most a week)")
        }
    }

    /// The request limits with this deadline.
    var timeouts: HTTPTimeouts {
        var timeouts = HTTPTimeouts()
        timeouts.deadline = deadline.map { .milliseconds(Int(($0 * 1000).rounded(.up))) }
        return timeouts
    }
}
