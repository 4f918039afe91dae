// Huffman-coded literals (RFC 8878, 4.2): the tree description (weights, direct or FSE-compressed),
// a single-symbol decoding table laid out for 11 bits (shorter codes are replicated), or 12 for a
// 12-bit tree, and the one- and four-stream decoders.

/// Largest code length accepted. RFC 8878 says 11, but libzstd decodes trees of up to 12 bits
/// (HUF_TABLELOG_MAX), so a 12-bit tree is accepted too, as libzstd does.
let huffmanMaxBits = 12
/// Bits of the decoding table's usual layout (libzstd's fast-loop table log).
let huffmanFastBits = 11
/// Capacity of the decoding table: `(symbol << 8) | codeLength`, indexed by the next
/// `huffmanTableBits` bits (11, or 12 for a 12-bit tree).
let huffmanTableSize = 1 << huffmanMaxBits

extension DecoderContext {
    /// Reads a Huffman tree description at `base[0..<size]` and builds `huffmanTable`.
    /// Returns the bytes used.
    func readHuffmanTree(base: UnsafePointer<UInt8>, size: Int, at: Int) throws(ZstdDecodingError) -> Int {
        guard size >= 1 else {
            throw ZstdDecodingError(.truncated, "Huffman tree description is missing", offset: at)
        }
        let header = Int(base[0])
        var weightCount = 0
        let used: Int
        let weights = huffmanWeights
        if header >= 128 {
            // Direct representation: 4 bits per weight.
            weightCount = header - 127
            let bytes = (weightCount + 1) / 2
            guard 1 + bytes <= size else {
                throw ZstdDecodingError(.truncated, "Huffman weights run past the literals section", offset: at)
            }
            for i in 0..<weightCount {
                let b = base[1 + i / 2]
                weights[i] = i & 1 == 0 ? b >> 4 : b & 15
            }
            used = 1 + bytes
        } else {
            let compressedSize = header
            guard compressedSize >= 1, 1 + compressedSize <= size else {
                throw ZstdDecodingError(.truncated, "FSE-compressed Huffman weights (\(compressedSize) bytes) run past the literals section", offset: at)
            }
            weightCount = try decodeWeights(base: base + 1, size: compressedSize, at: at + 1)
            used = 1 + compressedSize
        }
        try buildHuffmanTable(weightCount: weightCount, at: at)
        return used
    }

    /// FSE-decodes Huffman weights (two interleaved states over one backward stream).
    private func decodeWeights(base: UnsafePointer<UInt8>, size: Int, at: Int) throws(ZstdDecodingError) -> Int {
        let description = try FSE.readNormalizedCounts(
            base: base, size: size, at: at, maxSymbol: 255, maxLog: 6, what: "Huffman weights",
            counts: normalizedCounts)
        try FSE.build(
            counts: normalizedCounts, symbols: description.symbols, log: description.log, at: at,
            what: "Huffman weights", tableSymbols: scratchSymbols, tableBits: scratchBits,
            tableStates: scratchStates, next: scratchNext)
        let streamSize = size - description.bytes
        guard streamSize >= 1 else {
            throw ZstdDecodingError(.truncated, "FSE-compressed Huffman weights have no bitstream", offset: at)
        }
        let stream = base + description.bytes
        guard stream[streamSize - 1] != 0 else {
            throw ZstdDecodingError(.corrupt, "Huffman weights bitstream has no end marker", offset: at + size - 1)
        }
        let log = UInt64(description.log)
        var bits = BackwardBitReader(start: stream, size: streamSize)
        var state1 = Int(bits.read(log))
        var state2 = Int(bits.read(log))
        bits.reload()
        let symbols = scratchSymbols, nb = scratchBits, states = scratchStates
        let weights = huffmanWeights
        var count = 0
        // States stay below 1 << log (64) whatever bits are read, so lookups stay in the table.
        while true {
            guard count <= 253 else {
                throw ZstdDecodingError(.corrupt, "more than 255 Huffman weights", offset: at)
            }
            weights[count] = symbols[state1]
            count += 1
            state1 = Int(states[state1]) + Int(bits.read(UInt64(nb[state1])))
            bits.reload()
            if bits.isOverflowed {
                weights[count] = symbols[state2]
                count += 1
                break
            }
            weights[count] = symbols[state2]
            count += 1
            state2 = Int(states[state2]) + Int(bits.read(UInt64(nb[state2])))
            bits.reload()
            if bits.isOverflowed {
                weights[count] = symbols[state1]
                count += 1
                break
            }
        }
        return count
    }

