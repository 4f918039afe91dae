/// The process exit statuses of `gifpack build`, distinct so cron wrappers and CI steps can branch
/// on them. Documented in the README and in `gifpack build --help`.
package enum ExitStatus: Int32, Sendable, Codable, CaseIterable {
    /// Success: a new version was written, or nothing had changed (the report says which).
    case success = 0
    /// The build failed; the index written before is untouched.
    case failed = 1
    /// Bad manifest or command line; nothing was fetched.
    case usage = 2
    /// Written, but some exercises have no GIF (within `max_missing`).
    case partial = 3
    /// The API rejected the key (401/403).
    case authRejected = 4
    /// The API quota, the request budget or the deadline ran out.
    case quotaExhausted = 5
    /// Another gifpack run holds the lock on the output or cache directory.
    case locked = 6
    /// `gifpack publish`: the target serves a newer index (a higher `sequence`) than the one to publish.
    case superseded = 7
    /// The catalog lacks more of the last catalog's exercises than `fetch.max_removed` allows
    /// (an API answering part of its list?); no pack or index was written. `--max-removed 100%` accepts it.
    case catalogShrank = 8

    package var summary: String {
        switch self {
        case .success: "success"
        case .failed: "build failed"
        case .usage: "bad manifest or usage"
        case .partial: "written with exercises missing"
        case .authRejected: "API key rejected"
        case .quotaExhausted: "quota, budget or deadline exhausted"
        case .locked: "another run holds the lock"
        case .superseded: "publish: the target serves a newer index"
        case .catalogShrank: "the catalog lost more exercises than max_removed allows"
        }
    }
}
