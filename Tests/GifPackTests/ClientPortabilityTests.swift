import Foundation
import Testing
@testable import GifPackClient

/// The file times the lazy cache reads go through `SystemCalls.modificationTime` (`st_mtim` in
/// glibc, `st_mtimespec` in Darwin); a time the cache did not write is untrusted input.
@Suite("Client portability: file times")
struct ClientFileTimeTests {
    @Test("a cached GIF whose mtime is centuries ahead is trimmed by least-recent use, not a trap")
    func farFutureModificationTime() throws {
        let directory = try TemporaryDirectory()
        let store = LazyGIFStore(directory: directory.path)
        try store.prepare()
        let (old, new) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64))
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: store.gifPath(old)))
        // Year 2350: past Int64 nanoseconds (2262), within ext4's and tmpfs's range.
        let future = Date(timeIntervalSince1970: 12_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: future], ofItemAtPath: store.gifPath(old))
        let stamped = try FileManager.default.attributesOfItem(atPath: store.gifPath(old))[.modificationDate] as? Date
        #expect(stamped == future, "the file system kept another time: the test proves nothing here")
        let temporary = store.temporaryFile("gif")
        try Data(repeating: 2, count: 100).write(to: URL(fileURLWithPath: temporary))
        try store.storeGIF(temporary, sha256: new, byteLimit: 150)
        #expect(!FileManager.default.fileExists(atPath: store.gifPath(old)))
        #expect(FileManager.default.fileExists(atPath: store.gifPath(new)))
        #expect(store.storedBytes() == 100)
    }
}
