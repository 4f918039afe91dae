import ArgumentParser
import ExerciseDBFixture
import Foundation

/// `exercisedb-fixture`: runs the loopback ExerciseDB stand-in until SIGTERM/SIGINT (for
/// `make demo` and `make bench`), or dumps its distinct GIFs and exits.
///
/// ```sh
/// exercisedb-fixture --port 0 --realistic --latency-ms 20 --port-file /tmp/fixture.port
/// exercisedb-fixture --realistic --dump-gifs /tmp/gifs
/// exercisedb-fixture --realistic --plan BASIC        # every resolution=360 request answered at 180
/// ```
@main
struct ExerciseDBFixtureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exercisedb-fixture",
        abstract: "Serve a loopback ExerciseDB stand-in (RapidAPI and v1 shapes) with generated or real-sample GIFs.")

    @Option(help: "TCP port on 127.0.0.1 (0 = any free port).")
    var port = 0

    @Option(help: "Number of generated exercises (default 40, or 1324 with --realistic).")
    var count: Int?

    @Flag(help: "Real-service sizes: 180x180 GIFs of about 94 KB, 46-233 KB.")
    var realistic = false

    @Option(
        name: .customLong("distinct-gifs"),
        help: "Make at most this many distinct GIFs; later exercises share them (large catalogs for scale benchmarks).")
    var distinctGifs: Int?

    @Option(help: "Seed of the generated catalog and GIFs.")
    var seed: UInt64 = 1

    @Option(name: .customLong("latency-ms"), help: "Delay added before each response, in milliseconds.")
    var latencyMilliseconds = 0

    @Option(name: .customLong("api-key"), help: "Require this X-RapidAPI-Key on the RapidAPI routes.")
    var apiKey: String?

    @Option(help: "Monthly quota of /image requests (unlimited when absent).")
    var quota: Int?

    @Option(name: .customLong("plan-max-resolution"), help: "Highest resolution served (180, 360, 720, 1080).")
    var planMaxResolution: Int?

    @Option(help: "The RapidAPI plan whose resolution ceiling /image keeps: BASIC (180), PRO (360), ULTRA or MEGA (1080). A resolution above it is served at it, still 200.")
    var plan: FixturePlan?

    @Option(name: .customLong("max-page-size"), help: "Largest list page.")
    var maxPageSize = 100

    @Option(name: .customLong("record-nesting"), help: "Give every RapidAPI list record a field of arrays nested this deep (a hostile catalog).")
    var recordNesting = 0

    @Option(name: .customLong("real-data"), help: "Serve this real-sample folder's catalogs and GIFs instead.")
    var realData: String?

    @Option(name: .customLong("port-file"), help: "Write the chosen port to this file (atomically).")
    var portFile: String?

    @Option(name: .customLong("dump-gifs"), help: "Write each distinct GIF to DIR/<id>.gif and exit.")
    var dumpGifs: String?

    @Option(
        name: .customLong("change-percent"),
        help: "Give this percentage of exercises (at least one) a newly drawn GIF: a later release, for upgrade benchmarks.")
    var changePercent: Double?

    @Option(
        name: .customLong("gif-sizes-from"),
        help: "Pad every generated GIF up to a size drawn from the .gif files of this folder (their sizes only are read): a catalog of real GIFs' sizes.")
    var gifSizesFrom: String?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let distinctGifs, distinctGifs < 1 { throw ValidationError("--distinct-gifs must be at least 1") }
        if plan != nil, planMaxResolution != nil {
            throw ValidationError("give --plan or --plan-max-resolution, not both")
        }
        if let changePercent, !(changePercent > 0 && changePercent <= 100) {
            throw ValidationError("--change-percent must be above 0 and at most 100")
        }
    }

    func run() throws {
        let server = try FixtureServer(try fixtureConfiguration())
        if let dumpGifs {
            let written = try GIFDump.write(server.catalog, to: dumpGifs)
            print("wrote \(written) GIFs to \(dumpGifs)")
            return
        }
        if let changePercent {
            let changed = try server.renewGIFs(percent: changePercent)
            print("changed the GIFs of \(changed.count) exercises")
        }
        try server.start()
        let url = server.rapidAPIBaseURL
        if let portFile {
            try Data("\(server.port)\n".utf8).write(to: URL(fileURLWithPath: portFile), options: .atomic)
        }
        print("listening on \(url)")
        fflush(nil)  // scripts wait for this line; stdout may be a pipe
        TerminationSignals.wait()
        server.stop()
        print("stopped")
    }

    private func fixtureConfiguration() throws -> FixtureConfiguration {
        var configuration = realistic ? FixtureConfiguration.realistic(count: count ?? 1324) : FixtureConfiguration()
        if !realistic, let count { configuration.exerciseCount = count }
        configuration.port = port
        configuration.distinctGIFs = distinctGifs
        configuration.seed = seed
        configuration.latencyMilliseconds = latencyMilliseconds
        configuration.apiKey = apiKey
        configuration.quota = quota
        configuration.recordNesting = recordNesting
        if let ceiling = plan?.maxResolution ?? planMaxResolution { configuration.planMaxResolution = ceiling }
        configuration.maxPageSize = maxPageSize
        configuration.realDataDirectory = realData
        if let gifSizesFrom {
            configuration.gifSizes = try Self.gifSizes(in: gifSizesFrom)
            // As small as the pixels allow (two colours), so the drawn size is mostly padding's to reach.
            configuration.colorsRange = 2...2
            configuration.typicalColors = nil
        }
        return configuration
    }

    /// The sizes of the `.gif` files of `directory`, sorted (none: an error).
    static func gifSizes(in directory: String) throws -> [Int] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".gif") }.sorted()
        let sizes = try names.map { name -> Int in
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")
            return (attributes[.size] as? NSNumber)?.intValue ?? 0
        }.filter { $0 > 0 }
        guard !sizes.isEmpty else { throw ValidationError("--gif-sizes-from \(directory): no .gif file") }
        return sizes
    }
}

extension FixturePlan: ExpressibleByArgument {}
