/// The fields of a POSIX ustar header block that packs use.
///
/// ``parse(_:)`` verifies the header checksum (unsigned sum of the block with the checksum field
/// read as spaces), requires the "ustar" magic, joins `prefix` and `name`, and decodes the octal
/// numeric fields. Base-256 (GNU binary) numbers are rejected: pack entries never need them.
///
/// ```swift
/// let header = try TarHeader.parse(Array(block[0..<512]))
/// if header.isRegularFile { print(header.name, header.size) }
/// ```
package struct TarHeader: Sendable, Equatable {
    package static let blockSize = 512

    package var name: String
    package var size: Int64
    package var mode: Int64
    package var mtime: Int64
    /// The raw type byte: `0x30` ("0") or `0` for regular files, `0x35` ("5") for directories, ...
    package var typeflag: UInt8
    package var uid: Int64
    package var gid: Int64
    package var linkName: String

    package init(
        name: String, size: Int64, mode: Int64, mtime: Int64, typeflag: UInt8, uid: Int64, gid: Int64,
        linkName: String
    ) {
        self.name = name
        self.size = size
        self.mode = mode
        self.mtime = mtime
        self.typeflag = typeflag
        self.uid = uid
        self.gid = gid
        self.linkName = linkName
    }

    /// True for typeflag "0" and the pre-POSIX NUL.
    package var isRegularFile: Bool { typeflag == UInt8(ascii: "0") || typeflag == 0 }

    /// Bytes the entry occupies in the tar stream: header, data, and padding to a 512-byte boundary.
    package var entryLength: Int64 { Self.entryLength(dataSize: size) }

    /// Header plus `dataSize` rounded up to a multiple of 512.
    package static func entryLength(dataSize: Int64) -> Int64 {
        Int64(blockSize) + (dataSize + Int64(blockSize) - 1) / Int64(blockSize) * Int64(blockSize)
    }

    /// Parses one 512-byte ustar header block.
    package static func parse(_ block: [UInt8]) throws(PackReadError) -> TarHeader {
        guard block.count == blockSize else {
            throw .badTarHeader("header block is \(block.count) bytes, expected \(blockSize)")
        }
        guard block.contains(where: { $0 != 0 }) else {
            throw .badTarHeader("zero block (end of archive) where an entry header was expected")
        }
        guard Array(block[257..<262]) == Array("ustar".utf8) else {
            throw .badTarHeader("missing ustar magic")
        }
        let recorded = try number(block, 148, 8, "chksum")
        let computed = block.enumerated().reduce(Int64(0)) { sum, element in
            sum + Int64((148..<156).contains(element.offset) ? 0x20 : element.element)
        }
        guard recorded == computed else {
            throw .badTarHeader("header checksum \(recorded) does not match computed \(computed)")
        }
        let shortName = try text(block, 0, 100, "name")
        let prefix = try text(block, 345, 155, "prefix")
        return TarHeader(
            name: prefix.isEmpty ? shortName : "\(prefix)/\(shortName)",
            size: try number(block, 124, 12, "size"),
            mode: try number(block, 100, 8, "mode"),
            mtime: try number(block, 136, 12, "mtime"),
            typeflag: block[156],
            uid: try number(block, 108, 8, "uid"),
            gid: try number(block, 116, 8, "gid"),
            linkName: try text(block, 157, 100, "linkname"))
    }

    /// A NUL-terminated (or field-filling) ASCII string.
    private static func text(
        _ block: [UInt8], _ offset: Int, _ length: Int,
        _ field: String
    ) throws(PackReadError) -> String {
        let bytes = block[offset..<offset + length].prefix { $0 != 0 }
        guard bytes.allSatisfy({ $0 < 0x80 }) else { throw .badTarHeader("\(field) is not ASCII") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An octal number, optionally surrounded by spaces and terminated by NUL or space.
    private static func number(
        _ block: [UInt8], _ offset: Int, _ length: Int,
        _ field: String
    ) throws(PackReadError) -> Int64 {
        var digits = block[offset..<offset + length].drop { $0 == 0x20 }
        digits = digits.prefix { $0 != 0 && $0 != 0x20 }
        guard !digits.isEmpty, digits.count <= 21 else { throw .badTarHeader("\(field) is not an octal number") }
        var value: Int64 = 0
        for digit in digits {
            guard (0x30...0x37).contains(digit) else { throw .badTarHeader("\(field) is not an octal number") }
            value = value << 3 | Int64(digit - 0x30)
        }
        return value
    }
}
