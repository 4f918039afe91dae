import ExerciseDBFixture
import Foundation
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// A manifest for the fixture server's RapidAPI shape.
func rapidAPIManifest(
    server: FixtureServer, packs: String = "", fetch: String = "", maxMissing: String = "100%",
    pageSize: Int = 10
) -> String {
    """
    version: 1
    source:
      kind: exercisedb-rapidapi
      base_url: \(server.rapidAPIBaseURL)
      api_key_env: GIFPACK_TEST_KEY
      resolution: 180
      page_size: \(pageSize)
    fetch:
      concurrency: 3
      max_gif_bytes: 1MB
      max_missing: \(maxMissing)
      retry:
        base_delay: 10ms
        max_delay: 50ms
    \(fetch)
    \(packs)
    """
}

/// A manifest for the fixture server's open-source v1 shape (no key). `fetch`: more lines of the
/// fetch block, each indented two spaces.
func v1Manifest(_ server: FixtureServer, pageSize: Int = 10, fetch: String = "", packs: String = "") -> String {
    """
    version: 1
    source:
      kind: exercisedb-v1
      base_url: \(server.v1BaseURL)
      page_size: \(pageSize)
    fetch:
      max_missing: 100%
      retry:
        base_delay: 10ms
        max_delay: 50ms
    \(fetch)
    \(packs)
    """
}

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
/// throwing unless the build succeeded (with `allowingPartial`, also when it wrote packs with exercises
/// without their GIF): the one way the fixtures below build a dist.
@discardableResult
func buildDist(
    manifest text: String, workspace: TemporaryDirectory, now: Date? = nil,
    allowingPartial: Bool = false
) async throws -> BuildReport {
    let report = try await runBuild(manifest: text, workspace: workspace, now: now)
    guard report.exitStatus == .success || (allowingPartial && report.exitStatus == .partial) else {
        throw ClientTestFailure("build failed: \(report.message)")
    }
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

/// A fixture server with `count` exercises and a finished build of it in `workspace/dist`.
struct ClientBuiltDist {
    let server: FixtureServer
    let workspace: TemporaryDirectory

    var dist: String { workspace.file("dist") }
    var indexPath: String { workspace.file("dist/index.json") }

    static func make(count: Int = 12, packs: String = "", fetch: String = "") async throws -> ClientBuiltDist {
        let server = try startFixture(count: count)
        let built = ClientBuiltDist(server: server, workspace: try TemporaryDirectory())
        try await built.build(packs: packs, fetch: fetch)
        return built
    }

    func build(packs: String = "", fetch: String = "") async throws {
        try await buildDist(manifest: rapidAPIManifest(server: server, packs: packs, fetch: fetch), workspace: workspace)
    }

    func index() throws -> PackIndex { try readIndex(indexPath) }

    /// What the server serves for `id` at 180 px.
    func served(_ id: String) -> [UInt8] { server.catalog.gifBytes(id: id, resolution: 180) ?? [] }
}
