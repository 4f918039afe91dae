import Foundation
import Testing
@testable import GifPack

/// The one table from what stopped a build to its exit status, message and report
/// (``BuildFailure``): every cause `BuildPipeline.run` knows, named once.
@Suite("Build: one typed failure, mapped to exit statuses in one place", .computes, .timeLimit(.minutes(5)))
struct BuildFailureTests {
    struct Unnamed: Error, CustomStringConvertible {
        var description: String { "the disk is full" }
    }

    @Test func everyCauseMapsToItsExitStatusMessageAndReport() {
        let shrank = CatalogShrank(removed: 5, previous: 10, now: 5, limit: .count(1))
        let state = StateUnreadable(step: .planningFetches, path: "cache/state.sqlite", error: "disk I/O error")
        let foreignOutput = DirectoryClaimError.foreign(path: "dist", roles: [.output], examples: ["a"])
        let foreignCache = DirectoryClaimError.foreign(path: "cache", roles: [.cache], examples: ["a"])
        func check(
            _ failure: BuildFailure, _ status: GifPack.ExitStatus, _ message: String,
            _ disposition: BuildFailure.ReportDisposition = .written, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(failure.exitStatus == status, "\(failure)", sourceLocation: sourceLocation)
            #expect(failure.message == message, "\(failure)", sourceLocation: sourceLocation)
            #expect(failure.reportDisposition == disposition, "\(failure)", sourceLocation: sourceLocation)
        }
        check(.catalog(.authRejected(status: 401, environmentVariable: nil)), .authRejected, "the API rejected the key (HTTP 401)")
        check(.catalog(.quotaExhausted(url: "u")), .quotaExhausted, "the API's monthly quota is used up (HTTP 429 at u)")
        check(.catalog(.tooManyPages(limit: 3)), .failed, CatalogError.tooManyPages(limit: 3).description)
        check(.ended(BuildEnded(status: .quotaExhausted, message: "stopped")), .quotaExhausted, "stopped")
        check(.catalogShrank(shrank), .catalogShrank, shrank.description)
        check(.directoryClaim(foreignOutput), .usage, foreignOutput.description + "; nothing was fetched", .notWrittenIntoForeignOutput)
        check(.directoryClaim(foreignCache), .usage, foreignCache.description + "; nothing was fetched")
        check(.stateUnreadable(state), .failed, state.description)
        let held = BuildLock.LockError.held(directory: "dist", pid: 7), io = BuildLock.LockError.io(directory: "dist", errno: EACCES)
        check(.lock(held), .locked, held.description, .returnedOnly)
        check(.lock(io), .failed, io.description, .returnedOnly)
        check(.cancelled(after: .pack), .failed, "the build was cancelled during its pack stage; index.json was not written (the GIFs fetched stay cached)")
        check(.other(Unnamed()), .failed, "the disk is full")
        #expect(BuildFailure.stateUnreadable(state).stateError == state.detail)
        #expect(BuildFailure.catalogShrank(shrank).stateError == nil)
    }

    /// An error a stage threw untyped is named by its type; one already a failure stays as it is.
    @Test func anUntypedErrorIsNamedByItsCause() {
        let cases: [(any Error, GifPack.ExitStatus)] = [
            (CatalogError.authRejected(status: 403, environmentVariable: "KEY"), .authRejected),
            (BuildEnded(status: .partial, message: "m"), .partial),
            (CatalogShrank(removed: 2, previous: 4, now: 2, limit: .count(1)), .catalogShrank),
            (DirectoryClaimError.unreadable(path: "c", roles: [.cache], reason: "r"), .usage),
            (StateUnreadable(step: .lookingUpLastKnownGood, path: nil, error: "e"), .failed),
            (BuildLock.LockError.held(directory: "d", pid: nil), .locked),
            (BuildFailure.catalog(.quotaExhausted(url: "u")), .quotaExhausted),
            (Unnamed(), .failed)
        ]
        for (error, status) in cases {
            #expect(BuildFailure(error).exitStatus == status, "\(error)")
        }
        guard case .other(let kept) = BuildFailure(Unnamed()) else {
            Issue.record("an unknown error is not .other")
            return
        }
        #expect(kept is Unnamed)
    }
}
