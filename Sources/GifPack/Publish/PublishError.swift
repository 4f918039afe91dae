/// Why a publish stopped, with the exit status it maps to. Messages name files, keys, the
/// endpoint and environment variables — never a credential's value.
package enum PublishError: Error, Sendable, CustomStringConvertible {
    /// A bad `--to`, `--endpoint` or missing credential variables (exit 2).
    case usage(String)
    /// `--from` is not a gifpack output directory, or its packs do not match its index; nothing was uploaded (exit 2).
    case badSource(String)
    /// The store refused the credentials (exit 4).
    case credentialsRejected(String)
    /// The target serves an index with a higher sequence (or the live index changed under us) (exit 7).
    case superseded(String)
    /// Any other failure: unreachable endpoint, missing bucket, I/O (exit 1).
    case failed(String)

    package var exitStatus: ExitStatus {
        switch self {
        case .usage, .badSource: .usage
        case .credentialsRejected: .authRejected
        case .superseded: .superseded
        case .failed: .failed
        }
    }

    package var description: String {
        switch self {
        case .usage(let text), .badSource(let text), .credentialsRejected(let text), .superseded(let text), .failed(let text): text
        }
    }
}
