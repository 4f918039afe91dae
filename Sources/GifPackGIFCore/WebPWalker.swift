/// What ``WebPWalker`` learned about a structurally valid WebP (format 1.4's WebP entries).
///
/// `durationMilliseconds` is the sum of the `ANMF` frames' durations (0 for a still);
/// `loopCount` is the `ANIM` chunk's (0: loops forever), nil for a still.
///
/// ```swift
/// let info = try WebPWalker.inspect(bytes: webpBytes)
/// // WebPInfo(width: 180, height: 180, frameCount: 12, durationMilliseconds: 960, loopCount: 0, isAnimated: true)
/// ```
package struct WebPInfo: Sendable, Equatable {
    /// The canvas (`VP8X`), or the image's size for a simple still.
    package var width: Int
    package var height: Int
    /// `ANMF` frames; 1 for a still.
    package var frameCount: Int
    package var durationMilliseconds: Int
    package var loopCount: Int?
    /// True for an animation (`VP8X` with its animation flag, `ANIM`, `ANMF` frames).
    package var isAnimated: Bool

    package init(width: Int, height: Int, frameCount: Int, durationMilliseconds: Int, loopCount: Int?, isAnimated: Bool) {
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.durationMilliseconds = durationMilliseconds
        self.loopCount = loopCount
        self.isAnimated = isAnimated
    }
}

/// Why ``WebPWalker`` refused bytes, each with a stable ``reason`` code:
///
/// | case       | reason       | meaning                                                                  |
/// |------------|--------------|--------------------------------------------------------------------------|
/// | notAWebP   | "not-a-webp" | the bytes do not start with `RIFF`, a size and `WEBP`                   |
/// | truncated  | "truncated"  | the RIFF chunk, or a chunk in it, runs past the end of the bytes         |
/// | badFrame   | "bad-frame"  | a frame lies outside the canvas, or its bitstream is not of its size     |
/// | tooLarge   | "too-large"  | a ``GIFLimits`` bound (canvas, frames, pixels) was exceeded              |
/// | corrupt    | "corrupt"    | any other structural error: chunk order, flags, sizes, trailing bytes    |
package enum WebPRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case notAWebP
    case truncated(String)
    case badFrame(String)
    case tooLarge(String)
    case corrupt(String)

    /// Stable code: "not-a-webp", "truncated", "bad-frame", "too-large" or "corrupt".
    package var reason: String {
        switch self {
        case .notAWebP: "not-a-webp"
        case .truncated: "truncated"
        case .badFrame: "bad-frame"
        case .tooLarge: "too-large"
        case .corrupt: "corrupt"
        }
    }

    /// Human-readable explanation.
    package var detail: String {
        switch self {
        case .notAWebP: "the data does not start with a RIFF WEBP header"
        case .truncated(let message), .badFrame(let message), .tooLarge(let message), .corrupt(let message): message
        }
    }

    package var description: String { "\(reason): \(detail)" }
}

