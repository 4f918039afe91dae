import Testing
@testable import GifPack
@testable import GifPackTestSupport

@Suite("Manifest", .timeLimit(.minutes(3)))
struct ManifestTests {
    let environment = ["KEY_VAR": "secret-key-123"]

    func load(_ text: String) throws(ManifestError) -> Manifest {
        try ManifestLoader().parse(text, environment: environment)
    }

    func failure(_ text: String) -> ManifestError? {
        do { _ = try load(text) } catch { return error }
        return nil
    }

    let minimal = """
        source:
          kind: exercisedb-rapidapi
          api_key_env: KEY_VAR
        """

    @Test(.computes) func minimalManifestGetsDefaultsAndOnePackOfEverything() throws {
        let manifest = try load(minimal)
        #expect(manifest.source.kind == .rapidAPI)
        #expect(manifest.source.baseURL == "https://exercisedb.p.rapidapi.com")
        #expect(manifest.source.hostHeader == "exercisedb.p.rapidapi.com")
        #expect(manifest.source.resolutions == [.pixels(180)])
        #expect(manifest.source.apiKey?.value == "secret-key-123")
        #expect(manifest.fetch.concurrency == 3)
        #expect(manifest.packs == [PackSpec(name: "all", selector: Selector())])
        #expect(manifest.output.zstdLevel == 9)
    }

    @Test(.computes) func theKeyNeverShowsInDescriptions() throws {
        let manifest = try load(minimal)
        #expect(!String(describing: manifest).contains("secret-key-123"))
        #expect(!String(reflecting: manifest).contains("secret-key-123"))
    }

    @Test(.computes) func shippedManifestsLoad() throws {
        let env = ["EXERCISEDB_API_KEY": "k", "DEMO_EXERCISEDB_KEY": "k"]
        for name in ["exercisedb", "exercisedb-v1", "demo"] {
            let path = #filePath.replacingOccurrences(of: "Tests/GifPackBuilderTests/ManifestTests.swift", with: "manifests/\(name).yaml")
            let manifest = try ManifestLoader().load(path: path, environment: env)
            // Relative to the manifest's folder: the repository root's dist and cache, from any working directory.
            let root = #filePath.replacingOccurrences(of: "Tests/GifPackBuilderTests/ManifestTests.swift", with: "manifests/../")
            #expect(manifest.output.directory.hasPrefix(root + "dist"), "\(manifest.output.directory)")
            #expect(manifest.cache.directory.hasPrefix(root + ".gifpack-cache"), "\(manifest.cache.directory)")
        }
    }

