import FuzzSupport
@testable import GifPackFormat
@testable import GifPackJSON

/// A pack's `catalog.json` read as the release review reads it (`PackCatalogStream`: one exercise at
/// a time, as the decompressed chunks come). The first byte picks the chunk size; the rest is the
/// catalog. Read in those chunks and read whole, the stream must give the same exercises and the same
/// verdict (a chunk boundary never changes what is read), and where the whole-document decoder
/// (`PackCatalog.decode`) and the stream both accept a catalog, they give the same exercises.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalogStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(Fuzz.bytes(data, size))
    let chunk = Int(input.byte()) % 64 + 1
    let bytes = input.remaining
    let whole = read(bytes, chunk: max(bytes.count, 1))
    let chunked = read(bytes, chunk: chunk)
    Fuzz.require(whole.exercises == chunked.exercises && whole.accepted == chunked.accepted,
                 "read in chunks of \(chunk) bytes the catalog reads otherwise: \(chunked.accepted) against \(whole.accepted)")
    if whole.accepted, let decoded = try? PackCatalog.decode(from: bytes) {
        Fuzz.require(decoded.exercises == whole.exercises, "the stream and the whole-document decoder disagree")
    }
    return 0
}

private func read(_ bytes: [UInt8], chunk: Int) -> (exercises: [PackExercise], accepted: Bool) {
    var stream = PackCatalogStream(maxExerciseBytes: 1 << 16)
    var exercises: [PackExercise] = []
    do {
        var start = 0
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            try bytes[start..<end].withUnsafeBytes { buffer in try stream.feed(buffer) { exercises.append($0) } }
            start = end
        }
        _ = try stream.finish()
        return (exercises, true)
    } catch {
        _ = "\(error)"
        return (exercises, false)
    }
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzCatalogStream) }
}
