import FuzzSupport
@testable import GifPackGIF

/// A BlurHash as an index or catalog carries it, decoded as the release review draws it
/// (`BlurHashDecoder`): the first two bytes pick the size (sometimes outside 1...64), the third the
/// punch, the rest is the hash. The decoder must refuse exactly what is not a hash — a size out of
/// range, a character outside base 83, a first character above 80 (ten rows of components), a
/// length that does not match the component count it declares (the rules restated here) — and otherwise give a picture of the size asked
/// for, which encodes again (as a BlurHash of the same components, and as the review's small GIF).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBlurHash(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(Fuzz.bytes(data, size))
    let width = Int(input.byte()) % 70
    let height = Int(input.byte()) % 70
    let punch = Double(input.byte()) / 32
    let hash = String(decoding: input.remaining, as: UTF8.self)
    let characters = Array(hash.utf8)
    let digits = characters.compactMap { alphabet.firstIndex(of: $0) }
    let sizeValid = (1...BlurHashDecoder.maxSide).contains(width) && (1...BlurHashDecoder.maxSide).contains(height)
    var valid = sizeValid && digits.count == characters.count && digits.count >= 6
    if valid { valid = digits[0] <= 80 && digits.count == 4 + 2 * (digits[0] % 9 + 1) * (digits[0] / 9 + 1) }
    let image: RGBImage
    do {
        image = try BlurHashDecoder.decode(hash, width: width, height: height, punch: punch)
    } catch {
        Fuzz.require(!valid, "a valid hash \(hash) at \(width)x\(height) was refused: \(error)")
        _ = "\(error)"
        return 0
    }
    Fuzz.require(valid, "an invalid hash \(hash) at \(width)x\(height) was decoded")
    Fuzz.require(image.width == width && image.height == height && image.pixels.count == width * height * 3,
                 "\(width)x\(height) decoded as \(image.width)x\(image.height) with \(image.pixels.count) bytes")
    let again = try? BlurHashEncoder.encode(image, componentsX: digits[0] % 9 + 1, componentsY: digits[0] / 9 + 1)
    Fuzz.require(again?.utf8.count == characters.count, "the decoded picture does not encode again with its components")
    Fuzz.require((try? PosterEncoder.encode(image)) != nil, "the decoded picture does not encode as a GIF")
    return 0
}

private let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzBlurHash) }
}