    @Test(.computes) func jsonIsAccepted() throws {
        let manifest = try load(#"{"source": {"kind": "exercisedb-v1", "base_url": "http://127.0.0.1:1/api/v1"}, "packs": [{"name": "a", "selector": {"ids": ["x1"]}}]}"#)
        #expect(manifest.source.kind == .v1)
        #expect(manifest.packs.first?.selector.ids == ["x1"])
    }

    @Test(.computes) func errorsNameTheKeyPath() {
        let packs =
            minimal + """

                packs:
                  - name: one
                  - name: two
                    selector:
                      bodyParts: chest
                """
        #expect(failure(packs) == .unknownKey(path: "packs[1].selector.bodyParts", allowed: ["bodyPart", "equipment", "target", "ids"]))
        #expect(failure(packs)?.description.contains("packs[1].selector.bodyParts") == true)

        #expect(failure(minimal + "\nfetch:\n  concurrency: 8") == .invalidValue(path: "fetch.concurrency", reason: "8 is outside 1...3"))
        #expect(failure(minimal + "\nfetch:\n  concurrency: many") == .wrongType(path: "fetch.concurrency", expected: "an integer"))
        #expect(failure(minimal + "\nfetch:\n  request_timeout: soon")?.description.contains("fetch.request_timeout") == true)
        #expect(failure(minimal + "\noutput:\n  zstd_level: 30")?.description.contains("output.zstd_level") == true)
        #expect(failure(minimal + "\nsurprise: 1") == .unknownKey(path: "surprise", allowed: ["version", "source", "fetch", "packs", "output", "cache", "signing"]))
        #expect(failure("source:\n  kind: exercisedb-rapidapi") == .missingKey(path: "source.api_key_env"))
        #expect(failure("source:\n  kind: flickr")?.description.contains("source.kind") == true)
        #expect(failure(minimal + "\n  resolution: 200")?.description.contains("source.resolution") == true)
        #expect(failure(minimal + "\npacks:\n  - name: ../evil")?.description.contains("packs[0].name") == true)
        #expect(failure(minimal + "\npacks:\n  - name: a\n  - name: a")?.description.contains("packs[1].name") == true)
        #expect(failure(minimal + "\npacks:\n  - name: a\n    selector:\n      ids: [\"../x\"]")?.description.contains("packs[0].selector.ids[0]") == true)
        #expect(failure("source: [1, 2]") == .wrongType(path: "source", expected: "a mapping"))
        #expect(failure("source: {kind: exercisedb-v1, base_url: 'ftp://x'}")?.description.contains("source.base_url") == true)
        #expect(failure("{{{") != nil)
    }

    /// `source.resolutions` is a list of typed resolutions; the older `source.resolution: N` reads
    /// as `[N]`; a bad value, a repeat, an empty list or both keys at once name the key (exit 2).
    @Test(.computes) func resolutionsAreOneTypedListAndTheOldKeyReadsAsOne() throws {
        #expect(try load(minimal + "\n  resolution: 360").source.resolutions == [.pixels(360)])
        #expect(try load(minimal + "\n  resolutions: [720]").source.resolutions == [.pixels(720)])
        #expect(try load(minimal + "\n  resolutions: [720]").source.resolution == .pixels(720))
        let v1 = try load("source: {kind: exercisedb-v1}")
        #expect(v1.source.resolutions == [.sourceDefault])
        #expect(v1.source.resolution.stateKey == 0, "the state keeps the key every earlier gifpack wrote")
        #expect(Resolution.pixels(360).matches(width: 360, height: 270))
        #expect(!Resolution.pixels(360).matches(width: 180, height: 180))
        #expect(Resolution.sourceDefault.matches(width: 180, height: 180))

        #expect(failure(minimal + "\n  resolutions: [180, 200]") == .invalidValue(path: "source.resolutions[1]", reason: "200 is not one of 180, 360, 720, 1080"))
        #expect(failure(minimal + "\n  resolutions: [180, 180]") == .invalidValue(path: "source.resolutions[1]", reason: "180 px appears twice"))
        #expect(failure(minimal + "\n  resolutions: []") == .invalidValue(path: "source.resolutions", reason: "list at least one resolution"))
        #expect(failure(minimal + "\n  resolutions: 180") == .wrongType(path: "source.resolutions", expected: "a list"))
        #expect(failure(minimal + "\n  resolutions: [big]") == .wrongType(path: "source.resolutions[0]", expected: "an integer"))
        #expect(failure(minimal + "\n  resolution: 180\n  resolutions: [180]") == .invalidValue(path: "source", reason: "give resolution or resolutions, not both"))
        #expect(try load(minimal + "\n  resolutions: [360, 180]").source.resolutions == [.pixels(360), .pixels(180)], "in the manifest's order")
        #expect(failure("source: {kind: exercisedb-v1, resolutions: [180]}")?.description.contains("source.resolutions") == true)
    }

    @Test(.computes) func aMissingKeyVariableIsReportedWithoutTheKey() {
        let error = failure("source:\n  kind: exercisedb-rapidapi\n  api_key_env: NOT_SET_ANYWHERE")
        #expect(error == .missingEnvironmentVariable(path: "source.api_key_env", variable: "NOT_SET_ANYWHERE"))
    }

    @Test(.computes) func maxMissingAcceptsCountsAndPercentages() throws {
        #expect(try load(minimal + "\nfetch:\n  max_missing: 3").fetch.maxMissing == .count(3))
        #expect(try load(minimal + "\nfetch:\n  max_missing: 2.5%").fetch.maxMissing == .percent(2.5))
        #expect(MissingAllowance.percent(10).allows(missing: 1, of: 10))
        #expect(!MissingAllowance.percent(10).allows(missing: 2, of: 10))
        #expect(failure(minimal + "\nfetch:\n  max_missing: lots")?.description.contains("fetch.max_missing") == true)
    }

    @Test(.computes) func unitsParse() {
        #expect(UnitParser.duration("500ms") == .milliseconds(500))
        #expect(UnitParser.duration("30d") == .seconds(30 * 86400))
        #expect(UnitParser.duration("-1s") == nil)
        #expect(UnitParser.bytes("8MB") == 8_000_000)
        #expect(UnitParser.bytes("1MiB") == 1 << 20)
        #expect(UnitParser.bytes("12") == 12)
        #expect(UnitParser.bytes("x") == nil)
    }

    /// Every duration, size and count key refuses a value beyond what it can hold with exit 2 and
    /// its key path, instead of trapping on an Int64 overflow.
    @Test(.computes) func hugeNumbersAreRefusedWithTheKeyPath() {
        let durations = [
            "fetch.connect_timeout", "fetch.request_timeout", "fetch.low_speed_time", "fetch.max_duration",
            "fetch.refresh_after", "fetch.missing_ttl", "fetch.retry.base_delay", "fetch.retry.max_delay",
            "fetch.retry.max_retry_after"
        ]
        let sizes = ["fetch.max_gif_bytes", "fetch.max_catalog_bytes"]
        let counts = [
            "fetch.concurrency", "fetch.low_speed_limit", "fetch.max_width", "fetch.max_height", "fetch.max_frames",
            "fetch.max_total_pixels", "fetch.circuit_breaker", "fetch.quota_reserve", "fetch.max_requests",
            "fetch.max_catalog_records", "fetch.retry.max_attempts", "fetch.max_missing",
            "source.resolution", "source.page_size", "output.zstd_level", "output.keep_versions"
        ]
        func manifest(_ path: String, _ value: String) -> String {
            let parts = path.split(separator: ".").map(String.init)
            var text = ""
            for (depth, part) in parts.enumerated() {
                text += String(repeating: "  ", count: depth) + part + ":" + (depth == parts.count - 1 ? " \(value)\n" : "\n")
            }
            if parts[0] == "source" {
                return "source:\n  kind: exercisedb-rapidapi\n  api_key_env: KEY_VAR\n  " + parts[1] + ": \(value)\n"
            }
            return minimal + "\n" + text
        }
        var cases: [(String, String)] = []
        for key in durations {
            for value in ["99999999999999999999s", "99999999999999999999", "1e300ms", "9223372036854775807d", "200000000d"] {
                cases.append((key, value))
            }
        }
        for key in sizes {
            for value in ["99999999999999999999", "99999999999999999999GiB", "1e300B", "9223372036854775808", "16EiB", "9000000000GB"] {
                cases.append((key, value))
            }
        }
        for key in counts {
            for value in ["99999999999999999999", "-99999999999999999999", "9223372036854775808"] {
                cases.append((key, value))
            }
        }
        for (key, value) in cases {
            let error = failure(manifest(key, value))
            #expect(error != nil, "\(key): \(value) was accepted")
            #expect(error?.description.hasPrefix(key) == true, "\(key): \(value) gave \(String(describing: error))")
        }
    }
}

@Suite("Manifest: placeholder and poster settings", .timeLimit(.minutes(3)))
struct PlaceholderManifestTests {
    let minimal = """
        source:
          kind: exercisedb-rapidapi
          api_key_env: KEY
        """