    /// Completes the weights with the implied last one and fills `huffmanTable` (11-bit layout, 12 for a 12-bit tree).
    private func buildHuffmanTable(weightCount: Int, at: Int) throws(ZstdDecodingError) {
        let weights = huffmanWeights
        guard weightCount >= 1, weightCount <= 255 else {
            throw ZstdDecodingError(.corrupt, "Huffman tree has \(weightCount + 1) symbols", offset: at)
        }
        var rankCount = [Int](repeating: 0, count: 13)
        var total = 0
        for i in 0..<weightCount {
            let w = Int(weights[i])
            guard w <= huffmanMaxBits else {
                throw ZstdDecodingError(.corrupt, "Huffman weight \(w) exceeds \(huffmanMaxBits)", offset: at)
            }
            rankCount[w] += 1
            if w > 0 { total += 1 << (w - 1) }
        }
        guard total > 0 else {
            throw ZstdDecodingError(.corrupt, "Huffman weights are all zero", offset: at)
        }
        let tableLog = (Int.bitWidth - 1 - total.leadingZeroBitCount) + 1
        guard tableLog <= huffmanMaxBits else {
            throw ZstdDecodingError(.corrupt, "Huffman codes longer than \(huffmanMaxBits) bits", offset: at)
        }
        let rest = (1 << tableLog) - total
        guard rest > 0, rest & (rest - 1) == 0 else {
            throw ZstdDecodingError(.corrupt, "Huffman weights do not form a complete tree", offset: at)
        }
        let lastWeight = (Int.bitWidth - 1 - rest.leadingZeroBitCount) + 1
        weights[weightCount] = UInt8(lastWeight)
        rankCount[lastWeight] += 1
        guard rankCount[1] >= 2, rankCount[1] & 1 == 0 else {
            throw ZstdDecodingError(.corrupt, "Huffman weights give an odd number of longest codes", offset: at)
        }
        let symbolCount = weightCount + 1
        // Codes of weight w take (1 << (w - 1)) entries of a tableLog table, replicated
        // 1 << (11 - tableLog) times in the 11-bit layout (none in the 12-bit one); lowest weights
        // first, then symbol order.
        let layoutBits = max(huffmanFastBits, tableLog)
        let scale = layoutBits - tableLog
        var rankStart = [Int](repeating: 0, count: 13)
        var next = 0
        for w in 1...huffmanMaxBits {
            rankStart[w] = next
            next += rankCount[w] << (w - 1 + scale)
        }
        // next == 1 << layoutBits here, since the weights form a complete tree.
        let table = huffmanTable
        for s in 0..<symbolCount {
            let w = Int(weights[s])
            if w == 0 { continue }
            let length = 1 << (w - 1 + scale)
            let entry = UInt16(truncatingIfNeeded: (s << 8) | (tableLog + 1 - w))
            let startIndex = rankStart[w]
            for i in startIndex..<(startIndex + length) { table[i] = entry }
            rankStart[w] = startIndex + length
        }
        huffmanTableBits = layoutBits
        hasHuffmanTable = true
    }

    /// Decodes one Huffman stream of `size` bytes into `count` literals at `out`.
    func decodeHuffmanStream(
        _ stream: UnsafePointer<UInt8>, size: Int, into out: UnsafeMutablePointer<UInt8>, count: Int, at: Int
    ) throws(ZstdDecodingError) {
        guard size >= 1 else {
            throw ZstdDecodingError(.corrupt, "empty Huffman stream", offset: at)
        }
        guard stream[size - 1] != 0 else {
            throw ZstdDecodingError(.corrupt, "Huffman stream has no end marker", offset: at + size - 1)
        }
        let table = UnsafePointer(huffmanTable)
        let tableBits = UInt64(huffmanTableBits)
        var bits = BackwardBitReader(start: stream, size: size)
        var op = out
        let end = out + count
        // Four symbols (at most 48 bits) per reload while the container is refilled from the fast branch.
        while bits.isFarFromStart && end - op >= 4 {
            for k in 0..<4 {
                let e = table[Int(bits.peek(tableBits))]
                bits.bitsConsumed &+= UInt64(e & 0xFF)
                op[k] = UInt8(truncatingIfNeeded: e &>> 8)
            }
            op += 4
            bits.reload()
        }
        while op < end {
            let e = table[Int(bits.peek(tableBits))]
            bits.bitsConsumed &+= UInt64(e & 0xFF)
            op.pointee = UInt8(truncatingIfNeeded: e &>> 8)
            op += 1
            bits.reload()
        }
        guard bits.isExactlyConsumed else {
            throw ZstdDecodingError(.corrupt, "Huffman stream does not end with its last literal", offset: at)
        }
    }

