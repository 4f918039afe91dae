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
    // What an app links (GifPackClient) and the two programs. The builder is not a library product:
    // embedding it is neither documented nor tested (docs/ARCHITECTURE.md, "Public API"). The fuzz
    // package (Fuzz/, `make fuzz`) and bench/zstd-bench link the modules they exercise as products
    // of their own, which exist only when GIFPACK_INTERNAL_PRODUCTS is set (their make targets and
    // scripts set it): an app's package resolution never sees them.
    products: [
        .executable(name: "gifpack", targets: ["gifpack"]),
        .executable(name: "exercisedb-fixture", targets: ["exercisedb-fixture"]),
        .library(name: "GifPackClient", targets: ["GifPackClient"]),
    ] + (Context.environment["GIFPACK_INTERNAL_PRODUCTS"] == nil ? [] : [
        "GifPack", "GifPackFormat", "GifPackJSON", "GifPackSigning", "GifPackHTTP", "GifPackTransport", "GifPackIndexReader",
        "GifPackGIFCore", "GifPackZstd",
    ].map { Product.library(name: $0, targets: [$0]) }),
    // The builder's dependencies (GRDB, Yams, swift-argument-parser, swift-log) are the `Builder`
    // trait's, on by default. An app that depends on the package with `traits: []` resolves and
    // clones swift-crypto (and its swift-asn1) alone: docs/apps.md, "Adding the package".
    traits: [
        .trait(name: "Builder", description: "The builder, the command line and the fixture server: GRDB, Yams, swift-argument-parser, swift-log."),
        .default(enabledTraits: ["Builder"]),
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
        // libwebp's animation encoder, mux and animation decoder (libwebpmux and libwebpdemux, which require libwebp).
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
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
        // The WebP rendition's codec (libwebp), the builder's: a GIF's composited frames encoded into
        // an animated WebP under pinned settings, decoded back and compared frame by frame (SSIM).
        .target(name: "GifPackWebP", dependencies: ["GifPackGIF", "CWebP"]),
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
            "GifPackFormat", "GifPackSigning", "GifPackZstd", "GifPackGIF", "GifPackWebP", "GifPackHTTP", "GifPackSystemBuilder", "CArchive", "CZstd",
            // The client's index reader reads --previous-index; the builder does not link the client
            // itself, so a client change does not rebuild the builder or its tests.
            "GifPackIndexReader",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Yams", package: "Yams", condition: .when(traits: ["Builder"])),
            .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Builder"])),
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
            "ExerciseDBFixture", .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Builder"])),
        ]),
        // The command line: every command (one per type), its options, output, logging, progress
        // and run files (metrics, CI summary). A library so that tests can import it.
        .target(name: "GifPackCLI", dependencies: [
            "GifPack", "GifPackClient", "GifPackIndexReader", "GifPackFormat", "GifPackHTTP", "GifPackSystem", .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Builder"])),
            .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Builder"])),
        ]),
        // The `gifpack` executable: its entry point only (malloc settings, then GifPackCLI).
        .executableTarget(name: "gifpack", dependencies: ["GifPackCLI", "CMalloc"]),
        // `make bench`'s install through the library as an app runs it (URLSessionTransport): bench/run.sh, part 9.
        .executableTarget(name: "gifpack-install-bench", dependencies: ["GifPackClient", "GifPackIndexReader"]),
        // `make bench`'s memory of the loader loading GIFs by range against plain URLSession: bench/run.sh, part 11.
        .executableTarget(name: "gifpack-loader-memory-bench", dependencies: ["GifPackClient"]),
        // Test helpers shared by every test target (Tests/GifPackTestSupport): child processes, polling
        // waits, loopback ports, the test traits and tags, temporary folders, hostile-pack writers,
        // source scans. No HTTP client and no server: what the format's tests build besides the format.
        .target(name: "GifPackTestSupport", dependencies: [
            "GifPackFormat", "GifPackGIF", "GifPackSystem", "GIFSynthesis", "CZstd", "CGif", .product(name: "Crypto", package: "swift-crypto"),
        ], path: "Tests/GifPackTestSupport"),
        // The servers the tests talk to over loopback (Tests/GifPackTestServers): nginx, moto,
        // ClientStaticFileServer, headless Chromium, the fixture-server starter.
        .target(name: "GifPackTestServers", dependencies: [
            "GifPackTestSupport", "GifPackHTTP", "GifPackSystem", "ExerciseDBFixture",
        ], path: "Tests/GifPackTestServers"),
        // Dists made by the built `gifpack` binary, run as a child process, for the tests that read,
        // install or publish them (Tests/GifPackDistFixtures): manifests, signing keys, signed dists,
        // upgrade dists, publish builds. It does not compile the builder.
        .target(name: "GifPackDistFixtures", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackFormat", "GifPackSigning", "ExerciseDBFixture",
        ], path: "Tests/GifPackDistFixtures"),
        // Builds in process for the builder's tests, which read a build's report, and the command
        // line's checks of written folders (Tests/GifPackTestFixtures).
        .target(name: "GifPackTestFixtures", dependencies: [
            "GifPackTestSupport", "GifPack", "GifPackFormat", "GifPackSystem",
        ], path: "Tests/GifPackTestFixtures"),
        // One test target per part (docs/ARCHITECTURE.md, "Tests"): each depends on the modules it
        // tests, so a change to the client does not rebuild the builder's or the format's tests.
        .testTarget(name: "GifPackFormatTests", dependencies: [
            "GifPackTestSupport", "GifPackFormat", "GifPackJSON", "GifPackSigning", "GifPackGIF", "GifPackGIFCore", "GifPackZstd",
            "GifPackSystem", "GifPackWebP", "GIFSynthesis",
        ]),
        .testTarget(name: "GifPackBuilderTests", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackDistFixtures", "GifPackTestFixtures", "GifPack", "GifPackFormat", "GifPackJSON", "GifPackSigning", "GifPackGIF",
            "GifPackHTTP", "GifPackSystem", "GifPackZstd", "GifPackWebP", "GifPackIndexReader", "ExerciseDBFixture", "CGif",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Builder"])),
        ]),
        .testTarget(name: "GifPackClientTests", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackDistFixtures", "GifPackClient", "GifPackIndexReader", "GifPackSigning", "GifPackTransport", "GifPackHTTP", "GifPackFormat",
            "GifPackGIF", "GifPackGIFCore", "GifPackSystem", "GifPackZstd", "ExerciseDBFixture", "CZstd",
        ]),
        .testTarget(name: "GifPackCLITests", dependencies: [
            "GifPackTestSupport", "GifPackTestServers", "GifPackDistFixtures", "GifPackTestFixtures", "GifPackCLI", "GifPack", "GifPackClient", "GifPackIndexReader", "GifPackSigning", "GifPackFormat", "GifPackGIF",
            "GifPackHTTP", "GifPackTransport", "GifPackSystem", "GifPackZstd", "ExerciseDBFixture",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