    func failure(_ text: String) -> ManifestError? {
        do {
            _ = try ManifestLoader().parse(text, environment: ["KEY": "k"])
            return nil
        } catch { return error }
    }

    @Test(.computes) func postersAndBlurHashDefaultAndParse() throws {
        let defaults = try ManifestLoader().parse(minimal, environment: ["KEY": "k"])
        #expect(defaults.output.placeholderSettings == PlaceholderSettings(componentsX: 4, componentsY: 3, posterSizes: [80]))
        let custom = try ManifestLoader().parse(
            minimal + "\noutput:\n  posters: [200, 80]\n  blurhash: {x: 5, y: 2}",
            environment: ["KEY": "k"])
        #expect(custom.output.placeholderSettings == PlaceholderSettings(componentsX: 5, componentsY: 2, posterSizes: [80, 200]))
        let none = try ManifestLoader().parse(minimal + "\noutput:\n  posters: []", environment: ["KEY": "k"])
        #expect(none.output.posterSizes.isEmpty)
    }

    @Test(.computes) func badPosterSizesAndComponentsNameTheKeyPath() {
        #expect(failure(minimal + "\noutput:\n  posters: [80, 8]") == .invalidValue(path: "output.posters[1]", reason: "8 is outside 16...512"))
        #expect(failure(minimal + "\noutput:\n  posters: [600]") == .invalidValue(path: "output.posters[0]", reason: "600 is outside 16...512"))
        #expect(failure(minimal + "\noutput:\n  posters: [80, 200, 80]") == .invalidValue(path: "output.posters[2]", reason: "poster size 80 appears twice"))
        #expect(failure(minimal + "\noutput:\n  posters: 80") == .wrongType(path: "output.posters", expected: "a list"))
        #expect(failure(minimal + "\noutput:\n  blurhash: {x: 10}") == .invalidValue(path: "output.blurhash.x", reason: "10 is outside 1...9"))
        #expect(failure(minimal + "\noutput:\n  blurhash: {x: 4, y: 0}") == .invalidValue(path: "output.blurhash.y", reason: "0 is outside 1...9"))
        #expect(failure(minimal + "\noutput:\n  blurhash: {z: 4}") == .unknownKey(path: "output.blurhash.z", allowed: ["x", "y"]))
        #expect(failure(minimal + "\npacks:\n  - name: a\n  - name: a-posters")?.description.contains("packs[1].name") == true)
        #expect(failure(minimal + "\noutput:\n  posters: []\npacks:\n  - name: a\n  - name: a-posters") == nil)
    }
}
