import CZstd
import Synchronization

/// Streams bytes into one zstd frame written to a ``FileDescriptorSink``, with pinned parameters.
///
/// Parameters are set explicitly (compression level, content checksum on, content size in the
/// header on, no worker threads) so output depends only on the input and the level; the pledged
/// source size lets zstd record the content size in the frame header and fail if the input does
/// not match it. One compressor writes one frame; it is used on one thread.
final class ZstdFrameCompressor {
    private let context: OpaquePointer
    private let output: UnsafeMutableRawBufferPointer
    private let sink: FileDescriptorSink
    /// Whether the frame is a large entry's (see `init`): its context is not kept for reuse.
    private let large: Bool

    /// Entries above this size get pinned table sizes (see `init`).
    static let largeEntry: Int64 = 256 * 1024
    /// Entries above this size (and up to ``largeEntry``) get hash and chain tables of at most
    /// 2^``mediumTableLog`` entries (see `init`).
    static let mediumEntry: Int64 = 128 * 1024
    static let mediumTableLog: UInt32 = 17
    /// Names the parameters above in the frame caches' paths (``CacheLayout/framesDirectory(level:mtime:)``):
    /// a frame made under other rules is never reused. Bump it when they change.
    static let parametersVersion = 2

    init(level: Int32, pledgedSize: Int64, sink: FileDescriptorSink) throws(PackWriteError) {
        let bounds = ZSTD_cParam_getBounds(ZSTD_c_compressionLevel)
        guard (max(1, bounds.lowerBound)...bounds.upperBound).contains(level) else {
            throw .zstd("compression level \(level) is outside 1...\(bounds.upperBound)")
        }
        guard let context = ZstdContextPool.take() else { throw .zstd("ZSTD_createCCtx failed (out of memory)") }
        self.context = context
        self.sink = sink
        large = pledgedSize > Self.largeEntry
        output = .allocate(byteCount: ZSTD_CStreamOutSize(), alignment: 16)
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level), "compression level")
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1), "checksum flag")
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1), "content size flag")
        try check(ZSTD_CCtx_setParameter(context, ZSTD_c_nbWorkers, 0), "worker count")
        try check(ZSTD_CCtx_setPledgedSrcSize(context, UInt64(pledgedSize)), "pledged size")
        if pledgedSize > Self.largeEntry {
            // A large entry (a big catalog.json) would get level 9's full tables, 14-18 MB of memory;
            // these caps cost about 0.1% in size and keep the context near 6 MB.
            try check(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, 20), "window log")
            if level >= 6 {  // lower levels already use smaller tables
                try check(ZSTD_CCtx_setParameter(context, ZSTD_c_hashLog, 18), "hash log")
                try check(ZSTD_CCtx_setParameter(context, ZSTD_c_chainLog, 18), "chain log")
            }
        } else if pledgedSize > Self.mediumEntry, level >= 6 {
            // A GIF of 128-256 KB would get the tables of levels 6 and up for that size (2^19 hash
            // and 2^18-2^19 chain entries: a 4.2 MB context at level 9, kept in the pool and made by
            // each processing thread at once); at 2^17 the context is 2.1 MB and the real sample's
            // GIFs of that size compress 0.01% larger. Smaller sizes and lower levels already use
            // tables of at most 2^17 and 2^18.
            try check(ZSTD_CCtx_setParameter(context, ZSTD_c_hashLog, Int32(Self.mediumTableLog)), "hash log")
            try check(ZSTD_CCtx_setParameter(context, ZSTD_c_chainLog, Int32(Self.mediumTableLog)), "chain log")
        }
    }

    deinit {
        // A large entry's context (a big catalog.json: several megabytes of tables) is freed, not
        // kept: the pool would hold on to those tables for the small GIF frames that follow.
        if large { ZSTD_freeCCtx(context) } else { ZstdContextPool.give(context) }
        output.deallocate()
    }

    /// The memory its context holds now (`ZSTD_sizeof_CCtx`): what the table caps above bound.
    var contextBytes: Int { ZSTD_sizeof_CCtx(context) }

    /// Compresses `bytes`, writing whatever output zstd produces.
    func compress(_ bytes: UnsafeRawBufferPointer) throws(PackWriteError) {
        var input = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: 0)
        while input.pos < input.size {
            _ = try step(&input, ZSTD_e_continue)
        }
    }

    /// Ends the frame (last block and checksum) and writes it out.
    func finish() throws(PackWriteError) {
        var input = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
        while try step(&input, ZSTD_e_end) != 0 {}
    }

    /// One `ZSTD_compressStream2` call; returns zstd's "bytes left to flush" hint.
    private func step(_ input: inout ZSTD_inBuffer, _ directive: ZSTD_EndDirective) throws(PackWriteError) -> Int {
        var target = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let remaining = ZSTD_compressStream2(context, &target, &input, directive)
        try check(remaining, "compression")
        try sink.write(UnsafeRawBufferPointer(rebasing: output[0..<target.pos]))
        return remaining
    }

    private func check(_ result: Int, _ what: String) throws(PackWriteError) {
        if ZSTD_isError(result) != 0 {
            throw .zstd("\(what): \(String(cString: ZSTD_getErrorName(result)))")
        }
    }
}

/// zstd compression contexts kept for the next GIF's frame: a context's tables (a megabyte or two
/// at level 9) are allocated once, not once per GIF; a frame compressed with a reused context is the same
/// bytes as with a new one (every parameter is reset and set again). A handful are kept, as many
/// as frames are compressed at once (the processing workers, the pack and the posters pack).
enum ZstdContextPool {
    private struct Context: @unchecked Sendable { let pointer: OpaquePointer }  // @unchecked: a context has one user at a time: taken from and given back to `kept` under its lock.
    private static let kept = Mutex<[Context]>([])
    static let maxKept = 4

    /// A context with zstd's default parameters, reused or new (nil when zstd cannot allocate one).
    static func take() -> OpaquePointer? {
        kept.withLock { $0.popLast()?.pointer } ?? ZSTD_createCCtx()
    }

    /// Frees every context kept: the fetch's GIF frames are made, and the pack stage needs their
    /// tables (up to 2 MB each) no longer, while it holds the catalog's and the packs' own.
    static func drain() {
        for context in kept.withLock({ contexts in
            defer { contexts = [] }
            return contexts
        }) {
            ZSTD_freeCCtx(context.pointer)
        }
    }

    /// Returns a context for reuse (or frees it when enough are kept).
    static func give(_ context: OpaquePointer) {
        let reset = ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters)
        let keep =
            ZSTD_isError(reset) == 0
            && kept.withLock { contexts in
                guard contexts.count < maxKept else { return false }
                contexts.append(Context(pointer: context))
                return true
            }
        if !keep { ZSTD_freeCCtx(context) }
    }
}
