import ExerciseDBFixture
import Foundation
import GifPackFormat
import Synchronization
@testable import GifPackTestSupport
@testable import GifPackTestServers

// Dists made by the built `gifpack` binary, run as a child process against the in-process fixture
// server: what the client's tests read and install, without compiling the builder. The builder's
// own tests build in process (GifPackTestFixtures' `runBuild`).

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

/// Builds `text` with the built `gifpack` (`gifpack build`, a child process) into `workspace/dist`,
/// its cache in `workspace/cache`, with the test key, SOURCE_DATE_EPOCH 1700000000 and, given `now`,
/// GIFPACK_NOW (the time a signed index's expiry counts from). Throws with the build's standard
/// error unless it exited 0, or 3 (written, some exercises without their GIF) with
/// `allowingPartial`: the one way the fixtures below make a dist.
///
/// At most one build per core runs at a time (``distBuildSlots``): a child process's threads are
/// not the test process's cooperative pool, and a dozen builds at once starve the tests that wait
/// for events. The wait for a slot, the build and the slot's release run on an executor of their own,
/// so a build that ended gives its slot back even while the cooperative pool is busy.
func makeDist(
    manifest text: String, workspace: TemporaryDirectory, now: Date? = nil,
    allowingPartial: Bool = false
) async throws {
    let manifest = try workspace.write(text, to: "manifest.yaml")
    var environment = ["GIFPACK_TEST_KEY": testAPIKey, "SOURCE_DATE_EPOCH": "1700000000"]
    if let now { environment["GIFPACK_NOW"] = String(Int64(now.timeIntervalSince1970.rounded(.down))) }
    let arguments = ["build", "-m", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "--progress", "off"]
    let outcome = Mutex<ProcessResult?>(nil)
    try await OwnThreadTrait.withOwnExecutor { [environment] in
        try await distBuildSlots.acquire()
        defer { distBuildSlots.release() }
        let result = try await gifpackCLI(arguments, environment: environment)
        outcome.withLock { $0 = result }
    }
    guard let result = outcome.withLock({ $0 }) else { throw ClientTestFailure("gifpack build did not run") }
    guard result.status == 0 || (allowingPartial && result.status == 3) else {
        throw ClientTestFailure("gifpack build exited \(result.status): \(result.error.suffix(3000))")
    }
}

/// The slots ``makeDist(manifest:workspace:now:allowingPartial:)``'s builds take, one per core; apart
/// from the computing tests' (``ComputeSlots/shared``), so that neither waits for the other.
let distBuildSlots = ComputeSlots(count: max(1, ProcessInfo.processInfo.activeProcessorCount))

/// Runs the built `gifpack` with the test's environment plus `extra` (never an inherited crash hook).
func gifpackCLI(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProcessResult {
    var environment = ProcessInfo.processInfo.environment
    environment.removeValue(forKey: "GIFPACK_CRASH_AT")
    environment.merge(extra) { $1 }
    return try await run(productPath("gifpack"), arguments, environment: environment)
}

/// `cp -a`.
func copyTree(_ source: String, to destination: String) async throws {
    try? FileManager.default.removeItem(atPath: destination)
    let result = try await run("/bin/cp", ["-a", source, destination])
    guard result.status == 0 else { throw PublishTestFailure("cp -a \(source) \(destination): \(result.error)") }
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
        try await makeDist(manifest: rapidAPIManifest(server: server, packs: packs, fetch: fetch), workspace: workspace)
    }

    func index() throws -> PackIndex { try readIndex(indexPath) }

    /// What the server serves for `id` at 180 px.
    func served(_ id: String) -> [UInt8] { server.catalog.gifBytes(id: id, resolution: 180) ?? [] }
}

/// Two builds of one fixture, kept side by side for publishing: `v1` (unsigned, one pack "all")
/// and `v2` (signed, sequence 1, two packs "first" and "second", one GIF changed).
struct PublishBuilds {
    let built: ClientBuiltDist
    let key: TestSigningKey
    var workspace: TemporaryDirectory { built.workspace }
    var v1: String { workspace.file("v1") }
    var v2: String { workspace.file("v2") }

    static func make(count: Int = 10) async throws -> PublishBuilds {
        let built = try await ClientBuiltDist.make(count: count)
        let key = try TestSigningKey(workspace: built.workspace)
        let builds = PublishBuilds(built: built, key: key)
        try await copyTree(built.dist, to: builds.v1)
        let ids = built.server.catalog.exercises.map(\.id).sorted()
        built.server.replaceGIF(id: ids[0], with: try GIFSynthesizer.animatedGIF(width: 30, height: 30, frames: 2, colors: 4, seed: 77))
        let half = ids.count / 2
        try await built.build(
            packs: """
                packs:
                  - name: first
                    selector:
                      ids: [\(ids[..<half].map { "\"\($0)\"" }.joined(separator: ", "))]
                  - name: second
                    selector:
                      ids: [\(ids[half...].map { "\"\($0)\"" }.joined(separator: ", "))]
                \(key.block())
                """, fetch: "  refresh_after: 0")
        try await copyTree(built.dist, to: builds.v2)
        return builds
    }

    /// A build of the same fixture with one more GIF changed, pack "all" only, copied to `name`.
    func nextAllVersion(_ name: String, seed: UInt64) async throws -> String {
        let ids = built.server.catalog.exercises.map(\.id).sorted()
        built.server.replaceGIF(id: ids[1], with: try GIFSynthesizer.animatedGIF(width: 28, height: 28, frames: 2, colors: 4, seed: seed))
        try await built.build(fetch: "  refresh_after: 0")
        try await copyTree(built.dist, to: workspace.file(name))
        return workspace.file(name)
    }
}
