import Foundation
@testable import GifPack
@testable import GifPackTestSupport

// Builds in process, for the builder's tests, which read a build's report. The dists the client's
// and the command line's tests read are made by the built binary (GifPackDistFixtures' `makeDist`).

/// Loads a manifest text and runs a build into `workspace/<out>` with its cache in `workspace/<cache>`.
func runBuild(
    manifest text: String, workspace: TemporaryDirectory, out: String = "dist", cache: String = "cache",
    epoch: Int64 = 1_700_000_000, now: Date? = nil, previousIndex: String? = nil,
    observer: BuildObserver? = nil
) async throws -> BuildReport {
    let manifest = try ManifestLoader().parse(text, environment: ["GIFPACK_TEST_KEY": testAPIKey])
    let options = BuildOptions(
        outputDirectory: workspace.file(out), cacheDirectory: workspace.file(cache),
        sourceDateEpoch: epoch, previousIndex: previousIndex, now: now)
    return await BuildPipeline(manifest: manifest, options: options, observer: observer).run()
}

/// ``runBuild(manifest:workspace:out:cache:epoch:now:previousIndex:observer:)`` into `workspace/dist`,
/// throwing unless the build succeeded; returns its report.
@discardableResult
func buildDist(manifest text: String, workspace: TemporaryDirectory) async throws -> BuildReport {
    let report = try await runBuild(manifest: text, workspace: workspace)
    guard report.exitStatus == .success else { throw ClientTestFailure("build failed: \(report.message)") }
    return report
}

/// A valid manifest for in-process tests that never reach a server (port 9, discard).
func offlineManifest() throws -> Manifest {
    try ManifestLoader().parse(
        """
        source:
          kind: exercisedb-v1
          base_url: http://127.0.0.1:9
        packs:
          - name: all
        """, environment: [:])
}
