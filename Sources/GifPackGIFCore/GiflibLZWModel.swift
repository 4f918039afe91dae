/// A frame's LZW data read exactly as giflib 5.2's decoder (`DGifDecompressLine` and
/// `DGifBufferedInput`, called row by row through `DGifGetLine`) reads it, counting the pixels each
/// code stands for instead of writing them, and failing where giflib fails.
///
/// ``GIFWalker`` reads each frame with ``LZWPixelCounter`` first; this model is the slow path for
/// a frame the counter does not vouch for (an irregular stream), as ``GIFInspector`` falls back to
/// giflib's own decoder. It keeps giflib's prefix table and traces each code's string to its first
/// pixel as giflib does (so its cost follows the pixels, not the compressed bytes), which is what it
/// takes to know when giflib calls an image defective: an unknown code right after a clear code, a
/// string of 4,095 pixels or more, a trace that reaches a code not in the table, an empty sub-block
/// before the last pixel, or the end code before the last pixel. An unknown code that is none of
/// these giflib decodes as if it were the next code (garbage pixels, but no error), and so does
/// this model.
struct GiflibLZWModel {
    /// giflib's `LZ_MAX_CODE` and `NO_SUCH_CODE`.
    private static let maxCode = 4095
    private static let noSuchCode = 4098

    enum Failure: Error, Equatable {
        /// The data ends (the file is cut short).
        case truncated
        /// giflib refuses the frame; `pixel` is how many pixels it had decoded.
        case defect(String, pixel: Int)
    }

    /// Reads the frame data whose first sub-block length byte is at `bytes[position]`, for a frame
    /// of `pixels` pixels and LZW minimum code size `codeSize` (0...11, giflib refuses 12 and up);
    /// returns the position after the block terminator.
    static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, from position: Int, codeSize: Int,
        pixels: Int
    ) throws(Failure) -> Int {
        var position = position
        var blockLeft = 0
        let clear = 1 << codeSize, end = clear + 1
        var running = end + 1, bits = codeSize + 1, max1 = 1 << bits
        var last = noSuchCode
        var shiftWord = 0, shiftState = 0
        var produced = 0
        var prefix = [Int](repeating: noSuchCode, count: maxCode + 1)
        /// The highest table entry set since the last clear code.
        var highest = end

        /// `DGifBufferedInput`: the next byte of the data, the next sub-block read when one ends.
        func nextByte() throws(Failure) -> Int {
            if blockLeft == 0 {
                guard position < bytes.count else { throw .truncated }
                blockLeft = Int(bytes[position])
                position += 1
                guard blockLeft > 0 else {
                    throw .defect("the image data ends (empty sub-block) before its last pixel", pixel: produced)
                }
                guard bytes.count - position >= blockLeft else { throw .truncated }
            }
            let byte = Int(bytes[position])
            position += 1
            blockLeft -= 1
            return byte
        }

        while produced < pixels {
            while shiftState < bits {
                shiftWord |= try nextByte() << shiftState
                shiftState += 8
            }
            let code = shiftWord & ((1 << bits) - 1)
            shiftWord >>= bits
            shiftState -= bits
            if running < maxCode + 2 {
                running += 1
                if running > max1, bits < 12 {
                    max1 <<= 1
                    bits += 1
                }
            }
            if code == end {
                throw .defect("the end code comes before the image's last pixel", pixel: produced)
            }
            if code == clear {
                // giflib empties the whole table; only entries up to `highest` were set since the
                // last clear, so a stream of clear codes costs in proportion to its codes.
                if highest > end {
                    for index in (end + 1)...highest { prefix[index] = noSuchCode }
                }
                highest = end
                running = end + 1
                bits = codeSize + 1
                max1 = 1 << bits
                last = noSuchCode
                continue
            }
            if code < clear {
                produced += 1
            } else {
                var stack = 0
                var crntPrefix: Int
                if prefix[code] == noSuchCode {
                    crntPrefix = last
                    stack += 1
                } else {
                    crntPrefix = code
                }
                while stack < maxCode, crntPrefix > clear, crntPrefix <= maxCode {
                    stack += 1
                    crntPrefix = prefix[crntPrefix]
                }
                if stack >= maxCode || crntPrefix > maxCode {
                    throw .defect("an LZW code stands for no string (the image is defective)", pixel: produced)
                }
                produced += stack + 1
            }
            if last != noSuchCode, running - 2 <= maxCode, prefix[running - 2] == noSuchCode {
                prefix[running - 2] = last
                highest = max(highest, running - 2)
            }
            last = code
        }
        // The rest of the current sub-block was read with it; then sub-blocks up to the terminator.
        position += blockLeft
        return try skipSubBlocks(bytes, from: position)
    }

    /// Skips data sub-blocks up to and including the terminator; returns the position after it.
    static func skipSubBlocks(_ bytes: UnsafeBufferPointer<UInt8>, from position: Int) throws(Failure) -> Int {
        var position = position
        while true {
            guard position < bytes.count else { throw .truncated }
            let length = Int(bytes[position])
            position += 1
            if length == 0 { return position }
            guard bytes.count - position >= length else { throw .truncated }
            position += length
        }
    }
}
