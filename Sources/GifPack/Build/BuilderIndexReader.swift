import Foundation
import GifPackIndexReader
import GifPackSystem

/// How the builder reads an index — its output's own, the one `gifpack publish` uploads, the one a
/// target serves, the one clients are served: with the client's reader (``PackIndexSource``, as
/// `--previous-index` does), its checks of the format's rules included, so the builder never takes
/// for an index what an app would refuse. Only the index's size is bounded: the builder's own
/// output may hold packs of any size.
///
/// ```swift
/// let local = try BuilderIndexReader.read("dist/index.json")   // nil on a first build
/// let live = try BuilderIndexReader.decode(bytes)
/// ```
package enum BuilderIndexReader {
    /// The limits the builder reads an index with.
    package static let limits = PackLimits(maxIndexBytes: 256 << 20, maxCatalogBytes: .max, maxGIFBytes: .max, maxPackBytes: .max)

    /// The index in `bytes`.
    package static func decode(_ bytes: [UInt8]) throws(PackClientError) -> PackIndex {
        try PackIndexSource.decode(Data(bytes), limits: limits)
    }

    /// The index at `path`, read as it is decoded (never whole: 100,000 exercises keep about a
    /// dozen bytes each); nil when nothing is there (a first build). Anything else that is not a
    /// readable index — a link, a directory, bytes the reader refuses — throws: it is never taken
    /// for a missing one.
    package static func read(_ path: String) throws(PackClientError) -> PackIndex? {
        if SystemCalls.linkStatus(path) == nil, Errno.current == .noSuchFileOrDirectory { return nil }
        return try PackIndexSource.streamFile(path, limits: limits).index
    }

    /// ``read(_:)`` of an output directory's own `index.json`: one that is there but cannot be
    /// read is the build's (and `gifpack prune`'s) ``OutputIndexUnreadable``.
    package static func readOutputIndex(_ path: String) throws(OutputIndexUnreadable) -> PackIndex? {
        do throws(PackClientError) { return try read(path) } catch {
            throw OutputIndexUnreadable(path: path, error: error.description)
        }
    }
}
