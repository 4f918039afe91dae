import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

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

    func currentLookup(client http: any HTTPTransport, forceRevalidation: Bool,
                       timeouts: HTTPTimeouts) async throws(PackClientError) -> IndexLookup {
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
           isFresh(validatedAt: remembered.stored.validatedAt), accepts(remembered, url: url, floor: knownFloor.withLock { $0 }) {
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
            fetched = try await source.fetchBytes(ifChangedFrom: usable == nil ? nil : stored?.validators, client: http,
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
    func usableLookup(_ stored: LazyGIFStore.StoredIndex, identity: LazyGIFStore.FileIdentity?, remembered: Resolved?,
                              url: String, floor: Int?) -> Resolved? {
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

    /// Keeps an index just fetched and stored, as it was written.
    func remember(json: Data, url: String, validators: IndexValidators?, signature: Data?, sequence: Int?,
                          lookup: IndexLookup, identity: LazyGIFStore.FileIdentity?) {
        let stored = LazyGIFStore.StoredIndex(json: json, url: LazyGIFStore.normalisedURL(url), etag: validators?.etag,
                                              validatedAt: identity?.seconds ?? Int(Date().timeIntervalSince1970),
                                              signature: signature, verifiedSequence: sequence, lastModified: validators?.lastModified,
                                              validatedURL: validators?.url)
        resolved.withLock { $0 = Resolved(stored: stored, lookup: lookup, identity: identity) }
    }

    /// The stored index (not read again when it is the file read last) and, with trust, the URL's
    /// rollback floor: this cache's slots, the app's other tier (``floorSource``), what this process
    /// verified.
    func storedIndexAndFloor(url: String, identity: LazyGIFStore.FileIdentity?,
                             remembered: Resolved?) async throws(PackClientError) -> (LazyGIFStore.StoredIndex?, Int?) {
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
    func accept(_ json: Data, validators: IndexValidators?, url: String, floor: Int?, client http: any HTTPTransport,
                timeouts: HTTPTimeouts) async throws(PackClientError) -> IndexLookup {
        let store = self.store
        let (slot, trust, limits) = (self.slot, self.trust, self.limits)
        let maxBytes = limits.maxIndexBytes
        let floorSource = self.floorSource
        loads.withLock { $0 += 1 }
        let pixels = preferredPixelSize
        guard let trust else {
            // The same decoding and index rules as every other index load.
            let index = try PackIndexSource.decode(json, limits: limits)
            let lookup = IndexLookup(index, pixels: pixels, formats: formats, limits: limits)
            let written = try await BlockingWork.run("gifpack.lazy-index") { () throws(PackClientError) -> LazyGIFStore.FileIdentity? in
                try store.writeIndex(json, slot: slot, url: url, validators: validators, maxBytes: maxBytes)
                return store.indexIdentity(slot: slot)
            }
            remember(json: json, url: url, validators: validators, signature: nil, sequence: nil, lookup: lookup, identity: written)
            return lookup
        }
        // A new index: its signature (signatures/<sha256>.minisig, else index.json.minisig beside it), then the
        // rules of a trusted install, before anything is stored.
        let signature = try await source.loadSignature(for: json, client: http, timeouts: timeouts)
        let index = try trust.verifySignature(indexBytes: json, signature: signature, location: url, limits: limits)
        try trust.accept(index, location: url, installedSequence: floor, holder: "the cached index's")
        let written = try await BlockingWork.run("gifpack.lazy-index") { () throws(PackClientError) -> LazyGIFStore.FileIdentity? in
            // Under the cache's lock: another process may have stored a newer index meanwhile, or
            // installed one (the other tier's floor).
            try store.writeIndex(json, slot: slot, url: url, validators: validators, signature: signature, verifiedSequence: index.sequence,
                                 maxBytes: maxBytes) { (held: Int?) throws(PackClientError) in
                let other = try LoaderFloors.read(floorSource)
                try trust.accept(index, location: url, installedSequence: [held, other].compactMap { $0 }.max(), holder: "the cached index's")
            }
            return store.indexIdentity(slot: slot)
        }
        noteVerified(sequence: index.sequence)
        let lookup = IndexLookup(index, pixels: pixels, formats: formats, limits: limits)
        remember(json: json, url: url, validators: validators, signature: signature, sequence: index.sequence, lookup: lookup, identity: written)
        return lookup
    }
}
