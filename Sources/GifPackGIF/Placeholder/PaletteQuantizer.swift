/// Reduces an ``RGBImage`` to at most 256 colours for ``PosterEncoder``, at full 8-bit precision.
///
/// - Each colour covering at least 1% of the pixels (the 64 largest such at most: a background, a
///   flat fill) gets a palette entry of its own, exact — white stays `#ffffff`.
/// - The other colours go through a median cut weighted by how many pixels have each: the box with
///   the largest squared error is split, along the channel with the largest squared error, where
///   its two halves keep the least squared error; each palette colour is the rounded mean of its
///   box's pixels, and each pixel is drawn with its box's colour. Splitting stops at 256 entries,
///   when every box holds one colour (an image of few colours keeps them all exactly), or once the
///   whole image's mean squared error is at most ``targetMeanSquaredError`` per channel (about 0.7
///   levels rms). Real exercise GIFs' posters: 0.23/255 per channel from their downscale at 80 px
///   (1,951 bytes each on average) and 0.17/255 at 200 px (5,759 bytes); exact colours would make
///   the 200 px ones 7,554 bytes for no visible gain.
///
/// It replaces giflib's `GifQuantizeBuffer`, which histograms 5 bits per channel and writes each
/// palette colour as the unweighted mean of its 5-bit cells shifted left by 3: white came out
/// `#f8f8f8` and 80 px posters of real exercise GIFs were off by 6.2/255 per channel on average
/// (1,926 bytes; 5,529 at 200 px).
/// Integer sums, a total order on colours and no shared state: the palette is a function of the
/// pixels alone, whichever thread computes it.
///
/// ```swift
/// let quantized = PaletteQuantizer.quantize(poster)
/// print(quantized.palette.count, quantized.indices.count)   // <= 256, width * height
/// ```
package enum PaletteQuantizer {
    package struct Result: Sendable, Equatable {
        /// The palette, `0xRRGGBB` per colour, 1...256 colours.
        package var palette: [UInt32]
        /// One palette index per pixel, rows top to bottom.
        package var indices: [UInt8]
    }

    package static let maxColors = 256
    /// Colours covering at least 1/`dominantShare` of the pixels keep exact entries...
    static let dominantShare = 100
    /// ...up to this many.
    static let maxDominant = 64
    /// The median cut stops once the image's mean squared error per channel is at most this.
    package static let targetMeanSquaredError = 0.5

    package static func quantize(_ image: RGBImage) -> Result {
        let count = image.width * image.height
        // Each pixel as its colour above its index, sorted by colour (pixels of one colour in
        // index order): the distinct colours ascending with their pixel counts, and each pixel's
        // place among them, in one pass.
        var sortedPixels = [UInt64](repeating: 0, count: count)
        image.pixels.withUnsafeBufferPointer { pixels in
            for index in 0..<count {
                let p = index * 3
                let color = UInt64(pixels[p]) << 16 | UInt64(pixels[p + 1]) << 8 | UInt64(pixels[p + 2])
                sortedPixels[index] = color << 32 | UInt64(index)
            }
        }
        radixSort24(&sortedPixels, keyShift: 32)
        var colors: [UInt32] = []
        var weights: [Int] = []
        var colorOfPixel = [Int32](repeating: 0, count: count)
        for value in sortedPixels {
            let key = UInt32(truncatingIfNeeded: value >> 32)
            if let last = colors.last, last == key {
                weights[weights.count - 1] += 1
            } else {
                colors.append(key)
                weights.append(1)
            }
            colorOfPixel[Int(value & 0xFFFF_FFFF)] = Int32(colors.count - 1)
        }
        // palette index by position in `colors`
        var indexOfColor = [UInt8](repeating: 0, count: colors.count)
        var palette: [UInt32] = []
        // Colours covering at least 1% of the pixels (the 64 largest) keep exact entries; the
        // others are merged by the median cut only as far as the error budget allows.
        let dominant = colors.indices.filter { weights[$0] * dominantShare >= count }
            .sorted { weights[$0] != weights[$1] ? weights[$0] > weights[$1] : $0 < $1 }
            .prefix(maxDominant).sorted()
        for position in dominant {
            indexOfColor[position] = UInt8(truncatingIfNeeded: palette.count)
            palette.append(colors[position])
        }
        let reserved = Set(dominant)
        let rest = colors.indices.filter { !reserved.contains($0) }
        if !rest.isEmpty {
            let cut = medianCut(
                entries: rest.enumerated().map { Entry(color: colors[$1], weight: weights[$1], origin: $0) },
                boxes: maxColors - palette.count,
                errorBudget: targetMeanSquaredError * Double(count) * 3)
            for (restIndex, position) in rest.enumerated() {
                indexOfColor[position] = UInt8(truncatingIfNeeded: palette.count + cut.index[restIndex])
            }
            palette += cut.palette
        }
        let indices = colorOfPixel.map { indexOfColor[Int($0)] }
        return Result(palette: palette, indices: indices)
    }

    /// Sorts `values` by their bits `keyShift..<keyShift + 24`, equal keys keeping their order: a
    /// least-significant-byte-first radix sort, three passes of 256 buckets (a pass whose byte is
    /// the same in every value is skipped). The colours' sorts, thousands of values each, took a
    /// tenth of a build's CPU as comparison sorts.
    package static func radixSort24(_ values: inout [UInt64], keyShift: Int) {
        let count = values.count
        guard count > 1 else { return }
        if count <= 32 {
            // A few values: an insertion sort by the key (stable) costs less than three passes.
            values.withUnsafeMutableBufferPointer { values in
                for index in 1..<count {
                    let value = values[index]
                    let key = value >> UInt64(keyShift) & 0xFF_FFFF
                    var place = index
                    while place > 0, values[place - 1] >> UInt64(keyShift) & 0xFF_FFFF > key {
                        values[place] = values[place - 1]
                        place -= 1
                    }
                    values[place] = value
                }
            }
            return
        }
        var other = [UInt64](repeating: 0, count: count)
        var inOther = false
        values.withUnsafeMutableBufferPointer { first in
            other.withUnsafeMutableBufferPointer { second in
                var counts = [Int](repeating: 0, count: 256)
                for pass in 0..<3 {
                    let shift = UInt64(keyShift + 8 * pass)
                    let (source, target) = inOther ? (second, first) : (first, second)
                    for index in 0..<256 { counts[index] = 0 }
                    for value in source { counts[Int(truncatingIfNeeded: value >> shift) & 0xFF] += 1 }
                    if counts[Int(truncatingIfNeeded: source[0] >> shift) & 0xFF] == count { continue }
                    var offset = 0
                    for index in 0..<256 { (counts[index], offset) = (offset, offset + counts[index]) }
                    for value in source {
                        let bucket = Int(truncatingIfNeeded: value >> shift) & 0xFF
                        target[counts[bucket]] = value
                        counts[bucket] += 1
                    }
                    inOther.toggle()
                }
            }
        }
        if inOther { swap(&values, &other) }
    }

    /// A box of the median cut: `entries[start..<end]` of the working colour list, with the sums
    /// its squared error is computed from.
    private struct Box {
        var start: Int
        var end: Int
        var stats: Stats
        /// `stats.squaredError`, kept: every split looks at every box's.
        let error: Double
        /// The channel the box's entries are in the order of (``bestSplit(_:_:)``'s), if known.
        var sortedBy: Int?

        init(start: Int, end: Int, stats: Stats, sortedBy: Int?) {
            (self.start, self.end, self.stats, self.sortedBy) = (start, end, stats, sortedBy)
            error = stats.squaredError
        }

        var splittable: Bool { end - start > 1 && error > 0 }
    }

    /// Pixel count, and per channel the sum and the sum of squares of the values, weighted.
    private struct Stats {
        var weight = 0
        var sum = SIMD3<Int>()
        var squares = SIMD3<Int>()

        init() {}

        init(_ entries: ArraySlice<Entry>) {
            for entry in entries { add(entry) }
        }

        mutating func add(_ entry: Entry) {
            let value = entry.channels
            weight += entry.weight
            sum &+= value &* entry.weight
            squares &+= value &* value &* entry.weight
        }

        static func - (total: Stats, part: Stats) -> Stats {
            var rest = Stats()
            rest.weight = total.weight - part.weight
            rest.sum = total.sum &- part.sum
            rest.squares = total.squares &- part.squares
            return rest
        }

        /// The squared error of one channel about its mean.
        func channelError(_ c: Int) -> Double {
            guard weight > 0 else { return 0 }
            return Double(squares[c]) - Double(sum[c]) * Double(sum[c]) / Double(weight)
        }

        var squaredError: Double { channelError(0) + channelError(1) + channelError(2) }
    }

    private struct Entry {
        var color: UInt32
        var weight: Int
        /// Its place in the list the median cut was given.
        var origin: Int
        func channel(_ c: Int) -> Int { Int((color >> UInt32(16 - 8 * c)) & 0xFF) }
        var channels: SIMD3<Int> { SIMD3(Int(color >> 16 & 0xFF), Int(color >> 8 & 0xFF), Int(color & 0xFF)) }
    }

    /// Median cut of `entries` (distinct colours, ascending, with their weights) into at most
    /// `boxes` colours, stopping once the squared error left is at most `errorBudget`: the palette
    /// and each entry's index in it.
    private static func medianCut(
        entries original: [Entry], boxes maxBoxes: Int,
        errorBudget: Double
    ) -> (palette: [UInt32], index: [Int]) {
        var entries = original
        // Ascending colours are in the order of the red channel, then green, then blue.
        var boxes = [Box(start: 0, end: entries.count, stats: Stats(entries[...]), sortedBy: 0)]
        var totalError = boxes[0].error
        while boxes.count < maxBoxes, totalError > errorBudget {
            // The box with the most squared error (the first of equals) is split next.
            var chosen: Int?
            for (index, box) in boxes.enumerated() where box.splittable {
                if let current = chosen, boxes[current].error >= box.error { continue }
                chosen = index
            }
            guard let chosen else { break }
            let box = boxes[chosen]
            let (cut, left, axis) = bestSplit(&entries, box)
            boxes[chosen] = Box(start: box.start, end: cut, stats: left, sortedBy: axis)
            boxes.append(Box(start: cut, end: box.end, stats: box.stats - left, sortedBy: axis))
            totalError += boxes[chosen].error + boxes[boxes.count - 1].error - box.error
        }
        // Boxes in the order of their smallest colour: a palette that does not depend on split order.
        let ordered = boxes.map { box in (box, entries[box.start..<box.end].lazy.map(\.color).min() ?? 0) }
            .sorted { $0.1 < $1.1 }.map(\.0)
        var palette: [UInt32] = []
        var index = [Int](repeating: 0, count: original.count)
        for (paletteIndex, box) in ordered.enumerated() {
            for entry in entries[box.start..<box.end] { index[entry.origin] = paletteIndex }
            let (sums, total) = (box.stats.sum, box.stats.weight)
            func mean(_ sum: Int) -> UInt32 { UInt32((2 * sum + total) / (2 * total)) }
            palette.append(mean(sums[0]) << 16 | mean(sums[1]) << 8 | mean(sums[2]))
        }
        return (palette, index)
    }

    /// Sorts the box along the channel with the most squared error and returns the position that
    /// leaves the least total squared error in the two halves (both non-empty), with the sums of
    /// the first half.
    ///
    /// The order is by that channel, then the next two (the colours of a box are distinct, so it is
    /// total): each colour's channels rearranged in that order make a 24-bit key, and the keys,
    /// with each entry's place in the box in the low 24 bits (at most 2^24 distinct colours), sort
    /// as plain integers. A box already in that order (its halves after a split along the same
    /// channel) is not sorted again.
    private static func bestSplit(_ entries: inout [Entry], _ box: Box) -> (cut: Int, left: Stats, axis: Int) {
        let (start, end, total) = (box.start, box.end, box.stats)
        var axis = 0
        var largest = -1.0
        for channel in 0..<3 {
            let error = total.channelError(channel)
            if error > largest { largest = error; axis = channel }
        }
        if box.sortedBy != axis {
            var keys = [UInt64]()
            keys.reserveCapacity(end - start)
            for position in start..<end {
                let color = entries[position].color
                let key = color.rotatedLeft(byChannels: axis) & 0xFF_FFFF
                keys.append(UInt64(key) << 24 | UInt64(position - start))
            }
            // The rotated colours are distinct (the box's colours are): sorting by them alone gives
            // the whole keys' order.
            radixSort24(&keys, keyShift: 24)
            let unsorted = Array(entries[start..<end])
            for (offset, key) in keys.enumerated() { entries[start + offset] = unsorted[Int(key & 0xFF_FFFF)] }
        }
        var prefix = Stats()
        var best = (cut: start + 1, left: Stats(entries[start..<start + 1]))
        var bestError = Double.infinity
        for position in start..<(end - 1) {
            let entry = entries[position]
            prefix.add(entry)
            // Cut only between different values of the axis (equal values stay together).
            guard entries[position + 1].channel(axis) != entry.channel(axis) else { continue }
            let rest = total - prefix
            var error = 0.0
            for c in 0..<3 {
                error += prefix.channelError(c)
                error += rest.channelError(c)
            }
            if error < bestError { (bestError, best) = (error, (position + 1, prefix)) }
        }
        return (best.cut, best.left, axis)
    }
}

extension UInt32 {
    /// A `0xRRGGBB` colour with its channels rotated so that channel `first` (0 red, 1 green,
    /// 2 blue) comes first, then the two after it: 1 gives `0xGGBBRR`, 2 gives `0xBBRRGG`.
    fileprivate func rotatedLeft(byChannels first: Int) -> UInt32 {
        first == 0 ? self : (self << UInt32(8 * first) | self >> UInt32(24 - 8 * first)) & 0xFF_FFFF
    }
}
