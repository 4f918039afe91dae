import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader
import GifPackSigning

/// One exercise's GIF on demand: from a bounded disk cache, or fetched alone with one range request.
///
/// For an app that shows an exercise before (or instead of) installing whole packs.
/// ``gif(forExercise:)`` looks the exercise up in the index and:
///
/// - answers ``LazyGIF/noGIF`` for an exercise listed without a GIF (show a placeholder) — no
///   request beyond keeping the index fresh;
/// - returns the GIF from `<directory>/gifs/<sha256>.gif` when stored (size and SHA-256 checked
///   on every read); GIFs are stored by hash, so an exercise whose GIF moved to a hash already
///   stored costs nothing;
/// - otherwise fetches exactly the GIF's zstd frame from the pack with one single-range request
///   (`Range: bytes=<frameOffset>-<end>`), checks the answer (`206`, the `Content-Range` asked for,
///   the pack's size from the index), decompresses it with an install's checks (tar header,
///   decompression cap, SHA-256) and stores it.
///
/// The index is fetched as `index.json.zst` (the compressed copy, ``CompressedIndex``) or, when
/// the publisher has none, `index.json`, and stored (plain) with its URL, `ETag` and `Last-Modified`;
/// once it is older than ``indexMaxAge`` it is revalidated with `If-None-Match` and
/// `If-Modified-Since` (a `304` costs no body and fetches no signature); if the server cannot be
/// reached the stored index is used. A range answer that shows the index is out of date (a `416`, a
/// different pack size, a `404`) reloads the index and tries once more. A server that ignores `Range`
/// (answers `200`) is refused: install the pack instead (``PackInstaller``).
///
/// With ``trust``, the index is accepted only as ``IndexTrust`` says, the rules of
/// `install --trusted-key`: its signature (fetched with every new index, from
/// `signatures/<the index's sha256>.minisig` beside it, else `index.json.minisig`: ``SignatureLocation/lookupOrder(_:indexSHA256:)``)
/// must verify it with a trusted key, it must carry `sequence` and `expires` and not be
/// expired, and its sequence must not be lower than the floor of this index URL: the highest
/// sequence the cache has accepted from it with trusted keys, whichever keys (a rotation, from
/// `[old]` to `[old, next]`, keeps the floor). Each index URL (normalised) and set of trusted keys
/// has its own slot in the directory and index, and each URL its own floor, so several sources
/// share one cache without one's sequence refusing another's, and a read without trusted keys
/// never touches a trusted floor. The
/// signature is stored with the index and checked again (expiry included) whenever the stored index
/// is used, so an index that expires meanwhile is refused even offline. A refused index throws
/// ``PackClientError/untrusted(_:)`` before any GIF request; nothing is stored.
///
/// The directory must be gifpack's: a missing or empty one is claimed (a `.gifpack-lazy-cache`
/// marker is written), one with the marker is used, and any other non-empty directory throws
/// ``PackClientError/cacheNotManaged(path:detail:)`` before anything in it is created or deleted;
/// only the cache's own file names are ever deleted (see `LazyGIFStore`).
///
/// The cache holds at most ``byteLimit`` bytes of GIFs, evicting the least recently used (use
/// times are the files' mtimes, so they survive the process). It is safe for concurrent callers and
/// for several processes sharing the directory: files appear only by `rename(2)` of a verified
/// temporary file, and renames and evictions happen under an exclusive `flock` on
/// `<directory>/lock` (see `LazyGIFStore`). Failures leave the cache as it was. Disk work runs
/// on dedicated threads.
///
/// ```swift
/// let gifs = LazyGIFCache(directory: cachesURL.appendingPathComponent("gif-cache").path,
///                         indexURL: "https://cdn.example.com/gifpack/index.json", byteLimit: 50 << 20)
/// switch try await gifs.gif(forExercise: "0001") {
/// case .gif(let bytes, _): show(bytes)
/// case .noGIF: showPlaceholder()
/// }
/// ```
package final class LazyGIFCache: Sendable {
    /// Where the index and the GIFs are kept.
    package let directory: String
    /// The index: an http(s) URL (a local path works too: its packs are read in place, nothing is stored).
    package let source: PackIndexSource
    /// Most bytes of GIFs kept on disk.
    package let byteLimit: Int64
    /// How long a stored index is used before it is revalidated (`If-None-Match`).
    package let indexMaxAge: TimeSpan
    package let limits: PackLimits
    /// Transfer attempts per request (a dropped range request is made again; one that timed out
    /// is not: a server that stops sending fails the call after one low-speed window).
    package let attempts: Int
    package let timeouts: HTTPTimeouts
    /// Trusted keys the index must be signed with (see above); nil: any index is used.
    package let trust: IndexTrust?
    /// The pixels the app shows a GIF at: with an index that has renditions (format 1.3), an
    /// exercise's GIF is its smallest rendition at least this size, else the largest there is
    /// (``RenditionChoice``), and only that rendition's frame is fetched. nil: the GIF of `packs[]`
    /// (the first resolution), as before renditions.
    package let preferredPixelSize: Int?
    /// The image formats the app displays, in order of preference (format 1.4, `FormatChoice`):
    /// with `[.webp, .gif]`, an exercise whose pack has a WebP rendition gets its WebP (its frame
    /// fetched from the WebP pack, its container walked before it is served). Default `[.gif]`.
    package let formats: [ImageFormat]
    private let client: any HTTPTransport
    let store: LazyGIFStore
    /// This source's index slot in the directory (``LazyGIFStore/slotName(url:keys:)``).
    let slot: String
    /// The stored index as last read, decoded and made ready for lookups (``Resolved``).
    let resolved = Locked<Resolved?>(nil)
    /// Counts reads and decodings of an index (``indexLoads``).
    let loads = Locked<Int>(0)
    /// The highest sequence verified in this process for this URL, by this cache or the app's other tier.
    let knownFloor = Locked<Int?>(nil)
    /// The rollback floor the app's other tier keeps on disk for this URL (a ``GIFLoader``'s
    /// installed generation), read with the cache's own floors whenever an index is accepted; nil: none.
    let floorSource: (@Sendable () throws -> Int?)?

    /// `client` is used for every request; without one the cache makes one ``URLSessionTransport``
    /// for its lifetime.
    package convenience init(
        directory: String, indexURL: String, byteLimit: Int64 = 64 << 20, indexMaxAge: TimeSpan = .seconds(300),
        client: (any HTTPTransport)? = nil, limits: PackLimits = .standard, attempts: Int = 3,
        timeouts: HTTPTimeouts = HTTPTimeouts(), trust: IndexTrust? = nil, preferredPixelSize: Int? = nil,
        formats: [ImageFormat] = [.gif]
    ) {
        self.init(
            directory: directory, indexURL: indexURL, byteLimit: byteLimit, indexMaxAge: indexMaxAge, client: client, limits: limits,
            attempts: attempts, timeouts: timeouts, trust: trust, preferredPixelSize: preferredPixelSize, formats: formats, floorSource: nil)
    }

    /// With `floorSource`: the rollback floor another tier of the app keeps (``GIFLoader``).
    init(
        directory: String, indexURL: String, byteLimit: Int64, indexMaxAge: TimeSpan, client: (any HTTPTransport)?, limits: PackLimits,
        attempts: Int, timeouts: HTTPTimeouts, trust: IndexTrust?, preferredPixelSize: Int?, formats: [ImageFormat] = [.gif],
        floorSource: (@Sendable () throws -> Int?)?
    ) {
        self.floorSource = floorSource
        self.formats = FormatChoice.normalized(formats)
        self.trust = trust
        self.preferredPixelSize = preferredPixelSize
        self.directory = PathText.trimmingTrailingSlashes(directory)
        self.source = PackIndexSource(indexURL)
        self.byteLimit = byteLimit
        self.indexMaxAge = indexMaxAge
        self.client = client ?? URLSessionTransport(maxConnections: 4)
        self.limits = limits
        self.attempts = max(1, attempts)
        self.timeouts = timeouts
        self.store = LazyGIFStore(directory: self.directory)
        self.slot = LazyGIFStore.slotName(url: indexURL, keys: trust?.keys.map(Self.slotKey) ?? [])
    }

    /// A trusted key as it enters the slot name: its id and the key itself.
    private static func slotKey(_ key: MinisignPublicKey) -> String {
        "\(key.keyIDText) \(Data(key.rawKey).base64EncodedString())"
    }

    /// The GIF of exercise `id`, or ``LazyGIF/noGIF``. Throws
    /// ``PackClientError/unknownExercise(_:)`` when no pack lists it.
    package func gif(forExercise id: String) async throws(PackClientError) -> LazyGIF {
        // One deadline for the whole call: the index, its signature and the GIF, retries included.
        try await gif(forExercise: id, call: timeouts.startingCall())
    }

    /// ``gif(forExercise:)`` within a call already started (``HTTPTimeouts/startingCall()``): a
    /// ``GIFLoader`` call's one deadline covers this too.
    func gif(forExercise id: String, call timeouts: HTTPTimeouts) async throws(PackClientError) -> LazyGIF {
        try await gif(call: timeouts) { lookup throws(PackClientError) in
            guard case .gif(let pack, let entry) = try lookup.gif(forExercise: id) else { return nil }
            return (pack, entry, id)
        }
    }

    /// The GIF whose SHA-256 is `sha256`, from whichever pack of the index holds it (any
    /// rendition: a hash names one GIF); ``LazyGIF/noGIF`` when none does.
    func gif(sha256: String, call timeouts: HTTPTimeouts) async throws(PackClientError) -> LazyGIF {
        try await gif(call: timeouts) { lookup throws(PackClientError) in try lookup.gif(sha256: sha256).map { ($0.pack, $0.entry, sha256) } }
    }

    /// The GIF `locate` finds in the index's lookup tables (its pack, its entry and the name errors
    /// give it; nil: no GIF).
    private func gif(
        call timeouts: HTTPTimeouts,
        locate: (IndexLookup) throws(PackClientError) -> (PackDescription, GIFEntry, String)?
    ) async throws(PackClientError) -> LazyGIF {
        if case .file = source.location { return try await localGIF(locate) }
        let http = client
        var lookup = try await currentLookup(client: http, forceRevalidation: false, timeouts: timeouts)
        var reloaded = false
        while true {
            guard let (pack, entry, _) = try locate(lookup) else { return .noGIF }
            let hash = entry.sha256
            let store = self.store
            let cached = await BlockingWork.result("gifpack.lazy-read") { () throws(PackClientError) -> [UInt8]? in
                store.readGIF(sha256: hash, size: entry.location.size)
            }
            if case .success(let bytes?) = cached { return .gif(bytes: bytes, fromCache: true) }
            do {
                return .gif(bytes: try await fetch(entry, of: pack, client: http, timeouts: timeouts), fromCache: false)
            } catch let error as IndexOutOfDate {
                // The pack on the server is not the one the index names: load the index again, once.
                guard !reloaded else { throw error.underlying }
                reloaded = true
                let fresh = try await currentLookup(client: http, forceRevalidation: true, timeouts: timeouts)
                guard fresh.index != lookup.index else { throw error.underlying }
                lookup = fresh
            } catch let error as PackClientError {
                throw error
            } catch {
                throw .unreadable(location: directory, detail: "\(error)")
            }
        }
    }

    /// The index, revalidated when the stored copy is older than ``indexMaxAge`` (or always with
    /// `forceRevalidation`).
    package func index(forceRevalidation: Bool = false) async throws(PackClientError) -> PackIndex {
        try await lookup(forceRevalidation: forceRevalidation, call: timeouts.startingCall()).index
    }

    /// The index made ready for lookups (``IndexLookup``), shared by every call until the stored
    /// index changes or is revalidated, within a call already started (``HTTPTimeouts/startingCall()``):
    /// a ``GIFLoader`` call's one deadline covers it.
    func lookup(forceRevalidation: Bool = false, call timeouts: HTTPTimeouts) async throws(PackClientError) -> IndexLookup {
        if case .file = source.location { return IndexLookup(try await loadLocal(), pixels: preferredPixelSize, formats: formats, limits: limits) }
        return try await currentLookup(client: client, forceRevalidation: forceRevalidation, timeouts: timeouts)
    }

    /// Raises this cache's rollback floor in memory to `sequence`: another tier of the same app
    /// (``GIFLoader``'s installer) verified it. A stored index below it is not used again; on disk,
    /// ``floorSource`` says the same to the next process.
    func noteVerified(sequence: Int?) {
        guard let sequence else { return }
        knownFloor.withLock { $0 = max($0 ?? sequence, sequence) }
    }

    /// How many times the stored index was read from disk or an index's bytes were decoded (tests:
    /// once per revalidation that brings a new index, never per lookup).
    var indexLoads: Int { loads.withLock { $0 } }

    /// Bytes of GIFs stored now; a cache directory that cannot be read throws (never 0).
    package func storedBytes() async throws(PackClientError) -> Int64 {
        let store = self.store
        return try await BlockingWork.run("gifpack.lazy-size") { () throws(PackClientError) -> Int64 in try store.storedBytes() }
    }

    // MARK: GIFs

    /// A range answer showing that the server's pack is not the index's.
    private struct IndexOutOfDate: Error {
        let underlying: PackClientError
    }

    /// Fetches the GIF's frame, checks it, stores the GIF and returns it. The frame (a few KB, at
    /// most the index's frame length) stays in memory until it is verified: nothing touches the disk
    /// before, so a full disk costs no fetch, and the verified GIF makes room for itself
    /// (``LazyGIFStore/keepGIF(_:sha256:byteLimit:)``).
    private func fetch(
        _ entry: GIFEntry, of pack: PackDescription, client http: any HTTPTransport,
        timeouts: HTTPTimeouts
    ) async throws -> [UInt8] {
        guard case .url(let url) = try source.packLocation(for: pack) else {
            throw PackClientError.unreadable(location: source.description, detail: "not a remote index")
        }
        let location = entry.location
        let asked = location.frameOffset...(location.frameOffset + location.frameLength - 1)
        var request = HTTPRequest(url: url, timeouts: timeouts)
        request.followRedirects = true
        request.byteRange = asked
        var lastError = PackClientError.transfer(url: url, .cancelled)
        for _ in 0..<attempts {
            let answer: HTTPDataResponse
            do { answer = try await http.data(request, maxBytes: location.frameLength) } catch {
                lastError = .transfer(url: url, error)
                switch error {
                case .truncated, .connectionReset, .connectFailed: continue
                default: throw lastError
                }
            }
            switch RangeAnswer.judge(answer.head, bodyBytes: Int64(answer.body.count), asked: asked, pack: pack, url: url, etag: nil) {
            case .partial:
                return try await decodeAndStore(entry, pack: pack, frame: answer.body)
            case .rangeIgnored:
                throw PackClientError.unreadable(
                    location: url,
                    detail: "the server ignores Range requests (it answered 200): "
                        + "a single GIF cannot be fetched from it; install the pack instead")
            case .refused(let error):
                if [206, 404, 410, 412, 416].contains(answer.head.status) {
                    throw IndexOutOfDate(underlying: error)
                }
                throw error
            }
        }
        throw lastError
    }

    /// Decompresses the frame (in memory) with every check, then keeps the GIF in the cache when
    /// it can (``LazyGIFStore/keepGIF(_:sha256:byteLimit:)``: on a full disk older GIFs make room).
    /// The verified bytes are returned even when they could not be stored.
    private func decodeAndStore(_ entry: GIFEntry, pack: PackDescription, frame: [UInt8]) async throws(PackClientError) -> [UInt8] {
        let store = self.store
        let byteLimit = self.byteLimit
        return try await BlockingWork.run("gifpack.lazy-store") { () throws(PackClientError) -> [UInt8] in
            let name = "the range answer of \(SafePath.printable(entry.location.path))"
            let reader = PackFrameReader(bytes: frame, name: name)
            var alone = entry.location
            alone.frameOffset = 0
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(max(0, entry.location.size)))
            try IndexedEntry.read(
                alone, sha256: entry.sha256, image: entry.imageFormat, side: pack.renditionSide, pack: SafePath.printable(pack.name),
                reader: reader
            ) { chunk in bytes.append(contentsOf: chunk) }
            // Format 1.4: a WebP's container is walked before it is kept or served.
            if entry.imageFormat == .webp, let problem = IndexedEntry.webpProblem(bytes, pack: SafePath.printable(pack.name), entry: name) {
                throw .rejected(problem)
            }
            if Int64(bytes.count) <= byteLimit {
                store.keepGIF(bytes, sha256: entry.sha256, byteLimit: byteLimit)
            }
            return bytes
        }
    }

    /// A local index: the GIF read in place from its pack file.
    private func localGIF(_ locate: (IndexLookup) throws(PackClientError) -> (PackDescription, GIFEntry, String)?) async throws(PackClientError) -> LazyGIF {
        let lookup = IndexLookup(try await loadLocal(), pixels: preferredPixelSize, formats: formats, limits: limits)
        guard let (pack, entry, name) = try locate(lookup) else { return .noGIF }
        guard case .file(let path) = try source.packLocation(for: pack),
            let id = pack.exercises.first(where: { $0.gif == entry.sha256 })?.id
        else { throw .unknownExercise(name) }
        let limits = self.limits
        let bytes = try await BlockingWork.run("gifpack.lazy-local") { () throws(PackClientError) -> [UInt8] in
            try PackEntryReader(path: path, pack: pack, limits: limits).gif(forExercise: id)
        }
        return .gif(bytes: bytes, fromCache: false)
    }

    /// A local index, verified with its signature beside it when there is ``trust``.
    func loadLocal() async throws(PackClientError) -> PackIndex {
        if let trust { return try await source.load(trust: trust, client: nil, limits: limits) }
        return try await source.load(client: nil, limits: limits)
    }
}

