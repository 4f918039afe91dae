/// Splits the decompressed content of one entry frame into its header, data and padding,
/// checking that the content is exactly one ustar entry of at most `maxSize` data bytes.
struct TarEntrySplitter {
    private let maxSize: Int64
    private var headerBytes: [UInt8] = []
    private var header: TarHeader?
    private var dataRemaining: Int64 = 0
    private var paddingRemaining: Int64 = 0

    init(maxSize: Int64) {
        self.maxSize = maxSize
        headerBytes.reserveCapacity(TarHeader.blockSize)
    }

    mutating func consume(
        _ bytes: UnsafeRawBufferPointer, onHeader: (TarHeader) throws(PackReadError) -> Void,
        into consumer: (UnsafeRawBufferPointer) throws(PackReadError) -> Void
    ) throws(PackReadError) {
        var rest = bytes[...]
        if header == nil {
            let take = min(rest.count, TarHeader.blockSize - headerBytes.count)
            headerBytes.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            guard headerBytes.count == TarHeader.blockSize else { return }
            let parsed = try TarHeader.parse(headerBytes)
            guard parsed.size <= maxSize else {
                throw .badTarHeader("entry \(parsed.name) is \(parsed.size) bytes, more than the \(maxSize) allowed")
            }
            header = parsed
            dataRemaining = parsed.size
            paddingRemaining = parsed.entryLength - Int64(TarHeader.blockSize) - parsed.size
            try onHeader(parsed)
        }
        if dataRemaining > 0, !rest.isEmpty {
            let take = Int(min(Int64(rest.count), dataRemaining))
            try consumer(UnsafeRawBufferPointer(rebasing: rest.prefix(take)))
            dataRemaining -= Int64(take)
            rest = rest.dropFirst(take)
        }
        guard !rest.isEmpty else { return }
        guard Int64(rest.count) <= paddingRemaining else {
            throw .badTarHeader("the frame holds more than one tar entry")
        }
        paddingRemaining -= Int64(rest.count)
    }

    /// The header, once the whole entry including padding has been consumed.
    func finish() throws(PackReadError) -> TarHeader {
        guard let header else {
            throw .badTarHeader("the frame holds \(headerBytes.count) bytes, less than a tar header")
        }
        guard dataRemaining == 0, paddingRemaining == 0 else {
            throw .badTarHeader("entry \(header.name) is cut short: \(dataRemaining + paddingRemaining) bytes missing")
        }
        return header
    }
}
