// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for every reader of untrusted bytes (see Fuzz/README.md). Not part of the main
// package: `swift build` / `swift test` never see it. Build and run them with `make fuzz`, which
// builds this package with its own scratch path and
// `-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing`, so every
// module of the main package is instrumented for coverage and checked by AddressSanitizer, and the
// targets can reach internal and `package` parsers with `@testable import` instead of widening the
// public API. The main package declares the library products linked here only when
// GIFPACK_INTERNAL_PRODUCTS=1 is set (`make fuzz` sets it).
//
// Each target is an executable with `@_cdecl("LLVMFuzzerTestOneInput")` and an `@main` that hands it
// to libFuzzer's driver (Sources/CFuzzDriver/include/CFuzzDriver.h says why libFuzzer's own main is not used).

let fuzzTargets: [(name: String, dependencies: [String])] = [
    ("fuzz-json", ["GifPackJSON", "GifPackFormat"]),
    ("fuzz-catalog", ["GifPack", "GifPackFormat", "GifPackJSON"]),
    ("fuzz-gif", ["GifPack", "GifPackGIFCore"]),
    // The client's WebP container walker (GifPackGIFCore).
    ("fuzz-webp", ["GifPack", "GifPackGIFCore"]),
    ("fuzz-lzw", ["GifPack"]),
    ("fuzz-still", ["GifPack", "GifPackGIFCore"]),
    ("fuzz-blurhash", ["GifPack"]),
    ("fuzz-tar", ["GifPackFormat"]),
    ("fuzz-zstd-frames", ["GifPackFormat"]),
    ("fuzz-minisign", ["GifPackSigning"]),
    ("fuzz-s3-list", ["GifPackHTTP"]),
    ("fuzz-http-head", ["GifPackHTTP", "GifPackClient", "GifPackIndexReader", "GifPackTransport"]),
    ("fuzz-index", ["GifPackFormat", "GifPackClient", "GifPackIndexReader", "GifPackJSON", "GifPackSigning"]),
    ("fuzz-catalog-stream", ["GifPackFormat"]),
    ("fuzz-index-stream", ["GifPackFormat"]),
    // GifPackZstd against libzstd (CZstd, through GifPack).
    ("fuzz-zstd-diff", ["GifPack", "GifPackZstd"]),
]

let package = Package(
    name: "gifpack-fuzz",
    dependencies: [.package(name: "gifpack", path: "..")],
    targets: [
        .target(name: "CFuzzDriver"),
        // FuzzSupport compresses with libzstd (the CZstd module, which GifPack depends on).
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver", .product(name: "GifPack", package: "gifpack")]),
    ] + fuzzTargets.map { target in
        .executableTarget(name: target.name,
                          dependencies: ["FuzzSupport"] + target.dependencies.map { .product(name: $0, package: "gifpack") })
    },
    swiftLanguageModes: [.v6]
)