/// What ``LazyGIFCache/gif(forExercise:)`` found.
///
/// ```swift
/// if case .gif(let bytes, let fromCache) = try await cache.gif(forExercise: "0001") { … }
/// ```
package enum LazyGIF: Sendable, Equatable {
    /// The verified GIF; `fromCache` is false when it was fetched for this call.
    case gif(bytes: [UInt8], fromCache: Bool)
    /// The exercise has no GIF: show a placeholder.
    case noGIF
}

/// The index side of ``LazyGIFCache``: the stored index read, verified and made ready for lookups
/// once per revalidation (``IndexLookup``), revalidated when older than ``LazyGIFCache/indexMaxAge``.
///
/// ```swift
/// let lookup = try await cache.lookup(call: cache.timeouts.startingCall())   // no read while the stored index is unchanged and fresh
/// ```
extension LazyGIFCache {
    /// The stored index as last read and accepted, with the slot file's identity then: while the
    /// file is the same and fresh, lookups use it without reading anything.
    struct Resolved: Sendable {
        var stored: LazyGIFStore.StoredIndex
        let lookup: IndexLookup
        var identity: LazyGIFStore.FileIdentity?
    }

    /// True when an index validated at `validatedAt` (seconds since 1970) may be used without asking
    /// the server: younger than ``indexMaxAge``. A time ahead of the clock (the clock moved back)
    /// is stale, never young: age is never negative.
    func isFresh(validatedAt: Int) -> Bool {
        let age = Int(Date().timeIntervalSince1970) - validatedAt
        return age >= 0 && TimeSpan.seconds(age) < indexMaxAge
    }

