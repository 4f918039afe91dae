// swift-tools-version:6.1
import PackageDescription

// Decode throughput of GifPackZstd (pure Swift) against libzstd, in-process, on the same frames.
// Run through bench/zstd-decoder.sh.
let package = Package(
    name: "zstd-bench",
    dependencies: [.package(name: "gifpack", path: "../..")],
    targets: [
        // The system's libzstd (libzstd-dev), the reference.
        .systemLibrary(name: "CLibzstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .executableTarget(name: "zstd-bench", dependencies: [
            "CLibzstd", .product(name: "GifPackZstd", package: "gifpack"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