    /// Decodes the four Huffman streams of a literals section (`size` bytes, jump table first) into
    /// `count` literals at `out`.
    ///
    /// What is accepted follows libzstd (1.5.x, 64-bit), which decodes four streams in one of two ways:
    /// - when the first stream has at least 16 bytes, the others at least 8, the fourth segment is not
    ///   empty and the tree is not a 12-bit one, its fast loop
    ///   (`HUF_decompress4X1_usingDTable_internal_fast`): a stream's last byte
    ///   may be zero, and each stream is then finished without checking that it ends exactly with its
    ///   last literal (only that the fast loop did not read more than 8 bytes before the stream's
    ///   start); a finishing stream that runs out reads on into the streams before it;
    /// - otherwise the careful decoder: each stream ends with a 1 bit and is read exactly to its first
    ///   bit (`decodeHuffmanStream`).
    func decodeFourHuffmanStreams(
        _ src: UnsafePointer<UInt8>, size: Int, into out: UnsafeMutablePointer<UInt8>, count: Int, at: Int
    ) throws(ZstdDecodingError) {
        guard size >= 10 else {
            throw ZstdDecodingError(.corrupt, "four Huffman streams in \(size) bytes", offset: at)
        }
        let segment = (count + 3) / 4
        guard count >= 6, 3 * segment <= count else {
            throw ZstdDecodingError(.corrupt, "four Huffman streams for \(count) literals", offset: at)
        }
        let s1 = Int(src[0]) | Int(src[1]) << 8
        let s2 = Int(src[2]) | Int(src[3]) << 8
        let s3 = Int(src[4]) | Int(src[5]) << 8
        let s4 = size - 6 - s1 - s2 - s3
        guard s1 >= 1, s2 >= 1, s3 >= 1, s4 >= 1 else {
            throw ZstdDecodingError(.corrupt, "Huffman jump table sizes (\(s1), \(s2), \(s3)) do not fit \(size - 6) bytes", offset: at)
        }
        let starts = (src + 6, src + 6 + s1, src + 6 + s1 + s2, src + 6 + s1 + s2 + s3)
        let offsets = (at + 6, at + 6 + s1, at + 6 + s1 + s2, at + 6 + s1 + s2 + s3)
        let counts = (segment, segment, segment, count - 3 * segment)
        guard s1 >= 16 && s2 >= 8 && s3 >= 8 && s4 >= 8 && counts.3 > 0 && huffmanTableBits == huffmanFastBits else {
            try decodeHuffmanStream(starts.0, size: s1, into: out, count: counts.0, at: offsets.0)
            try decodeHuffmanStream(starts.1, size: s2, into: out + segment, count: counts.1, at: offsets.1)
            try decodeHuffmanStream(starts.2, size: s3, into: out + 2 * segment, count: counts.2, at: offsets.2)
            try decodeHuffmanStream(starts.3, size: s4, into: out + 3 * segment, count: counts.3, at: offsets.3)
            return
        }
        let progress = fastFourStreams(
            starts: starts, sizes: (s1, s2, s3, s4), lowest: src + 6, out: out, segment: segment, count: count)
        // Each stream's remaining literals, from where the fast loop stopped.
        try finishStream(starts.0, lowest: src + 6, out: out, progress: progress.0, count: counts.0, at: offsets.0, index: 1)
        try finishStream(starts.1, lowest: src + 6, out: out + segment, progress: progress.1, count: counts.1, at: offsets.1, index: 2)
        try finishStream(starts.2, lowest: src + 6, out: out + 2 * segment, progress: progress.2, count: counts.2, at: offsets.2, index: 3)
        try finishStream(starts.3, lowest: src + 6, out: out + 3 * segment, progress: progress.3, count: counts.3, at: offsets.3, index: 4)
    }

    /// How far the fast loop took one stream: literals decoded, and the load position and bits
    /// consumed from it.
    struct StreamProgress {
        var done = 0
        var ptr: UnsafePointer<UInt8>
        var consumed: UInt64
    }

