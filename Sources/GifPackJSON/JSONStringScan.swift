/// Where a scanner that walks JSON text a byte at a time stands with respect to strings: the one
/// piece of string tracking ``PackIndexStream`` and ``PackCatalogStream`` share, so that a quote
/// inside a string, or an escaped quote, is never taken for structure.
///
/// ```swift
/// var strings = JSONStringScan()
/// if strings.inString {
///     if strings.step(byte) == .content { key.append(byte) }
/// } else if byte == UInt8(ascii: "\"") {
///     strings.open()
/// }
/// ```
package struct JSONStringScan: Sendable {
    /// True between a string's opening quote and its closing one.
    package private(set) var inString = false
    private var escaped = false

    /// What a byte inside a string is.
    package enum StringByte: Equatable, Sendable {
        /// The backslash that starts an escape.
        case backslash
        /// The byte after that backslash.
        case escaped
        /// The quote that ends the string (``inString`` is now false).
        case closingQuote
        /// Any other byte of the string.
        case content
    }

    package init() {}

    /// A string starts: the caller met `"` outside one.
    package mutating func open() {
        inString = true
        escaped = false
    }

    /// Classifies `byte`, a byte inside a string, and moves past it.
    package mutating func step(_ byte: UInt8) -> StringByte {
        if escaped {
            escaped = false
            return .escaped
        }
        switch byte {
        case UInt8(ascii: "\\"):
            escaped = true
            return .backslash
        case UInt8(ascii: "\""):
            inString = false
            return .closingQuote
        default:
            return .content
        }
    }
}
