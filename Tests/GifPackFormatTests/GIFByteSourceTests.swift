import Foundation
import Glibc
import Testing
@testable import GifPackGIF
@testable import GifPackTestSupport

/// The bytes giflib pulls from a file (``GIFByteSource``): one buffer, refilled by `read(2)`, giving
/// back exactly the file whatever the sizes asked for, across chunk boundaries, and telling a
/// short read (the file ended) from a full one.
@Suite("GIF byte source: a file read in chunks through one buffer", .computes, .timeLimit(.minutes(2)))
struct GIFByteSourceTests {
    /// A file of `count` patterned bytes, opened for reading (the caller closes it).
    private static func file(_ count: Int, in directory: TemporaryDirectory) throws -> (fd: Int32, bytes: [UInt8]) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let path = directory.file("bytes")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        return (fd, bytes)
    }

    @Test func readsInAnySizesGiveTheFileAcrossChunksAndAShortReadMarksTheEnd() throws {
        let directory = try TemporaryDirectory()
        let size = 3 * GIFByteSource.chunkSize + 123
        let (fd, bytes) = try Self.file(size, in: directory)
        defer { close(fd) }
        let source = GIFByteSource(fileDescriptor: fd)
        #expect(source.peek(6) == Array(bytes[0..<6]), "a peek consumes nothing")
        var read: [UInt8] = []
        var sizes = [1, 255, 7, GIFByteSource.chunkSize - 1, 2, GIFByteSource.chunkSize + 5, 4096].makeIterator()
        var buffer = [UInt8](repeating: 0, count: 2 * GIFByteSource.chunkSize)
        while read.count < size {
            let want = min(sizes.next() ?? 1000, size - read.count)
            let got = buffer.withUnsafeMutableBufferPointer { source.read(into: $0.baseAddress!, count: want) }
            #expect(got == want)
            read += buffer[0..<got]
        }
        #expect(read == bytes)
        #expect(!source.reachedEnd, "every read so far was whole")
        let past = buffer.withUnsafeMutableBufferPointer { source.read(into: $0.baseAddress!, count: 10) }
        #expect(past == 0 && source.reachedEnd && source.readErrno == nil)
    }

    @Test func aPeekLongerThanAChunkGrowsTheBufferAndTheReadsAfterItContinue() throws {
        let directory = try TemporaryDirectory()
        let size = 2 * GIFByteSource.chunkSize + 10
        let (fd, bytes) = try Self.file(size, in: directory)
        defer { close(fd) }
        let source = GIFByteSource(fileDescriptor: fd)
        var buffer = [UInt8](repeating: 0, count: size)
        #expect(buffer.withUnsafeMutableBufferPointer { source.read(into: $0.baseAddress!, count: 100) } == 100)
        let long = GIFByteSource.chunkSize + 500
        #expect(source.peek(long) == Array(bytes[100..<(100 + long)]))
        #expect(source.peek(size) == Array(bytes[100...]), "a peek past the end gives what there is")
        let rest = buffer.withUnsafeMutableBufferPointer { source.read(into: $0.baseAddress!, count: size) }
        #expect(rest == size - 100 && Array(buffer[0..<rest]) == Array(bytes[100...]))
        #expect(source.reachedEnd)
    }

    @Test func aDescriptorThatCannotBeReadIsAnErrorNotAnEnd() throws {
        let directory = try TemporaryDirectory()
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY)
        try #require(fd >= 0)
        defer { close(fd) }
        let source = GIFByteSource(fileDescriptor: fd)
        #expect(source.peek(6).isEmpty)
        #expect(source.readErrno == EISDIR)
    }
}
