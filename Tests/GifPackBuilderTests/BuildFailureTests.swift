import Foundation
import Testing
@testable import GifPack

/// The one table from what stopped a build to its exit status, message and report
/// (``BuildFailure``): every cause `BuildPipeline.run` knows, named once.
@Suite("Build: one typed failure, mapped to exit statuses in one place", .timeLimit(.minutes(1)))
struct BuildFailureTests {
    struct Unnamed: Error, CustomStringConvertible {
        var description: String { "the disk is full" }
    }

    @Test func everyCauseMapsToItsExitStatusMessageAndReport() {
        let shrank = CatalogShrank(removed: 5, previous: 10, now: 5, limit: .count(1))
        let state = StateUnreadable(step: .planningFetches, path: "cache/state.sqlite", error: "disk I/O error")
        let foreignOutput = DirectoryClaimError.foreign(path: "dist", roles: [.output], examples: ["a"])
        let foreignCache = DirectoryClaimError.foreign(path: "cache", roles: [.cache], examples: ["a"])
        let cases: [(BuildFailure, ExitStatus, String, BuildFailure.ReportDisposition)] = [
            (.catalog(.authRejected(status: 401, environmentVariable: nil)), .authRejected, "the API rejected the key (HTTP 401)", .written),
            (.catalog(.quotaExhausted(url: "u")), .quotaExhausted, "the API's monthly quota is used up (HTTP 429 at u)", .written),
            (.catalog(.tooManyPages(limit: 3)), .failed, CatalogError.tooManyPages(limit: 3).description, .written),
            (.ended(BuildEnded(status: .quotaExhausted, message: "stopped")), .quotaExhausted, "stopped", .written),
            (.catalogShrank(shrank), .catalogShrank, shrank.description, .written),
            (.directoryClaim(foreignOutput), .usage, foreignOutput.description + "; nothing was fetched", .notWrittenIntoForeignOutput),
            (.directoryClaim(foreignCache), .usage, foreignCache.description + "; nothing was fetched", .written),
            (.stateUnreadable(state), .failed, state.description, .written),
            (.lock(.held(directory: "dist", pid: 7)), .locked, BuildLock.LockError.held(directory: "dist", pid: 7).description, .returnedOnly),
            (.lock(.io(directory: "dist", errno: EACCES)), .failed, BuildLock.LockError.io(directory: "dist", errno: EACCES).description,
             .returnedOnly),
            (.other(Unnamed()), .failed, "the disk is full", .written),
        ]
        for (failure, status, message, disposition) in cases {
            #expect(failure.exitStatus == status, "\(failure)")
            #expect(failure.message == message, "\(failure)")
            #expect(failure.reportDisposition == disposition, "\(failure)")
        }
        #expect(BuildFailure.stateUnreadable(state).stateError == state.detail)
        #expect(BuildFailure.catalogShrank(shrank).stateError == nil)
    }

    /// An error a stage threw untyped is named by its type; one already a failure stays as it is.
    @Test func anUntypedErrorIsNamedByItsCause() {
        let cases: [(any Error, ExitStatus)] = [
            (CatalogError.authRejected(status: 403, environmentVariable: "KEY"), .authRejected),
            (BuildEnded(status: .partial, message: "m"), .partial),
            (CatalogShrank(removed: 2, previous: 4, now: 2, limit: .count(1)), .catalogShrank),
            (DirectoryClaimError.unreadable(path: "c", roles: [.cache], reason: "r"), .usage),
            (StateUnreadable(step: .lookingUpLastKnownGood, path: nil, error: "e"), .failed),
            (BuildLock.LockError.held(directory: "d", pid: nil), .locked),
            (BuildFailure.catalog(.quotaExhausted(url: "u")), .quotaExhausted),
            (Unnamed(), .failed),
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
