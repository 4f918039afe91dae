/// How ``PackInstaller`` got one pack: only the frames it lacked, by range, or the whole file.
///
/// ``bytesFetched`` counts the body bytes received for the pack (for a sparse fetch: every range,
/// retries included); ``wholePackBytes`` is what downloading the whole pack costs, so the two say
/// what the sparse path saved. ``fallbackReason`` says why a sparse fetch was not used when one
/// was possible in principle (no previous generation, the server ignores `Range`, the plan would
/// cost more than the pack).
///
/// ```swift
/// let report = try await installer.install(from: PackIndexSource(indexURL))
/// for fetch in report.fetches {
///     print(fetch.pack, fetch.method, fetch.bytesFetched, "of", fetch.wholePackBytes, fetch.fallbackReason ?? "")
/// }
/// ```
package struct PackFetchSummary: Sendable, Equatable {
    /// Which way the pack came.
    package enum Method: String, Sendable, Equatable {
        /// The catalog's frame and the missing GIFs' frames, by single-range requests.
        case sparse
        /// The whole pack file (downloaded, resumed, or found already downloaded).
        case wholePack = "whole-pack"
        /// A local index's pack file, read in place.
        case local
        /// Nothing fetched: the installed generation already holds everything of this file (a
        /// posters pack whose every poster the cache holds intact).
        case installed
    }

    package var pack: String
    package var version: Int
    package var method: Method
    /// Body bytes received for this pack.
    package var bytesFetched: Int64
    /// The size of the pack file.
    package var wholePackBytes: Int64
    /// Range requests made (sparse only; nil otherwise).
    package var requests: Int?
    /// GIF frames fetched (sparse only; nil otherwise).
    package var framesFetched: Int?
    /// Why a whole download was made although the sparse path was enabled; nil when it was not
    /// considered (a local index, sparse upgrades off) or when it was taken.
    package var fallbackReason: String?

    package init(
        pack: String, version: Int, method: Method, bytesFetched: Int64, wholePackBytes: Int64,
        requests: Int? = nil, framesFetched: Int? = nil, fallbackReason: String? = nil
    ) {
        self.pack = pack
        self.version = version
        self.method = method
        self.bytesFetched = bytesFetched
        self.wholePackBytes = wholePackBytes
        self.requests = requests
        self.framesFetched = framesFetched
        self.fallbackReason = fallbackReason
    }
}
