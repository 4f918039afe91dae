import Foundation

/// Why a build stopped: the one error ``BuildPipeline``'s stages end it with, each cause mapped
/// here, and only here, to the report's exit status, message and what becomes of the report.
///
/// ```swift
/// do throws(BuildFailure) { try await build(into: &report, clock: clock) } catch {
///     (report.exitStatus, report.message) = (error.exitStatus, error.message)
/// }
/// ```
enum BuildFailure: Error {
    /// The catalog could not be fetched (exit 4 for a rejected key, 5 for a used-up quota, else 1).
    case catalog(CatalogError)
    /// A stage ended the build with a status and message of its own (a fetch stop, too many
    /// exercises without a GIF, a damaged GIF that could not be replaced).
    case ended(BuildEnded)
    /// The catalog lost more exercises than `max_removed` allows (exit 8).
    case catalogShrank(CatalogShrank)
    /// A pack's selector names nothing the catalog has (exit 2).
    case emptySelector(EmptySelector)
    /// The output or cache directory is not gifpack's (exit 2).
    case directoryClaim(DirectoryClaimError)
    /// The build state could not be read where its answer matters (exit 1, also in `stateErrors`).
    case stateUnreadable(StateUnreadable)
    /// Another run holds a lock (exit 6), or a lock could not be taken (exit 1).
    case lock(BuildLock.LockError)
    /// The caller cancelled the build's task (the GifPack library run in-process): nothing more
    /// is sent and no index is written (exit 1); the GIFs fetched stay cached for the next build.
    case cancelled(after: BuildStage)
    /// Anything else a stage threw (a file, pack or index that could not be read or written, the
    /// previous index, the HTTP client): exit 1 with the error's description.
    case other(any Error)

    /// What becomes of the report of a build that stopped.
    enum ReportDisposition: Equatable {
        /// Written to `report.json` and handed to the observer (the state's recovery named).
        case written
        /// Handed to the observer, but not written: the output directory is not gifpack's.
        case notWrittenIntoForeignOutput
        /// Returned only: the report file belongs to the run holding the lock.
        case returnedOnly
    }

    /// Names the cause of an error a stage threw untyped (a build failure stays as it is).
    init(_ error: any Error) {
        self =
            switch error {
            case let failure as BuildFailure: failure
            case let error as CatalogError: .catalog(error)
            case let end as BuildEnded: .ended(end)
            case let error as CatalogShrank: .catalogShrank(error)
            case let error as EmptySelector: .emptySelector(error)
            case let error as DirectoryClaimError: .directoryClaim(error)
            case let error as StateUnreadable: .stateUnreadable(error)
            case let error as BuildLock.LockError: .lock(error)
            default: .other(error)
            }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .catalog(.authRejected): .authRejected
        case .catalog(.quotaExhausted): .quotaExhausted
        case .ended(let end): end.status
        case .catalogShrank: .catalogShrank
        case .emptySelector, .directoryClaim: .usage
        case .lock(.held): .locked
        case .catalog, .stateUnreadable, .lock, .cancelled, .other: .failed
        }
    }

    /// A stop of the catalog checks that say what they spent (an empty selector, a shrunk or
    /// contradictory catalog) with the GIF requests sent while the list arrived, all of them back.
    func spent(gifRequests count: Int) -> BuildFailure {
        switch self {
        case .catalogShrank(var error):
            error.gifRequests = count
            return .catalogShrank(error)
        case .emptySelector(var error):
            error.gifRequests = count
            return .emptySelector(error)
        case .catalog(.totalMismatch(let total, let seen, _)):
            return .catalog(.totalMismatch(total: total, seen: seen, gifRequests: count))
        default:
            return self
        }
    }

    /// The report's message.
    var message: String {
        switch self {
        case .catalog(let error): error.description
        case .ended(let end): end.message
        case .catalogShrank(let error): error.description
        case .emptySelector(let error): error.description
        case .directoryClaim(let error): error.description + "; nothing was fetched"
        case .stateUnreadable(let error): error.description
        case .lock(let error): error.description
        case .cancelled(let stage): "the build was cancelled during its \(stage.rawValue) stage; index.json was not written (the GIFs fetched stay cached)"
        case .other(let error): String(describing: error)
        }
    }

    /// The line for the report's `stateErrors`, if the failure is the state's.
    var stateError: String? {
        if case .stateUnreadable(let error) = self { error.detail } else { nil }
    }

    var reportDisposition: ReportDisposition {
        switch self {
        // Not even report.json goes into a directory that is not gifpack's.
        case .directoryClaim(let error) where error.concernsOutput: .notWrittenIntoForeignOutput
        case .lock: .returnedOnly
        default: .written
        }
    }
}

/// How a stage ends the build early with a report that says why (a stop of the fetch, too many
/// exercises without a GIF, a damaged GIF that could not be replaced): the report's status and
/// message; anything else the stage set on the report stays.
struct BuildEnded: Error {
    var status: ExitStatus
    var message: String
}
