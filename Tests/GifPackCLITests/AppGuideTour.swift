// The first block of docs/apps.md ("Install, look up, read one GIF"), compiled here and run against
// nginx by AppGuideSketchTests; the lines between the markers are the docs' block, byte for byte.

// BEGIN docs/apps.md: clientTour
import Foundation
import GifPackClient
import GifPackIndexReader

/// Install, look up, trust, and read single GIFs. `indexURL`: where the index is published;
/// `dist`: a build's output folder (for reading a pack in place); `cachesURL`: the app's caches folder.
func clientTour(
    indexURL: String, dist: String, packName: String, exerciseID: String, cachesURL: URL,
    trustedKeyFile: String
) async throws -> (installed: String?, fromPack: [UInt8], onDemand: [UInt8]?) {
    // Install (or upgrade) packs of the index into the app's cache directory.
    let cacheDirectory = cachesURL.appendingPathComponent("exercise-gifs").path
    let installer = PackInstaller(cacheDirectory: cacheDirectory)  // layout: .byID (default) or .byHash
    let report = try await installer.install(from: PackIndexSource(indexURL), packs: [packName])  // nil: every pack
    print("\(report.gifsWritten) GIFs written, \(report.gifsReused) kept, \(report.removed.count) removed")

    // Look GIFs up. InstalledCache pins one generation, so a concurrent upgrade never mixes sets.
    let cache = try InstalledCache(directory: cacheDirectory)
    let installed = cache.gifPath(forExercise: exerciseID)  // nil: no GIF, show the placeholder

    // Trust only indexes signed by your key (two keys while rotating): unsigned, badly signed, expired
    // and rolled-back indexes are refused with PackClientError.untrusted before anything is downloaded.
    var verifying = PackInstaller(cacheDirectory: cacheDirectory)
    verifying.trust = try IndexTrust(keyFiles: [trustedKeyFile])
    _ = try await verifying.install(from: PackIndexSource(indexURL))

    // Or read one GIF straight from a pack file through the index's frame offsets (nothing else is decompressed).
    let index = try await PackIndexSource("\(dist)/index.json").load()
    guard let pack = index.pack(named: packName) else { throw CocoaError(.fileNoSuchFile) }
    let fromPack = try PackEntryReader(path: "\(dist)/\(pack.file)", pack: pack).gif(forExercise: exerciseID)

    // Or one GIF on demand, before (or instead of) installing packs: one range request for its frame,
    // then a bounded disk cache (least recently used GIFs evicted).
    let gifs = LazyGIFCache(
        directory: cachesURL.appendingPathComponent("gif-cache").path, indexURL: indexURL,
        byteLimit: 50 << 20)
    switch try await gifs.gif(forExercise: exerciseID) {
    case .gif(let bytes, _): return (installed, fromPack, bytes)  // show bytes
    case .noGIF: return (installed, fromPack, nil)  // the placeholder; no GIF request was made
    }
}
// END docs/apps.md: clientTour
