import CFuzzDriver
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What every fuzz target shares: the input as bytes, a consumer that splits it into parameters,
/// a scratch file for readers that only take a path, and the check that turns a broken property
/// into a crash libFuzzer reports.
public enum Fuzz {
    /// libFuzzer's input as an array.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Stops the process with `message` when a property that must hold does not: libFuzzer records
    /// the input as a crash (SIGABRT) and prints the message.
    public static func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                               file: StaticString = #fileID, line: UInt = #line) {
        if !condition() {
            FileHandle.standardError.write(Data("fuzz property broken at \(file):\(line): \(message())\n".utf8))
            abort()
        }
    }

    /// A file holding `bytes`, for readers that take a path. One file per process, rewritten for
    /// every input (libFuzzer runs one input at a time).
    public static func scratchFile(holding bytes: [UInt8]) -> String {
        let path = scratchPath
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("cannot open the scratch file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            guard result > 0 else { fatalError("cannot write the scratch file \(path)") }
            written += result
        }
        return path
    }

    private static let scratchPath: String = {
        let directory = ProcessInfo.processInfo.environment["FUZZ_SCRATCH_DIR"]
            ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory())
        return "\(directory)/gifpack-fuzz-\(getpid())"
    }()
}

/// Takes parameters off the front of a fuzz input; what is left is the payload.
public struct FuzzInput {
    public private(set) var rest: ArraySlice<UInt8>

    public init(_ bytes: [UInt8]) { rest = bytes[...] }

    /// The next byte, 0 once the input is used up.
    public mutating func byte() -> UInt8 {
        guard let first = rest.first else { return 0 }
        rest = rest.dropFirst()
        return first
    }

    /// The next two bytes, little-endian.
    public mutating func uint16() -> Int { Int(byte()) | Int(byte()) << 8 }

    /// Everything not taken yet.
    public var remaining: [UInt8] { Array(rest) }
}

extension Fuzz {
    /// Runs libFuzzer with `callback` as the target and the process's arguments; never returns.
    /// Each target's `@main` calls it (see CFuzzDriver.h for why libFuzzer's own main is not used).
    public static func run(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
    }
}
