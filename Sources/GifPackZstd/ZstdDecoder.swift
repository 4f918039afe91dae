/// Zstandard (RFC 8878) decompression in pure Swift.
///
/// Decodes frames written by any conforming encoder (libzstd, the `zstd` tool, python-zstandard):
/// raw, RLE and compressed blocks, Huffman and FSE entropy coding, repeat offsets, long windows,
/// skippable frames, and the XXH64 content checksum (checked when present). Frames that need a
/// dictionary are refused (`.unsupported`).
///
/// Untrusted input is safe: every failure is a ``ZstdDecodingError`` with a reason and the input
/// offset; output never exceeds `maxOutput` and no frame whose window exceeds `maxWindow` is
/// decoded (for single-segment frames the window is the content size; for a frame that declares its
/// content size, the window counted is at most that size). Memory is the output
/// (one-shot) or the window plus a slide reserve (streaming), plus about 150 KB of tables.
///
/// ```swift
/// // One shot, every frame of the input:
/// let bytes = try ZstdDecoder.decompress(compressed, maxOutput: 16 << 20)
///
/// // One frame, streamed in blocks of at most 128 KB to a sink (a pack's tar entry, say):
/// let decoder = ZstdDecoder()   // reusable: keeps its tables between calls
/// let frame = try compressed.withUnsafeBytes { raw in
///     try decoder.decompressFrame(raw, maxOutput: entry.size) { chunk in try file.write(chunk) }
/// }
/// // frame.inputBytes: where the next frame starts; frame.outputBytes: bytes given to the sink.
/// ```
///
/// A `ZstdDecoder` is not thread-safe and not reentrant (a sink must not call back into the
/// decoder that feeds it); use one per task (the static functions make their own). It keeps its
/// streaming window buffer between frames (at most the largest window used) until it is freed.
public final class ZstdDecoder {
    /// The window limit used when the caller gives none: 128 MiB (libzstd's default, window log 27).
    public static let defaultMaxWindow = 1 << 27

    private let context = DecoderContext()
    /// The streaming window buffer, reused between frames (`streamBufferCapacity` + `outputSlack` bytes).
    private var streamBuffer: UnsafeMutablePointer<UInt8>? = nil
    private var streamBufferCapacity = 0

    public init() {}

    deinit { streamBuffer?.deallocate() }

    /// What one ``decompressFrame(_:maxOutput:maxWindow:sink:)`` call did.
    public struct FrameResult: Sendable, Equatable {
        /// Bytes of input the frame took (the next frame starts there).
        public var inputBytes: Int
        /// Bytes given to the sink.
        public var outputBytes: Int

        public init(inputBytes: Int, outputBytes: Int) {
            self.inputBytes = inputBytes
            self.outputBytes = outputBytes
        }
    }

    // MARK: Static conveniences

    /// Decompresses every frame of `input` (zstd and skippable frames, back to back).
    /// - Parameters:
    ///   - maxOutput: the most bytes the caller accepts; more is an `.outputLimitExceeded` error.
    ///   - maxWindow: the largest window (bytes) a frame may ask for.
    public static func decompress(
        _ input: some Collection<UInt8>, maxOutput: Int, maxWindow: Int = defaultMaxWindow
    ) throws(ZstdDecodingError) -> [UInt8] {
        try ZstdDecoder().decompress(input, maxOutput: maxOutput, maxWindow: maxWindow)
    }

    /// Reads the header of the frame at the start of `input` without decoding it;
    /// `nil` for a skippable frame.
    public static func frameHeader(_ input: UnsafeRawBufferPointer) throws(ZstdDecodingError) -> ZstdFrameHeader? {
        guard let base = input.baseAddress, input.count > 0 else {
            throw ZstdDecodingError(.truncated, "empty input: no zstd frame", offset: 0)
        }
        switch try FrameParser.parse(base.assumingMemoryBound(to: UInt8.self), count: input.count, at: 0) {
        case .zstd(let header): return header
        case .skippable: return nil
        }
    }

