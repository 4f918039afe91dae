import Foundation
import FuzzSupport
@testable import GifPackClient
@testable import GifPackIndexReader
@testable import GifPackFormat
@testable import GifPackJSON
@testable import GifPackSigning

/// index.json as a client meets it: decoded in full and with exercise lists omitted (which must
/// agree when the full decode succeeds), checked against the format's rules, re-encoded (what decodes must encode to an index that
/// decodes to the same thing), and accepted or refused by IndexTrust after a valid signature (the
/// target signs each input with a key of its own, so the checks after the signature are reached).
/// The index bytes are also read as an `index.json.zst` copy, and compressed into one that must
/// decode back to them. Bytes after the first NUL (never valid inside JSON) are a catalog.json, decoded and compared with
/// each pack of the index as CatalogCheck does, and a posters catalog.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIndex(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let indexBytes = Array(parts[0])
    let catalogBytes = parts.count > 1 ? Array(parts[1]) : []
    let limits = JSONLimits(maxDepth: JSONLimits.standardDepth, maxBytes: 1 << 20)

    let full = try? PackIndex.decode(bytes: indexBytes, limits: limits)
    let trimmed = try? PackIndex.decode(bytes: indexBytes, limits: limits, omittingExercises: true)
    // Omitted exercise lists are checked as JSON only, not as exercises: omitting may accept more.
    Fuzz.require(full == nil || trimmed != nil, "decodes in full but not with exercises omitted")
    if let full, var trimmed {
        for index in trimmed.packs.indices { trimmed.packs[index].exercises = full.packs[index].exercises }
        Fuzz.require(trimmed == full, "omitting exercises changes more than the exercise lists")
    }

    // index.json.zst as a client meets it: the input as a copy (refused with a reason or decoded within
    // the limit), and the input compressed as a pack frame, which must decode to exactly the input.
    do {
        let plain = try CompressedIndex.decode(indexBytes, maxBytes: 1 << 20)
        Fuzz.require(plain.count <= 1 << 20, "a copy decoded to \(plain.count) bytes past its 1 MiB limit")
    } catch {
        _ = error.description
    }
    if !indexBytes.isEmpty {
        let copy = Fuzz.zstdFrame(indexBytes)
        Fuzz.require((try? CompressedIndex.decode(copy, maxBytes: Int64(indexBytes.count))) == indexBytes,
                     "a compressed copy does not decode to the index it was made from")
        Fuzz.require((try? CompressedIndex.decode(copy, maxBytes: Int64(indexBytes.count) - 1)) == nil,
                     "a copy larger than the limit was decoded")
    }

    let packLimits = PackLimits(maxIndexBytes: 1 << 20, maxCatalogBytes: 1 << 20, maxGIFBytes: 1 << 20, maxPackBytes: 1 << 30)
    let checked: PackIndex?
    do { checked = try PackIndexSource.decode(Data(indexBytes), limits: packLimits) } catch {
        _ = error.description
        checked = nil
    }
    if let full {
        let again = try? PackIndex.decode(bytes: full.encodedBytes(), limits: JSONLimits(maxDepth: JSONLimits.standardDepth, maxBytes: 8 << 20))
        Fuzz.require(again == full, "an index that decodes does not survive encoding: \(String(decoding: full.encodedBytes().prefix(400), as: UTF8.self))")
        for pack in full.packs {
            _ = PackDescriptionCheck.problems(in: pack, limits: packLimits)
            _ = pack.gifEntry(forExercise: "0001")
        }
    }

    if let signature = try? Keys.secret.sign(indexBytes, trustedComment: "timestamp:0\tfile:index.json").fileText {
        let trust = IndexTrust(keys: [Keys.secret.publicKey], now: Date(timeIntervalSince1970: 1_700_000_000))
        for installed in [nil, 5] as [Int?] {
            do {
                let index = try trust.verify(indexBytes: Data(indexBytes), signature: Data(signature.utf8), location: "fuzz/index.json",
                                             installedSequence: installed, limits: packLimits)
                Fuzz.require(index == checked, "IndexTrust accepts an index the rules refuse")
            } catch {
                _ = error.description
            }
        }
    }

    guard parts.count > 1 else { return 0 }
    do {
        let catalog = try PackCatalog.decode(from: catalogBytes, limits: limits)
        for pack in (checked ?? full)?.packs ?? [] { _ = CatalogCheck.problems(catalog, pack: pack) }
    } catch {
        _ = JSONValueDecoder.describe(error)
    }
    do { _ = try PosterPackCatalog.decode(from: catalogBytes, limits: limits) } catch { _ = JSONValueDecoder.describe(error) }
    return 0
}

private enum Keys {
    static let secret = MinisignSecretKey.generate()
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzIndex) }
}