    func currentLookup(
        client http: any HTTPTransport, forceRevalidation: Bool,
        timeouts: HTTPTimeouts
    ) async throws(PackClientError) -> IndexLookup {
        guard case .url(let url) = source.location else {
            return IndexLookup(try await loadLocal(), pixels: preferredPixelSize, formats: formats, limits: limits)
        }
        let store = self.store
        let (slot, trust, limits) = (self.slot, self.trust, self.limits)
        let remembered = resolved.withLock { $0 }
        let identity = try await BlockingWork.run("gifpack.lazy-index") { () throws(PackClientError) -> LazyGIFStore.FileIdentity? in
            try store.prepare()
            return store.indexIdentity(slot: slot)
        }
        // The index read last, unchanged on disk, fresh and (with trust) still acceptable: no read at all.
        if !forceRevalidation, let remembered, let identity, remembered.identity == identity,
            isFresh(validatedAt: remembered.stored.validatedAt), accepts(remembered, url: url, floor: knownFloor.withLock { $0 })
        {
            return remembered.lookup
        }
        let (stored, floor) = try await storedIndexAndFloor(url: url, identity: identity, remembered: remembered)
        let usable = stored.flatMap { $0.isFrom(url) ? usableLookup($0, identity: identity, remembered: remembered, url: url, floor: floor) : nil }
        if let usable, !forceRevalidation, isFresh(validatedAt: usable.stored.validatedAt) {
            keep(usable, trust: trust)
            return usable.lookup
        }

        // index.json.zst first, index.json when there is none; conditional (If-None-Match and
        // If-Modified-Since) on the stored copy's validators, which are sent only to their own file.
        let fetched: PackIndexSource.BytesFetch
        do {
            fetched = try await source.fetchBytes(
                ifChangedFrom: usable == nil ? nil : stored?.validators, client: http,
                limits: limits, timeouts: timeouts)
        } catch {
            // Offline: the stored index still names the GIFs stored.
            if case .transfer = error, let usable {
                keep(usable, trust: trust)
                return usable.lookup
            }
            throw error
        }
        let json: Data
        let validators: IndexValidators?
        switch fetched {
        case .notModified:
            guard var usable else {
                throw .unconditionalNotModified(url)
            }
            // Unchanged: with trust, the stored index was just verified with its stored signature.
            let touched = await BlockingWork.result("gifpack.lazy-index") { () throws(PackClientError) -> LazyGIFStore.FileIdentity? in
                store.touchIndex(slot: slot)
                return store.indexIdentity(slot: slot)
            }
            if case .success(let now) = touched, let now {
                usable.identity = now
                usable.stored.validatedAt = now.seconds
            }
            keep(usable, trust: trust)
            return usable.lookup
        case .fetched(let bytes, let newValidators, _):
            (json, validators) = (bytes, newValidators)
        }
        return try await accept(json, validators: validators, url: url, floor: floor, client: http, timeouts: timeouts)
    }