/// Structural validation of a WebP container in pure Swift (Google's "WebP Container
/// Specification"), the role ``GIFWalker`` has for GIFs: what the client runs on a WebP entry's
/// bytes before it serves them (format 1.4).
///
/// It reads the RIFF header (`RIFF`, a size that is even, at least 4 and within the bytes, `WEBP`)
/// and walks the chunks inside it, each header and its padded data within the RIFF size; bytes
/// after the RIFF chunk are refused (a pack entry is the file, nothing more). Accepted layouts:
///
/// - a simple still: one `VP8 ` or `VP8L` chunk;
/// - an extended still: `VP8X` (animation flag clear), optional `ICCP`, optional `ALPH`, one
///   `VP8 `/`VP8L`, then metadata or unknown chunks;
/// - an animation: `VP8X` (animation flag set), optional `ICCP`, one `ANIM` (background colour,
///   loop count), then one or more `ANMF` frames, then metadata or unknown chunks. Each frame's
///   offset plus size lies inside the canvas, and its data is an optional `ALPH` and one `VP8 ` or
///   `VP8L` chunk (nothing else).
///
/// Each bitstream chunk's header is checked too: a `VP8L` signature byte (0x2F), version 0 and the
/// 14-bit sizes; a `VP8 ` key frame's tag, start code (9D 01 2A) and sizes; those sizes must equal
/// the frame's (or, for a still, the canvas's). `ALPH` goes with `VP8 ` only. Bounds
/// (``GIFLimits``, the GIFs' own: canvas width and height, frame count, the frames' total pixels)
/// are checked before the frames are walked. Pixels are not decoded: it checks structure, not
/// identity (a pack's index gives each entry's SHA-256). Memory is the input.
///
/// ```swift
/// let info = try WebPWalker.inspect(bytes: webpBytes)
/// // info.frameCount == 12, info.durationMilliseconds == 960, info.loopCount == 0
/// ```
package enum WebPWalker {
    /// Walks the WebP held in `bytes`.
    package static func inspect(bytes: [UInt8], limits: GIFLimits = .standard) throws(WebPRejection) -> WebPInfo {
        let result: Result<WebPInfo, WebPRejection> = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(WebPRejection) in try inspect(buffer, limits: limits) }
        }
        return try result.get()
    }

    /// Walks the WebP in `bytes` (valid for the call).
    package static func inspect(_ bytes: UnsafeBufferPointer<UInt8>, limits: GIFLimits = .standard) throws(WebPRejection) -> WebPInfo {
        var walk = WebPWalk(bytes: bytes, limits: limits)
        return try walk.run()
    }

    /// True when `bytes` start as a WebP does (`RIFF`, 4 bytes, `WEBP`): what the client tells a
    /// WebP from a GIF by before walking either.
    package static func hasSignature(_ bytes: some Collection<UInt8>) -> Bool {
        let head = Array(bytes.prefix(12))
        return head.count == 12 && head[0..<4].elementsEqual("RIFF".utf8) && head[8..<12].elementsEqual("WEBP".utf8)
    }
}

/// One chunk: its code and where its data is.
private struct Chunk {
    let code: UInt32
    let start: Int
    let size: Int

    static func code(_ text: StaticString) -> UInt32 {
        let bytes = text.utf8Start
        return UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    static let vp8 = code("VP8 "), vp8l = code("VP8L"), vp8x = code("VP8X"), alph = code("ALPH")
    static let anim = code("ANIM"), anmf = code("ANMF"), iccp = code("ICCP")

    var name: String {
        let scalars = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }
        guard scalars.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            return "0x" + String(code.byteSwapped, radix: 16)
        }
        return "\"" + String(decoding: scalars, as: UTF8.self) + "\""
    }
}

/// One walk over one WebP.
private struct WebPWalk {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: GIFLimits

