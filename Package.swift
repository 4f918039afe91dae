// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "gifpack",
    // Built and tested on Linux (Debian 12). The builder, the CLI and the fixture end in `#error`
    // elsewhere (their Platform.swift). Product `GifPackClient` is the one apps link, written for
    // Apple platforms too: its closure is Swift, Foundation and swift-crypto only, and needs
    // nothing newer than the minimums below (ClientPortabilityTests and ClientPlatformFloorTests
    // enforce both: no Synchronization, no `Duration` or clocks, no typed-throws function-type
    // metadata, which need iOS 16 to 18). This machine cannot compile for Apple platforms;
    // .github/workflows/apple.yml does (swift build on macOS, xcodebuild for the iOS Simulator).
    // The minimums do not constrain Linux. See README.md, "Platforms".
    platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .executable(name: "gifpack", targets: ["gifpack"]),
        .executable(name: "exercisedb-fixture", targets: ["exercisedb-fixture"]),
        .library(name: "GifPack", targets: ["GifPack"]),
        .library(name: "GifPackFormat", targets: ["GifPackFormat"]),
        .library(name: "GifPackJSON", targets: ["GifPackJSON"]),
        .library(name: "GifPackSigning", targets: ["GifPackSigning"]),
        .library(name: "GifPackHTTP", targets: ["GifPackHTTP"]),
        .library(name: "GifPackTransport", targets: ["GifPackTransport"]),
        .library(name: "GifPackIndexReader", targets: ["GifPackIndexReader"]),
        .library(name: "GifPackClient", targets: ["GifPackClient"]),
        .library(name: "GifPackZstd", targets: ["GifPackZstd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // System libraries (Debian -dev packages); the headers add small inline shims.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        .systemLibrary(name: "CGif", pkgConfig: "libgif", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // glibc's mallopt, for the command-line tool's memory settings.
        .systemLibrary(name: "CMalloc"),

        // The one home of the small system helpers every module needs: hex, POSIX read/write
        // loops, blocking work on dedicated threads, file-system operations. In the portable
        // client's closure: its C library calls are in its Platform.swift (Glibc or Darwin).
        .target(name: "GifPackSystem"),
        // The builder's own system helpers (build lock, mapped files, write-behind flushing): Linux
        // only, kept out of the portable client's closure.
        .target(name: "GifPackSystemBuilder", dependencies: ["GifPackSystem"]),
        // zstd decompression (RFC 8878) in pure Swift: no C, no system library.
        .target(name: "GifPackZstd"),
        // Bounded JSON in pure Swift: the parser (limits on depth and size), JSONValue, its
        // decoder, canonical JSON. In the portable client's closure.
        .target(name: "GifPackJSON", dependencies: ["GifPackSystem"]),
        // minisign signatures (Ed25519 over BLAKE2b-512) in pure Swift with swift-crypto: keys,
        // signing, verification. In the portable client's closure.
        .target(name: "GifPackSigning", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // The contract between builder and client: index and pack models, pack reader
        // (re-exports GifPackJSON, whose limits and values its API speaks).
        .target(name: "GifPackFormat", dependencies: [
            "GifPackSystem", "GifPackJSON", "GifPackZstd", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // GIF structural walking in pure Swift (no C): the value types and the LZW pixel counter,
        // and GIFWalker, the client's GIF check.
        .target(name: "GifPackGIFCore"),
        // GIF structural decoding (giflib) and the placeholder and poster code, the builder's.
        .target(name: "GifPackGIF", dependencies: ["GifPackGIFCore", "GifPackSystem", "CGif"]),
        // The HTTP value types and the HTTPTransport protocol, with URLSessionTransport: pure Swift
        // and Foundation (FoundationNetworking on Linux), what the portable client links; body files
        // are opened through GifPackSystem's RegularFile.
        .target(name: "GifPackTransport", dependencies: ["GifPackSystem", .product(name: "Crypto", package: "swift-crypto")]),
        // Async HTTP over libcurl's multi interface (re-exports GifPackTransport; HTTPClient is an HTTPTransport).
        .target(name: "GifPackHTTP", dependencies: [
            "GifPackTransport", "GifPackSystem", "CCurl", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The builder.
        .target(name: "GifPack", dependencies: [
            "GifPackFormat", "GifPackSigning", "GifPackZstd", "GifPackGIF", "GifPackHTTP", "GifPackSystemBuilder", "CArchive", "CZstd",
            // The client's index reader reads --previous-index; the builder does not link the client
            // itself, so a client change does not rebuild the builder or its tests.
            "GifPackIndexReader",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Yams", package: "Yams"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ], swiftSettings: [
            // The crash-point test hook (GIFPACK_CRASH_AT) exists only in debug builds, which is
            // what `swift test` builds; release builds do not contain it.
            .define("GIFPACK_CRASH_POINTS", .when(configuration: .debug)),
        ]),
        // The client's index and trust steps: PackIndexSource (index.json.zst or index.json, a
        // local path or a URL, the format's rules checked), IndexTrust (signatures, expiry,
        // rollback), PackLimits, PackClientError, PackRejection. In the portable client's closure;
        // the client re-exports it, and the builder reads --previous-index with it.
        .target(name: "GifPackIndexReader", dependencies: [
            "GifPackFormat", "GifPackSigning", "GifPackTransport", "GifPackSystem", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // What an app links: fetch, verify and install packs (re-exports GifPackIndexReader).
        .target(name: "GifPackClient", dependencies: [
            "GifPackIndexReader", "GifPackFormat", "GifPackSigning", "GifPackGIFCore", "GifPackTransport", "GifPackZstd", "GifPackSystem",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Deterministic animated GIFs made with giflib's encoder (GIFSynthesizer, SplitMix64): what the
        // fixture serves and the format's tests decode, a module of its own so that those tests do not
        // compile the fixture server.
        .target(name: "GIFSynthesis", dependencies: ["GifPackGIF", "CGif"]),
        // Loopback ExerciseDB stand-in with switchable faults (re-exports GIFSynthesis).
        .target(name: "ExerciseDBFixture", dependencies: [
            "GIFSynthesis", "GifPackGIF", "GifPackSystem", "CGif", "CZstd", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .executableTarget(name: "exercisedb-fixture", dependencies: [
            "ExerciseDBFixture", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The command line: every command (one per type), its options, output, logging, progress
        // and run files (metrics, CI summary). A library so that tests can import it.
        .target(name: "GifPackCLI", dependencies: [
            "GifPack", "GifPackClient", "GifPackHTTP", "GifPackSystem", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The `gifpack` executable: its entry point only (malloc settings, then GifPackCLI).
        .executableTarget(name: "gifpack", dependencies: ["GifPackCLI", "CMalloc"]),
        // `make bench`'s install through the library as an app runs it (URLSessionTransport): bench/run.sh, part 9.
        .executableTarget(name: "gifpack-install-bench", dependencies: ["GifPackClient"]),
        // `make bench`'s memory of the loader loading GIFs by range against plain URLSession: bench/run.sh, part 11.
        .executableTarget(name: "gifpack-loader-memory-bench", dependencies: ["GifPackClient"]),
        // Test helpers shared by every test target (Tests/GifPackTestSupport): child processes, polling
        // waits, loopback ports, the test traits and tags, temporary folders, hostile-pack writers,
        // source scans. No HTTP client and no server: what the format's tests build besides the format.
        .target(name: "GifPackTestSupport", dependencies: [
            "GifPackFormat", "GifPackGIF", "GifPackSystem", "CZstd", "CGif", .product(name: "Crypto", package: "swift-crypto"),
        ], path: "Tests/GifPackTestSupport"),
        // The servers the tests talk to over loopback (Tests/GifPackTestServers): nginx, moto,
        // ClientStaticFileServer, headless Chromium, the fixture-server starter.
        .target(name: "GifPackTestServers", dependencies: [
            "GifPackTestSupport", "GifPackHTTP", "GifPackSystem", "ExerciseDBFixture",
        ], path: "Tests/GifPackTestServers"),
        // Dists built by the real builder for the tests that read, install or publish them
        // (Tests/GifPackTestFixtures): manifests, signed dists, upgrade dists, publish builds.
        .target(name: "GifPackTestFixtures", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPack", "GifPackFormat", "GifPackGIF", "GifPackSystem", "ExerciseDBFixture",
        ], path: "Tests/GifPackTestFixtures"),
        // One test target per part (docs/ARCHITECTURE.md, "Tests"): each depends on the modules it
        // tests, so a change to the client does not rebuild the builder's or the format's tests.
        .testTarget(name: "GifPackFormatTests", dependencies: [
            "GifPackTestSupport", "GifPackFormat", "GifPackJSON", "GifPackSigning", "GifPackGIF", "GifPackGIFCore", "GifPackZstd",
            "GifPackSystem", "GIFSynthesis",
        ]),
        .testTarget(name: "GifPackBuilderTests", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackTestFixtures", "GifPack", "GifPackFormat", "GifPackJSON", "GifPackSigning", "GifPackGIF",
            "GifPackHTTP", "GifPackSystem", "GifPackZstd", "ExerciseDBFixture", "CGif",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "GifPackClientTests", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackTestFixtures", "GifPackClient", "GifPackTransport", "GifPackHTTP", "GifPack", "GifPackFormat",
            "GifPackGIF", "GifPackGIFCore", "GifPackSystem", "GifPackZstd", "ExerciseDBFixture", "CZstd",
        ]),
        .testTarget(name: "GifPackCLITests", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackTestFixtures", "GifPackCLI", "GifPack", "GifPackClient", "GifPackFormat", "GifPackGIF",
            "GifPackHTTP", "GifPackTransport", "GifPackSystem", "GifPackZstd", "ExerciseDBFixture",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