    // MARK: Decoding

    /// Decompresses every frame of `input`; see the static form.
    public func decompress(
        _ input: some Collection<UInt8>, maxOutput: Int, maxWindow: Int = defaultMaxWindow
    ) throws(ZstdDecodingError) -> [UInt8] {
        let result: Result<[UInt8], ZstdDecodingError>? = input.withContiguousStorageIfAvailable { buffer in
            do throws(ZstdDecodingError) {
                return .success(try decompress(UnsafeRawBufferPointer(buffer), maxOutput: maxOutput, maxWindow: maxWindow))
            } catch {
                return .failure(error)
            }
        }
        if let result { return try result.get() }
        let copy = Array(input)
        let copied: Result<[UInt8], ZstdDecodingError> = copy.withUnsafeBytes { raw in
            do throws(ZstdDecodingError) {
                return .success(try decompress(raw, maxOutput: maxOutput, maxWindow: maxWindow))
            } catch {
                return .failure(error)
            }
        }
        return try copied.get()
    }

    /// Decompresses every frame of `input` (zstd and skippable frames, back to back).
    /// - Parameters:
    ///   - maxOutput: the most bytes the caller accepts; more is an `.outputLimitExceeded` error.
    ///   - maxWindow: the largest window (bytes) a frame may ask for.
    public func decompress(
        _ input: UnsafeRawBufferPointer, maxOutput: Int, maxWindow: Int = defaultMaxWindow
    ) throws(ZstdDecodingError) -> [UInt8] {
        guard let raw = input.baseAddress, input.count > 0 else {
            throw ZstdDecodingError(.truncated, "empty input: no zstd frame", offset: 0)
        }
        let src = raw.assumingMemoryBound(to: UInt8.self)
        let count = input.count
        let limit = max(0, maxOutput)
        var result: [UInt8] = []
        var offset = 0
        // The usual case, a first frame that declares its size: decode it straight into the result.
        if case .zstd(let header) = try FrameParser.parse(src, count: count, at: 0), let size = header.contentSize {
            try check(header, maxOutput: limit, maxWindow: maxWindow, at: 0)
            var failure: ZstdDecodingError? = nil
            result = [UInt8](unsafeUninitializedCapacity: size + outputSlack) { buffer, initialized in
                initialized = 0
                guard let base = buffer.baseAddress else { return }
                var out = OutputBuffer(
                    base: base, capacity: size, pos: 0, historyStart: 0, growable: false, sliding: false,
                    maxCapacity: size)
                do throws(ZstdDecodingError) {
                    offset = try decodeFrame(
                        src, count: count, at: 0, header: header, out: &out, maxOutput: limit, callerLimit: limit)
                    initialized = out.pos
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
        if offset == count { return result }

        // Any other frames: into a growing buffer, appended to the result.
        var out = OutputBuffer.allocate(
            capacity: min(limit - result.count, max(zstdBlockSizeMax, (count - offset) * 4)),
            growable: true, sliding: false, maxCapacity: limit - result.count)
        defer { out.base.deallocate() }
        while offset < count {
            switch try FrameParser.parse(src + offset, count: count - offset, at: offset) {
            case .skippable(let size):
                offset += size
            case .zstd(let header):
                try check(header, maxOutput: limit - result.count - out.pos, maxWindow: maxWindow, at: offset)
                out.historyStart = out.pos
                offset = try decodeFrame(
                    src, count: count, at: offset, header: header, out: &out,
                    maxOutput: limit - result.count - out.pos, callerLimit: limit)
            }
        }
        result.append(contentsOf: UnsafeBufferPointer(start: out.base, count: out.pos))
        return result
    }

    /// Decompresses the one frame at the start of `input`, handing its bytes to `sink` block by
    /// block (chunks of at most 128 KB, valid only during the call). Memory: the frame's window
    /// (at most `maxWindow`, or the content size when smaller) plus a slide reserve.
    ///
    /// A skippable frame gives no output. Bytes after the frame are not read; the result says
    /// where the frame ended.
    /// - Throws: ``ZstdDecodingError`` for bad or over-limit input; whatever `sink` throws, unchanged.
    ///   On an error the sink may already have received part of the frame.
    @discardableResult
    public func decompressFrame(
        _ input: UnsafeRawBufferPointer, maxOutput: Int, maxWindow: Int = defaultMaxWindow,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> FrameResult {
        guard let raw = input.baseAddress, input.count > 0 else {
            throw ZstdDecodingError(.truncated, "empty input: no zstd frame", offset: 0)
        }
        let src = raw.assumingMemoryBound(to: UInt8.self)
        let limit = max(0, maxOutput)
        let header: ZstdFrameHeader
        switch try FrameParser.parse(src, count: input.count, at: 0) {
        case .skippable(let size): return FrameResult(inputBytes: size, outputBytes: 0)
        case .zstd(let h): header = h
        }
        try check(header, maxOutput: limit, maxWindow: maxWindow, at: 0)
        let slideReserve = max(zstdBlockSizeMax, min(header.windowSize, 1 << 20))
        var capacity = min(header.windowSize + slideReserve, limit)
        if let size = header.contentSize { capacity = min(capacity, size) }
        // The window buffer is kept for the next frame when it is big enough (a pack's frames).
        if streamBuffer == nil || streamBufferCapacity < capacity || streamBufferCapacity > 4 * max(capacity, 1 << 20) {
            streamBuffer?.deallocate()
            streamBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + outputSlack)
            streamBufferCapacity = capacity
        }
        guard let buffer = streamBuffer else { return FrameResult(inputBytes: 0, outputBytes: 0) }
        var out = OutputBuffer(
            base: buffer, capacity: capacity, pos: 0, historyStart: 0, growable: false, sliding: true,
            maxCapacity: capacity)
        context.resetForFrame()
        var frame = FrameProgress(header: header, inputPos: header.headerSize, maxOutput: limit, callerLimit: limit)
        while !frame.finished {
            let range = try context.decodeNextBlock(src, inputCount: input.count, frame: &frame, out: &out)
            if !range.isEmpty {
                try sink(UnsafeRawBufferPointer(start: out.base + range.lowerBound, count: range.count))
            }
        }
        return FrameResult(inputBytes: frame.inputPos, outputBytes: frame.produced)
    }

    // MARK: Internals

    private func check(_ header: ZstdFrameHeader, maxOutput: Int, maxWindow: Int, at: Int) throws(ZstdDecodingError) {
        if let size = header.contentSize, size > maxOutput {
            throw ZstdDecodingError(.outputLimitExceeded, "frame declares \(size) bytes, more than the output limit \(maxOutput)", offset: at)
        }
        // A frame that declares its content size never needs more window than that (no match reaches
        // before the frame's start), so the limit applies to the smaller of the two; libzstd likewise
        // decodes such a frame in one pass, whatever window it declares.
        let needed = min(header.windowSize, header.contentSize ?? header.windowSize)
        guard needed <= maxWindow else {
            throw ZstdDecodingError(.windowTooLarge, "frame needs a \(header.windowSize)-byte window, more than the limit \(maxWindow)", offset: at)
        }
    }

    /// Decodes the frame whose header starts at `at`; returns the input offset after it.
    private func decodeFrame(
        _ src: UnsafePointer<UInt8>, count: Int, at: Int, header: ZstdFrameHeader, out: inout OutputBuffer,
        maxOutput: Int, callerLimit: Int
    ) throws(ZstdDecodingError) -> Int {
        context.resetForFrame()
        var frame = FrameProgress(header: header, inputPos: at + header.headerSize, maxOutput: maxOutput, callerLimit: callerLimit)
        while !frame.finished {
            _ = try context.decodeNextBlock(src, inputCount: count, frame: &frame, out: &out)
        }
        return frame.inputPos
    }
}
