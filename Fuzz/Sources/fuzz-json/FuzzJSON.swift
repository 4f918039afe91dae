import FuzzSupport
@testable import GifPackFormat
@testable import GifPackJSON

/// The JSON parser (linear time, bounded nesting) and what is built on it: the parse in full and
/// with discarded arrays, canonical encoding (its bytes must be a fixed point: parsing and encoding
/// them again gives the same bytes, or packs' digests would drift), and the JSONValue decoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    let limits = JSONLimits(maxDepth: 16, maxBytes: 1 << 20)
    let full: JSONValue
    do { full = try JSONParser.parse(bytes, limits: limits) } catch {
        _ = error.description
        // A document that does not parse must not parse with arrays discarded either.
        Fuzz.require((try? JSONParser.parse(bytes, limits: limits, discardingArraysNamed: ["exercises", "a"])) == nil,
                     "parses only with arrays discarded")
        return 0
    }
    var passedOffsets: [Int] = []
    let trimmed = bytes.withUnsafeBufferPointer { buffer in
        try? JSONParser.parse(buffer, limits: limits, discardingArraysNamed: ["exercises", "a"],
                              passed: { passedOffsets.append($0) })
    }
    Fuzz.require(trimmed != nil, "parses in full but not with arrays discarded")
    Fuzz.require(passedOffsets.allSatisfy { $0 >= 0 && $0 <= bytes.count }, "a passed offset outside the document")
    Fuzz.require(passedOffsets == passedOffsets.sorted(), "passed offsets go backwards")
    if let canonical = try? CanonicalJSON.encode(full) {
        do {
            let again = try JSONParser.parse(canonical, limits: JSONLimits(maxDepth: 16, maxBytes: 4 << 20))
            let second = try CanonicalJSON.encode(again)
            Fuzz.require(second == canonical, "canonical JSON is not a fixed point: \(String(decoding: canonical, as: UTF8.self)) -> \(String(decoding: second, as: UTF8.self))")
        } catch {
            Fuzz.require(false, "canonical JSON does not parse back: \(error)")
        }
    }
    _ = try? JSONValueDecoder.decode(PackIndex.self, from: full)
    _ = try? JSONValueDecoder.decode(PackCatalog.self, from: full)
    _ = try? JSONValueDecoder.decode([String: Int].self, from: full)
    _ = try? JSONValueDecoder.decode([Double?].self, from: full)
    do { _ = try JSONValueDecoder.decode([String: UInt8].self, from: full) } catch { _ = JSONValueDecoder.describe(error) }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzJSON) }
}
