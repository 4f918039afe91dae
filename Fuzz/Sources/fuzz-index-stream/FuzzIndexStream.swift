import FuzzSupport
@testable import GifPackFormat
@testable import GifPackJSON

/// An `index.json` read as the client reads it (`PackIndexStream`: each exercise parsed alone, no
/// JSON tree of the lists). The first byte picks the chunk size; the rest is the index. Read in
/// those chunks and read whole, the stream must give the same index or refuse both times (a chunk
/// boundary never changes what is read), and the whole-document decoder (`PackIndex.decode`) must
/// accept exactly what the stream accepts, with the same index.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndexStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(Fuzz.bytes(data, size))
    let chunk = Int(input.byte()) % 64 + 1
    let bytes = input.remaining
    let whole = read(bytes, chunk: max(bytes.count, 1))
    let chunked = read(bytes, chunk: chunk)
    Fuzz.require(whole == chunked, "read in chunks of \(chunk) bytes the index reads otherwise")
    // (An exercise over PackIndexStream.maxExerciseBytes is the one thing only the stream refuses.)
    guard bytes.count <= PackIndexStream.maxExerciseBytes else { return 0 }
    let decoded = try? PackIndex.decode(bytes: bytes)
    Fuzz.require(decoded == whole, "the stream and the whole-document decoder disagree: \(decoded == nil ? "only the stream" : whole == nil ? "only the whole decoder" : "both") accept")
    return 0
}

private func read(_ bytes: [UInt8], chunk: Int) -> PackIndex? {
    var stream = PackIndexStream()
    do {
        var start = 0
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            try stream.feed(Array(bytes[start..<end]))
            start = end
        }
        return try stream.finish()
    } catch {
        _ = "\(error)"
        return nil
    }
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzIndexStream) }
}