    /// The four streams together, five symbols each per refill, on libzstd's schedule (so that a
    /// corrupt stream stops where libzstd's stops): rounds of as many iterations as the output left
    /// behind the fourth stream and the first stream's bytes above `lowest + 8` allow (at least 4),
    /// while no stream's load position has passed below the previous stream's. Each register holds
    /// the stream's bits shifted so that the next code is on top, with a sentinel 1 bit below the
    /// last valid bit: its position (trailing zeros) tells how many bits were consumed since the load.
    /// The caller guarantees the first stream has at least 16 bytes and the others at least 8.
    private func fastFourStreams(
        starts: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>),
        sizes: (Int, Int, Int, Int), lowest: UnsafePointer<UInt8>, out: UnsafeMutablePointer<UInt8>,
        segment: Int, count: Int
    ) -> (StreamProgress, StreamProgress, StreamProgress, StreamProgress) {
        let table = UnsafePointer(huffmanTable)
        @inline(__always) func initial(_ start: UnsafePointer<UInt8>, _ size: Int) -> (UnsafePointer<UInt8>, UInt64) {
            let p = start + (size - 8)
            // A zero last byte has no end marker: libzstd's fast loop then reads it from its top bit.
            let last = p[7]
            let padding = last == 0 ? 0 : UInt64(last.leadingZeroBitCount) + 1
            return (p, (loadLE64(p) | 1) &<< padding)
        }
        var (ip0, b0) = initial(starts.0, sizes.0)
        var (ip1, b1) = initial(starts.1, sizes.1)
        var (ip2, b2) = initial(starts.2, sizes.2)
        var (ip3, b3) = initial(starts.3, sizes.3)
        var op0 = out
        var op1 = out + segment
        var op2 = out + 2 * segment
        var op3 = out + 3 * segment
        let end = out + count
        // Every load position stays at or above `limit`: the first stream's moves at most 7 bytes per
        // iteration, and the others start each round at or above it.
        let limit = lowest + 8
        while true {
            let iterations = min((end - op3) / 5, (ip0 - limit) / 7)
            if iterations < 4 || ip1 < ip0 || ip2 < ip1 || ip3 < ip2 { break }
            for _ in 0..<iterations {
                for k in 0..<5 {
                    let e0 = table[Int(b0 &>> 53)]
                    let e1 = table[Int(b1 &>> 53)]
                    let e2 = table[Int(b2 &>> 53)]
                    let e3 = table[Int(b3 &>> 53)]
                    b0 = b0 &<< UInt64(e0 & 63)
                    b1 = b1 &<< UInt64(e1 & 63)
                    b2 = b2 &<< UInt64(e2 & 63)
                    b3 = b3 &<< UInt64(e3 & 63)
                    op0[k] = UInt8(truncatingIfNeeded: e0 &>> 8)
                    op1[k] = UInt8(truncatingIfNeeded: e1 &>> 8)
                    op2[k] = UInt8(truncatingIfNeeded: e2 &>> 8)
                    op3[k] = UInt8(truncatingIfNeeded: e3 &>> 8)
                }
                op0 += 5; op1 += 5; op2 += 5; op3 += 5
                var c = UInt64(b0.trailingZeroBitCount)
                ip0 -= Int(c &>> 3); b0 = (loadLE64(ip0) | 1) &<< (c & 7)
                c = UInt64(b1.trailingZeroBitCount)
                ip1 -= Int(c &>> 3); b1 = (loadLE64(ip1) | 1) &<< (c & 7)
                c = UInt64(b2.trailingZeroBitCount)
                ip2 -= Int(c &>> 3); b2 = (loadLE64(ip2) | 1) &<< (c & 7)
                c = UInt64(b3.trailingZeroBitCount)
                ip3 -= Int(c &>> 3); b3 = (loadLE64(ip3) | 1) &<< (c & 7)
            }
        }
        return (
            StreamProgress(done: op0 - out, ptr: ip0, consumed: UInt64(b0.trailingZeroBitCount)),
            StreamProgress(done: op1 - (out + segment), ptr: ip1, consumed: UInt64(b1.trailingZeroBitCount)),
            StreamProgress(done: op2 - (out + 2 * segment), ptr: ip2, consumed: UInt64(b2.trailingZeroBitCount)),
            StreamProgress(done: op3 - (out + 3 * segment), ptr: ip3, consumed: UInt64(b3.trailingZeroBitCount))
        )
    }

    /// Finishes one stream after the fast loop as libzstd does: refused only when the fast loop read
    /// more than 8 bytes before the stream's start; the rest is read with a reader bounded by the first
    /// stream's start (`lowest`), and the stream need not end exactly with its last literal.
    private func finishStream(
        _ stream: UnsafePointer<UInt8>, lowest: UnsafePointer<UInt8>, out: UnsafeMutablePointer<UInt8>,
        progress: StreamProgress, count: Int, at: Int, index: Int
    ) throws(ZstdDecodingError) {
        guard progress.ptr >= stream - 8 else {
            throw ZstdDecodingError(.corrupt, "Huffman stream \(index) reads \(stream - progress.ptr) bytes before its start", offset: at)
        }
        // The reader's `ptr` starts at least 8 bytes above `lowest` (the first stream has 16 bytes or
        // more), so its loads stay inside the four streams.
        var bits = BackwardBitReader(start: lowest, size: 1)
        bits.ptr = progress.ptr
        bits.container = loadLE64(progress.ptr)
        bits.bitsConsumed = progress.consumed
        let table = UnsafePointer(huffmanTable)
        var op = out + progress.done
        let end = out + count
        while op < end {
            let e = table[Int(bits.peek(11))]
            bits.bitsConsumed &+= UInt64(e & 0xFF)
            op.pointee = UInt8(truncatingIfNeeded: e &>> 8)
            op += 1
            bits.reload()
        }
    }
}