    init(bytes: UnsafeBufferPointer<UInt8>, limits: GIFLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func run() throws(WebPRejection) -> WebPInfo {
        guard WebPWalker.hasSignature(bytes) else {
            // A strict prefix of a WebP header is a cut-short file; anything else is not a WebP.
            let riff = Array("RIFF".utf8)
            if bytes.count < 12, bytes.prefix(4).elementsEqual(riff.prefix(min(4, bytes.count))),
                bytes.count <= 8 || bytes[8...].elementsEqual(Array("WEBP".utf8).prefix(bytes.count - 8))
            {
                throw .truncated("the data ends inside the RIFF header (\(bytes.count) bytes)")
            }
            throw .notAWebP
        }
        let riffSize = Int(le32(4))
        guard riffSize >= 4, riffSize % 2 == 0 else { throw .corrupt("the RIFF size \(riffSize) is odd or below 4") }
        guard riffSize <= bytes.count - 8 else {
            throw .truncated("the RIFF chunk says \(riffSize) bytes, the data has \(bytes.count - 8) after its header")
        }
        guard riffSize == bytes.count - 8 else {
            throw .corrupt("\(bytes.count - 8 - riffSize) bytes follow the RIFF chunk")
        }
        let chunks = try walkChunks(from: 12, to: 8 + riffSize, inside: "the RIFF chunk")
        guard let first = chunks.first else { throw .corrupt("the RIFF chunk holds no chunk") }
        switch first.code {
        case Chunk.vp8, Chunk.vp8l:
            guard chunks.count == 1 else { throw .corrupt("a simple WebP holds one image chunk, not \(chunks.count) chunks") }
            let (width, height) = try bitstreamSize(first)
            try checkCanvas(width, height)
            return WebPInfo(width: width, height: height, frameCount: 1, durationMilliseconds: 0, loopCount: nil, isAnimated: false)
        case Chunk.vp8x:
            return try extended(chunks)
        default:
            throw .corrupt("the first chunk is \(first.name), not VP8 , VP8L or VP8X")
        }
    }

    /// The chunks between `start` and `end`, each header and padded data inside.
    private func walkChunks(from start: Int, to end: Int, inside: String) throws(WebPRejection) -> [Chunk] {
        var chunks: [Chunk] = []
        var position = start
        while position < end {
            guard end - position >= 8 else {
                throw .truncated("\(inside) ends \(end - position) bytes into a chunk header at byte \(position)")
            }
            let code = le32(position)
            let size = Int(le32(position + 4))
            let padded = size + size % 2
            let chunk = Chunk(code: code, start: position + 8, size: size)
            guard padded <= end - chunk.start else {
                throw .truncated("chunk \(chunk.name) at byte \(position) says \(size) bytes; \(inside) has \(end - chunk.start) left")
            }
            chunks.append(chunk)
            position = chunk.start + padded
            // A chunk is at least 8 bytes: a walk of n bytes holds at most n/8 chunks, so this loop is linear.
        }
        return chunks
    }

    private mutating func extended(_ chunks: [Chunk]) throws(WebPRejection) -> WebPInfo {
        let header = chunks[0]
        guard header.size == 10 else { throw .corrupt("VP8X holds \(header.size) bytes, not 10") }
        let flags = bytes[header.start]
        let animated = flags & 0x02 != 0
        let width = Int(le24(header.start + 4)) + 1
        let height = Int(le24(header.start + 7)) + 1
        try checkCanvas(width, height)
        var rest = chunks.dropFirst()
        if rest.first?.code == Chunk.iccp { rest = rest.dropFirst() }
        guard animated else {
            if rest.first?.code == Chunk.alph { rest = rest.dropFirst() }
            guard let image = rest.first, image.code == Chunk.vp8 || image.code == Chunk.vp8l else {
                throw .corrupt("an extended still WebP has no VP8 or VP8L chunk after VP8X (found \(rest.first?.name ?? "nothing"))")
            }
            if image.code == Chunk.vp8l, chunks[chunks.index(before: rest.startIndex)].code == Chunk.alph {
                throw .corrupt("an ALPH chunk goes with a VP8 image, not VP8L")
            }
            let size = try bitstreamSize(image)
            guard size == (width, height) else {
                throw .badFrame("the image is \(size.0)x\(size.1), the canvas \(width)x\(height)")
            }
            if let stray = rest.dropFirst().first(where: { [Chunk.anim, Chunk.anmf, Chunk.vp8, Chunk.vp8l, Chunk.vp8x, Chunk.alph].contains($0.code) }) {
                throw .corrupt("chunk \(stray.name) after the image of a still WebP")
            }
            return WebPInfo(width: width, height: height, frameCount: 1, durationMilliseconds: 0, loopCount: nil, isAnimated: false)
        }
        guard let anim = rest.first, anim.code == Chunk.anim else {
            throw .corrupt("an animated WebP has no ANIM chunk after VP8X (found \(rest.first?.name ?? "nothing"))")
        }
        guard anim.size == 6 else { throw .corrupt("ANIM holds \(anim.size) bytes, not 6") }
        let loopCount = Int(bytes[anim.start + 4]) | Int(bytes[anim.start + 5]) << 8
        rest = rest.dropFirst()
        let frames = rest.prefix { $0.code == Chunk.anmf }
        guard !frames.isEmpty else { throw .corrupt("an animated WebP has no ANMF frame (found \(rest.first?.name ?? "nothing"))") }
        guard frames.count <= limits.maxFrames else { throw .tooLarge("\(frames.count) frames exceed \(limits.maxFrames)") }
        if let stray = rest.dropFirst(frames.count).first(where: {
            [Chunk.anim, Chunk.anmf, Chunk.vp8, Chunk.vp8l, Chunk.vp8x, Chunk.alph].contains($0.code)
        }) {
            throw .corrupt("chunk \(stray.name) after the frames of an animated WebP")
        }
        var duration = 0
        var pixels = 0
        for (number, frame) in frames.enumerated() {
            duration += try walkFrame(frame, number: number + 1, canvas: (width, height), pixels: &pixels)
        }
        return WebPInfo(
            width: width, height: height, frameCount: frames.count, durationMilliseconds: duration, loopCount: loopCount,
            isAnimated: true)
    }

    /// One `ANMF` frame: its rectangle inside the canvas, its image chunks; returns its duration.
    private func walkFrame(_ frame: Chunk, number: Int, canvas: (Int, Int), pixels: inout Int) throws(WebPRejection) -> Int {
        guard frame.size >= 16 else { throw .corrupt("frame \(number): ANMF holds \(frame.size) bytes, fewer than its 16-byte header") }
        let x = Int(le24(frame.start)) * 2
        let y = Int(le24(frame.start + 3)) * 2
        let width = Int(le24(frame.start + 6)) + 1
        let height = Int(le24(frame.start + 9)) + 1
        let duration = Int(le24(frame.start + 12))
        guard x + width <= canvas.0, y + height <= canvas.1 else {
            throw .badFrame("frame \(number) (\(width)x\(height) at \(x),\(y)) lies outside the \(canvas.0)x\(canvas.1) canvas")
        }
        pixels += width * height
        guard pixels <= limits.maxTotalPixels else { throw .tooLarge("the frames' pixels exceed \(limits.maxTotalPixels)") }
        let inner = try walkChunks(from: frame.start + 16, to: frame.start + frame.size, inside: "frame \(number)")
        var images = inner[...]
        let alpha = images.first?.code == Chunk.alph
        if alpha { images = images.dropFirst() }
        guard let image = images.first, image.code == Chunk.vp8 || image.code == Chunk.vp8l else {
            throw .badFrame("frame \(number) has no VP8 or VP8L chunk (found \(images.first?.name ?? "nothing"))")
        }
        guard images.count == 1 else { throw .corrupt("frame \(number) holds \(images.count - 1) chunk(s) after its image") }
        if alpha, image.code == Chunk.vp8l { throw .corrupt("frame \(number): an ALPH chunk goes with a VP8 image, not VP8L") }
        let size = try bitstreamSize(image)
        guard size == (width, height) else {
            throw .badFrame("frame \(number)'s image is \(size.0)x\(size.1), the frame \(width)x\(height)")
        }
        return duration
    }

    /// The width and height a `VP8L` or `VP8 ` chunk's header gives.
    private func bitstreamSize(_ chunk: Chunk) throws(WebPRejection) -> (Int, Int) {
        if chunk.code == Chunk.vp8l {
            guard chunk.size >= 5 else { throw .corrupt("VP8L holds \(chunk.size) bytes, fewer than its 5-byte header") }
            guard bytes[chunk.start] == 0x2F else { throw .corrupt("VP8L does not start with its signature byte 0x2F") }
            let bits = le32(chunk.start + 1)
            guard bits >> 29 == 0 else { throw .corrupt("VP8L version \(bits >> 29), not 0") }
            return (Int(bits & 0x3FFF) + 1, Int(bits >> 14 & 0x3FFF) + 1)
        }
        guard chunk.size >= 10 else { throw .corrupt("VP8 holds \(chunk.size) bytes, fewer than a key frame's 10-byte header") }
        let at = chunk.start
        guard bytes[at] & 0x01 == 0 else { throw .corrupt("VP8 does not start with a key frame") }
        guard bytes[at + 3] == 0x9D, bytes[at + 4] == 0x01, bytes[at + 5] == 0x2A else { throw .corrupt("VP8 lacks its start code 9D 01 2A") }
        let width = (Int(bytes[at + 6]) | Int(bytes[at + 7]) << 8) & 0x3FFF
        let height = (Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8) & 0x3FFF
        guard width > 0, height > 0 else { throw .corrupt("VP8 says its image is \(width)x\(height)") }
        return (width, height)
    }

    private func checkCanvas(_ width: Int, _ height: Int) throws(WebPRejection) {
        guard width <= limits.maxWidth, height <= limits.maxHeight else {
            throw .tooLarge("canvas \(width)x\(height) exceeds \(limits.maxWidth)x\(limits.maxHeight)")
        }
        guard width * height <= limits.maxTotalPixels else { throw .tooLarge("canvas \(width)x\(height) exceeds \(limits.maxTotalPixels) pixels") }
    }

    private func le32(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    private func le24(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
    }
}
