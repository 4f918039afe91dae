import Crypto
import Foundation

extension CatalogPager {
    /// The catalog's pages as they arrive, in any order: each counted against
    /// `max_catalog_records` and refused when seen before, then assembled in offset order as soon as
    /// it can be, up to the first short page (pages fetched past the end are dropped). Only the
    /// pages that arrived ahead of an earlier one wait here: the catalog is held once, with its
    /// lists shared, never page by page beside it.
    struct PageCollector {
        let pager: CatalogPager
        let reader: PageReader
        /// The first page's record count: the effective page size.
        let step: Int
        private var recordCount = 0
        private var seenPages: Set<RecordDigest> = []
        private var waiting: [Int: (ArrivedPage, RecordDigest)] = [:]
        private var pageCount = 0
        private var assembler: Assembler
        private var nextToAssemble = 0
        /// The last page is in.
        private var assembled = false
        private var previousFirst: RecordDigest?
        /// The records of the pages assembled, and every total those pages announced: checked
        /// against each other once the last page is in.
        private var assembledRecords = 0
        private var announcedTotals: Set<Int> = []

        init(pager: CatalogPager, reader: PageReader, first: ArrivedPage, expectedCount: Int?) {
            self.pager = pager
            self.reader = reader
            step = first.itemCount
            // Room for the size the last run saw (or the server announces), within max_catalog_records.
            assembler = Assembler(
                expected: max(
                    0,
                    min(
                        expectedCount ?? first.total ?? first.itemCount,
                        pager.fetch.maxCatalogRecords)),
                spool: pager.spool)
        }

        /// Admits a page that arrived at `offset` and assembles every page now in order.
        mutating func take(_ page: ArrivedPage, offset: Int) throws(CatalogError) {
            let digest = try admit(page, offset: offset)
            pageCount += 1
            guard !assembled else { return }
            waiting[offset] = (page, digest)
            while !assembled, let (page, digest) = waiting.removeValue(forKey: nextToAssemble) {
                try assemble(page, digest: digest)
            }
            if assembled { waiting = [:] }
        }

        /// The catalog, once every page is in; the page cache for the next run is written beside it.
        mutating func finish() throws(CatalogError) -> Catalog {
            if let total = announcedTotals.sorted().first(where: { $0 != assembledRecords }) {
                throw .totalMismatch(total: total, seen: assembledRecords)
            }
            var catalog = try assembler.catalog(pages: pageCount)
            catalog.pagesReused = assembler.pagesReused
            if let pageCache = pager.pageCache {
                // A cache that cannot be written costs the next run its parsing, nothing else.
                assembler.persist(as: pageCache.path, key: pageCache.key, previous: pageCache.previous)
            }
            return catalog
        }

        /// Counts a page's records against `max_catalog_records` and refuses a page seen before
        /// (same records at another offset: a server ignoring `offset`), as soon as it arrives. A
        /// page is known by the digests of its records' canonical bytes (a normalised record
        /// already has its own; a refused one is encoded for it); a reused page, by the digest the
        /// last run made so.
        private mutating func admit(_ page: ArrivedPage, offset: Int) throws(CatalogError) -> RecordDigest {
            recordCount += page.itemCount
            guard recordCount <= pager.fetch.maxCatalogRecords else { throw .tooManyRecords(limit: pager.fetch.maxCatalogRecords) }
            let digest: RecordDigest
            switch page.content {
            case .reused(let cached, _, _): digest = cached.pageDigest
            case .parsed(let items, let normalised):
                var hasher = SHA256()
                for (item, result) in zip(items, normalised) {
                    switch result {
                    case .success(let exercise): hasher.update(data: exercise.record.sha256.bytes)
                    case .failure:
                        do { hasher.update(data: Array(SHA256.hash(data: try CanonicalJSON.encode(item)))) } catch {
                            throw .unexpectedShape(url: pager.pageURL(offset: offset), detail: "\(error)")
                        }
                    }
                }
                digest = RecordDigest(hasher.finalize())
            }
            guard page.itemCount > 0 else { return digest }
            guard seenPages.insert(digest).inserted else { throw .pagingDoesNotAdvance(url: pager.pageURL(offset: offset)) }
            return digest
        }

        /// Assembles the page at `nextToAssemble`.
        private mutating func assemble(_ page: ArrivedPage, digest: RecordDigest) throws(CatalogError) {
            let firstRecord = page.firstRecord
            if let firstRecord, nextToAssemble > 0, firstRecord == previousFirst {
                throw .pagingDoesNotAdvance(url: pager.pageURL(offset: nextToAssemble))
            }
            previousFirst = firstRecord
            assembledRecords += page.itemCount
            if let total = page.total { announcedTotals.insert(total) }
            let entry = Assembler.PageEntry(
                offset: nextToAssemble, body: page.body, digest: digest, itemCount: page.itemCount,
                isLast: page.isLast, total: page.total, firstRecord: firstRecord)
            switch page.content {
            case .reused(let cached, var exercises, let body):
                if let previous = pager.pageCache?.previous,
                    try assembler.add(reused: cached, exercises: &exercises, tables: previous.tables, page: entry)
                {
                    break
                }
                // Bytes that hashed right but do not read as exercises: the body is parsed after all.
                let url = pager.pageURL(offset: nextToAssemble)
                let content = try reader.records(try pager.parse(body, url: url), url)
                try assembler.add(content.items.map(reader.normalise), page: entry)
            case .parsed(_, let normalised):
                try assembler.add(normalised, page: entry)
                pager.early?.offer(normalised.lazy.compactMap { try? $0.get() })
            }
            // The page the API calls the last (v1: `nextPage` null) ends the list, as does a short one.
            if page.isLast || page.itemCount < step || page.itemCount == 0 { assembled = true }
            nextToAssemble += step
        }
    }
}
