import Foundation
import GifPackFormat
import Testing

/// Inputs `make fuzz` found (Fuzz/README.md), each minimised and kept in the fuzz corpus, checked here
/// without a fuzzer.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// Fuzz/corpus/json/int64-min-boundary: digits just below Int64.min are a double, -2^63, which
    /// canonical JSON writes as -9.223372036854776e+18; that text read back as the integer
    /// Int64.min (the double is integral and "fits"), so the canonical bytes were not a fixed point:
    /// parse, encode, parse, encode gave -9223372036854775808, a different value and digest.
    @Test func canonicalJSONOfNumbersJustBelowInt64MinIsAFixedPoint() throws {
        for text in ["[-9223372036854775809]", "[-9223372036854776000]", "[-9.223372036854776e18]", "[-9223372036854775808.5]"] {
            let first = try CanonicalJSON.encode(try JSONParser.parse(Array(text.utf8)))
            let second = try CanonicalJSON.encode(try JSONParser.parse(first))
            #expect(second == first, "\(text): \(String(decoding: first, as: UTF8.self)) -> \(String(decoding: second, as: UTF8.self))")
            #expect(String(decoding: first, as: UTF8.self) == "[-9.223372036854776e+18]", "\(text)")
        }
        // What does fit Int64 still reads as an integer, written with digits, a fraction or an exponent.
        for text in ["[-9223372036854775808]", "[-9223372036854775808.0]", "[-9.223372036854775808e18]"] {
            #expect(try JSONParser.parse(Array(text.utf8)) == .array([.integer(Int64.min)]), "\(text)")
        }
        #expect(try JSONParser.parse(Array("[-9.223372036854776e+18]".utf8)) == .array([.number(-0x1p63)]))
    }
}