    /// The stored index when it may be used now, made ready for lookups: decoded (the one read
    /// last is not decoded again); with ``trust``, its stored signature verifies it, it has not
    /// expired and it is not below the URL's `floor`.
    func usableLookup(
        _ stored: LazyGIFStore.StoredIndex, identity: LazyGIFStore.FileIdentity?, remembered: Resolved?,
        url: String, floor: Int?
    ) -> Resolved? {
        let lookup: IndexLookup
        if let remembered, remembered.stored.json == stored.json, remembered.stored.signature == stored.signature {
            lookup = remembered.lookup
        } else {
            // Read just now (counted there): decoded once.
            let decoded: PackIndex?
            if let trust {
                guard stored.verifiedSequence != nil, let signature = stored.signature else { return nil }
                decoded = try? trust.verifySignature(indexBytes: stored.json, signature: signature, location: url, limits: limits)
            } else {
                decoded = try? PackIndexSource.decode(stored.json, limits: limits)
            }
            guard let decoded else { return nil }
            lookup = IndexLookup(decoded, pixels: preferredPixelSize, formats: formats, limits: limits)
        }
        let resolved = Resolved(stored: stored, lookup: lookup, identity: identity)
        return accepts(resolved, url: url, floor: floor) ? resolved : nil
    }

