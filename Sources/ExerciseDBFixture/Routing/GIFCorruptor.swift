/// Makes the `corruptFrame` fault's GIF: the bytes of a valid GIF whose first image descriptor
/// is moved so the frame lies entirely outside the logical screen (left = screen width, top =
/// screen height). Everything else, including the length, stays the same.
///
/// ```swift
/// let broken = GIFCorruptor.placingFirstFrameOffScreen(gif)   // nil if `gif` is not a GIF
/// ```
enum GIFCorruptor {
    static func placingFirstFrameOffScreen(_ gif: [UInt8]) -> [UInt8]? {
        guard gif.count >= 13, gif.starts(with: Array("GIF".utf8)) else { return nil }
        let screenWidth = Int(gif[6]) | Int(gif[7]) << 8
        let screenHeight = Int(gif[8]) | Int(gif[9]) << 8
        var offset = 13
        if gif[10] & 0x80 != 0 { offset += 3 * (1 << (Int(gif[10] & 0x07) + 1)) }
        while offset < gif.count {
            switch gif[offset] {
            case 0x21:  // extension: introducer, label, data sub-blocks up to a zero-length one
                offset += 2
                while offset < gif.count, gif[offset] != 0 { offset += Int(gif[offset]) + 1 }
                offset += 1
            case 0x2C:  // image descriptor: left and top are the first two little-endian words
                guard offset + 9 < gif.count else { return nil }
                var corrupted = gif
                corrupted[offset + 1] = UInt8(screenWidth & 0xFF)
                corrupted[offset + 2] = UInt8(screenWidth >> 8)
                corrupted[offset + 3] = UInt8(screenHeight & 0xFF)
                corrupted[offset + 4] = UInt8(screenHeight >> 8)
                return corrupted
            default:
                return nil
            }
        }
        return nil
    }
}