    /// With ``trust``: the index is signed with a sequence and expiry, not expired now and not below `floor`.
    func accepts(_ resolved: Resolved, url: String, floor: Int?) -> Bool {
        guard let trust else { return true }
        return (try? trust.accept(resolved.lookup.index, location: url, installedSequence: floor)) != nil
    }

    /// Keeps `resolved` for the next lookups (and, with trust, its sequence as the floor in memory).
    func keep(_ resolved: Resolved, trust: IndexTrust?) {
        if trust != nil { noteVerified(sequence: resolved.lookup.index.sequence) }
        self.resolved.withLock { $0 = resolved }
    }

    /// The stored index (not read again when it is the file read last) and, with trust, the URL's
    /// rollback floor: this cache's slots, the app's other tier (``floorSource``), what this process
    /// verified.
    func storedIndexAndFloor(
        url: String, identity: LazyGIFStore.FileIdentity?,
        remembered: Resolved?
    ) async throws(PackClientError) -> (LazyGIFStore.StoredIndex?, Int?) {
        let store = self.store
        let (slot, trust, limits) = (self.slot, self.trust, self.limits)
        let maxBytes = limits.maxIndexBytes
        let floorSource = self.floorSource
        let loads = self.loads
        let known = knownFloor.withLock { $0 }
        return try await BlockingWork.run("gifpack.lazy-index") { () throws(PackClientError) -> (LazyGIFStore.StoredIndex?, Int?) in
            // The file read last is not read again (its decoded index is kept).
            let stored: LazyGIFStore.StoredIndex?
            if let remembered, identity != nil, remembered.identity == identity {
                stored = remembered.stored
            } else {
                stored = store.readIndex(slot: slot, maxBytes: maxBytes)
                if stored != nil { loads.withLock { $0 += 1 } }
            }
            guard trust != nil else { return (stored, nil) }
            // The floor: the highest sequence accepted here for this URL, with any trusted keys (it
            // belongs to the URL: a change of the key set keeps it), and the one the app's other
            // tier verified (a GIFLoader's installed generation, ``floorSource``).
            let floors = [try store.floor(url: url), try LoaderFloors.read(floorSource), known]
            return (stored, floors.compactMap { $0 }.max())
        }
    }

    /// A new index fetched: decoded (and with trust verified and held to `floor`), stored, kept for the next lookups.
    func accept(
        _ json: Data, validators: IndexValidators?, url: String, floor: Int?, client http: any HTTPTransport,
        timeouts: HTTPTimeouts
    ) async throws(PackClientError) -> IndexLookup {
        let store = self.store
        let (slot, trust, limits) = (self.slot, self.trust, self.limits)
        let floorSource = self.floorSource
        loads.withLock { $0 += 1 }
        let index: PackIndex
        let signature: Data?
        if let trust {
            // A new index: its signature (signatures/<sha256>.minisig, else index.json.minisig beside it), then the
            // rules of a trusted install, before anything is stored.
            let signed = try await source.loadSignature(for: json, client: http, timeouts: timeouts)
            index = try trust.verifySignature(indexBytes: json, signature: signed, location: url, limits: limits)
            try trust.accept(index, location: url, installedSequence: floor, holder: "the cached index's")
            signature = signed
        } else {
            // The same decoding and index rules as every other index load.
            index = try PackIndexSource.decode(json, limits: limits)
            signature = nil
        }
        let sequence = trust == nil ? nil : index.sequence
        let written = try await BlockingWork.run("gifpack.lazy-index") { () throws(PackClientError) -> LazyGIFStore.FileIdentity? in
            // A verified index under the cache's lock: another process may have stored a newer index
            // meanwhile, or installed one (the other tier's floor).
            try store.writeIndex(json, slot: slot, url: url, validators: validators, signature: signature, verifiedSequence: sequence) {
                (held: Int?) throws(PackClientError) in
                guard let trust else { return }
                let other = try LoaderFloors.read(floorSource)
                try trust.accept(index, location: url, installedSequence: [held, other].compactMap { $0 }.max(), holder: "the cached index's")
            }
            return store.indexIdentity(slot: slot)
        }
        noteVerified(sequence: sequence)
        let lookup = IndexLookup(index, pixels: preferredPixelSize, formats: formats, limits: limits)
        // Kept for the next lookups as it was written.
        let stored = LazyGIFStore.StoredIndex(
            json: json, url: LazyGIFStore.normalisedURL(url), etag: validators?.etag,
            validatedAt: written?.seconds ?? Int(Date().timeIntervalSince1970),
            signature: signature, verifiedSequence: sequence, lastModified: validators?.lastModified,
            validatedURL: validators?.url)
        resolved.withLock { $0 = Resolved(stored: stored, lookup: lookup, identity: written) }
        return lookup
    }
}
