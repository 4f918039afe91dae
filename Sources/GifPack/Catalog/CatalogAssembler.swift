import Foundation

extension CatalogPager {
    /// Normalises every record, refusing bad ones and keeping the first of duplicate ids.
    static func assemble(
        records: [JSONValue], pages: Int,
        normalise: (JSONValue) -> Result<Exercise, CatalogRejectionReason>
    ) -> Catalog {
        assemble(normalised: records.map(normalise), pages: pages)
    }

    static func assemble(normalised: [Result<Exercise, CatalogRejectionReason>], pages: Int) -> Catalog {
        // In memory (no spool): nothing is written, so nothing can fail.
        var assembler = Assembler(expected: normalised.count, spool: nil)
        _ = assembler.take(normalised)
        return assembler.memoryCatalog(pages: pages)
    }

    /// Collects normalised records in order, refusing bad ones and keeping the first of duplicate ids.
    ///
    /// With a spool, each page's exercises are written to it whole as the page is added, and only
    /// where each one is (eight bytes) is kept. In memory, equal body part, equipment and target
    /// lists (a catalog has a few hundred different ones) share one array.
    struct Assembler {
        private let spool: RecordSpool?
        private var exercises: [Exercise] = []
        private var slots: [ExerciseSlot] = []
        private var lists: Set<[String]> = []
        private var rejected: [CatalogRejection] = []
        private var duplicates: Set<String> = []
        private var position = 0
        /// The last id added, and whether every id so far came after the one before it (then the
        /// catalog needs no sort and has no duplicate).
        private var lastID: String?
        private var inOrder = true

        /// What the next run's ``CatalogPageCache`` will know of each page added (with a spool only).
        private var directory: [CatalogPageCache.Page] = []
        /// Pages whose exercises were copied from the last run's spool.
        private(set) var pagesReused = 0
        /// The spool an unsorted catalog was written again into, in id order.
        private var sorted: RecordSpool?

        /// What the pager knows of a page it adds.
        struct PageEntry {
            var offset: Int
            var body: RecordDigest?
            var digest: RecordDigest
            var itemCount: Int
            var isLast: Bool
            var total: Int?
            var firstRecord: RecordDigest?
        }

        init(expected: Int, spool: RecordSpool?) {
            self.spool = spool
            if spool == nil { exercises.reserveCapacity(expected) } else { slots.reserveCapacity(expected) }
        }

        /// Adds a page's records; `page` (with a spool) says what the next run's cache will know of it.
        mutating func add(_ normalised: [Result<Exercise, CatalogRejectionReason>], page entry: PageEntry? = nil) throws(CatalogError) {
            let (page, pageRejections) = take(normalised)
            guard let spool else { return }
            var spooled = RecordSpool.SpooledPage.empty
            if !page.isEmpty {
                do { spooled = try spool.appendPage(exercises: page) } catch { throw .spool(error) }
                slots += spooled.slots
            }
            if let entry, let body = entry.body {
                directory.append(
                    .init(
                        offset: entry.offset, body: body, pageDigest: entry.digest, itemCount: entry.itemCount,
                        isLast: entry.isLast, total: entry.total, firstRecord: entry.firstRecord,
                        start: spooled.start, length: spooled.length, exercises: spooled.slots.count,
                        content: spooled.digest, rejections: pageRejections))
            }
        }

        /// Takes a page's records in order: without a spool its exercises are kept here, with one
        /// they are returned for the spool; rejections are recorded (and returned, numbered within the page).
        fileprivate mutating func take(_ normalised: [Result<Exercise, CatalogRejectionReason>])
            -> (page: [Exercise], rejections: [CatalogPageCache.Rejection])
        {
            var page: [Exercise] = []
            let pageStart = position
            var pageRejections: [CatalogPageCache.Rejection] = []
            for result in normalised {
                switch result {
                case .success(var exercise):
                    if let lastID, !(lastID < exercise.id) { inOrder = false }
                    lastID = exercise.id
                    // Duplicate ids are dropped once the exercises are sorted (see `catalog(pages:)`),
                    // where they sit side by side: no set of every id is kept.
                    if spool != nil {
                        page.append(exercise)
                    } else {
                        exercise.bodyParts = lists.insert(exercise.bodyParts).memberAfterInsert
                        exercise.equipment = lists.insert(exercise.equipment).memberAfterInsert
                        exercise.targets = lists.insert(exercise.targets).memberAfterInsert
                        exercises.append(exercise)
                    }
                case .failure(let reason):
                    rejected.append(CatalogRejection(position: position, id: reason.displayID, reason: reason.reason))
                    pageRejections.append(.init(position: position - pageStart, id: reason.displayID, reason: reason.reason))
                }
                position += 1
            }
            return (page, pageRejections)
        }

        /// Adds a page the last run's spool holds (`exercises`, numbered by `tables`), copied to
        /// this spool. False, adding nothing, when its bytes do not read as the page's exercises.
        mutating func add(
            reused cached: CatalogPageCache.Page, exercises bytes: inout [UInt8], tables: RecordSpool.Tables,
            page entry: PageEntry
        ) throws(CatalogError) -> Bool {
            guard let spool else { return false }
            let written: (RecordSpool.SpooledPage, ids: [String])?
            do { written = try spool.appendReused(&bytes, tables: tables, digest: cached.content) } catch { throw .spool(error) }
            guard let (spooled, ids) = written, ids.count == cached.exercises,
                cached.rejections.allSatisfy({ $0.position < cached.itemCount }),
                ids.count + cached.rejections.count == cached.itemCount
            else { return false }
            for id in ids {
                if let lastID, !(lastID < id) { inOrder = false }
                lastID = id
            }
            for rejection in cached.rejections {
                rejected.append(CatalogRejection(position: position + rejection.position, id: rejection.id, reason: rejection.reason))
            }
            position += cached.itemCount
            slots += spooled.slots
            directory.append(
                .init(
                    offset: entry.offset, body: cached.body, pageDigest: entry.digest, itemCount: entry.itemCount,
                    isLast: entry.isLast, total: entry.total, firstRecord: entry.firstRecord,
                    start: spooled.start, length: spooled.length, exercises: ids.count,
                    content: spooled.digest, rejections: cached.rejections))
            pagesReused += 1
            return true
        }

        /// Gives the spool the name `path`, with the directory of its pages: the next run's
        /// ``CatalogPageCache``. Nothing happens when the spool cannot be named or written.
        ///
        /// When every page was reused from `previous` and it has no other page, it already says
        /// all this: it is kept, and nothing is written.
        func persist(as path: String, key: RecordDigest, previous: CatalogPageCache?) {
            guard let spool, spool.linkable else { return }
            if let previous, pagesReused == directory.count, previous.pageCount == directory.count { return }
            try? spool.persist(trailer: CatalogPageCache.trailer(key: key, tables: spool.tablesNow, pages: directory), as: path)
        }

        /// The catalog, taking the exercises out of the assembler. They are sorted here, once the
        /// array has no other owner, so in place (Catalog's init then finds them in order): a
        /// `consuming` method would sort a copy when the assembler is captured by a closure.
        mutating func catalog(pages: Int) throws(CatalogError) -> Catalog {
            if let spool {
                var list: [ExerciseSlot] = []
                swap(&list, &slots)
                if !inOrder {
                    try sortSlots(&list, spool: spool)
                }
                return Catalog(
                    sorted: ExerciseList(spool: sorted ?? spool, slots: list), rejected: rejected,
                    duplicateIDs: duplicates.sorted(), pagesFetched: pages)
            }
            return memoryCatalog(pages: pages)
        }

        /// The catalog of an assembler without a spool (its exercises are in memory).
        fileprivate mutating func memoryCatalog(pages: Int) -> Catalog {
            var list: [Exercise] = []
            swap(&list, &exercises)
            Catalog.sortByID(&list)
            // Equal ids are side by side, in catalog order (the sort keeps it): the first stays.
            var kept = 0
            for index in list.indices {
                if kept > 0, list[index].id == list[kept - 1].id {
                    duplicates.insert(list[index].id)
                    continue
                }
                if kept != index { list[kept] = list[index] }
                kept += 1
            }
            list.removeLast(list.count - kept)
            return Catalog(exercises: list, rejected: rejected, duplicateIDs: duplicates.sorted(), pagesFetched: pages)
        }

        /// Spooled exercises that came out of id order, sorted by id (the first of equal ids kept,
        /// the others counted as duplicates) and written again in that order, so that every pass
        /// over the catalog reads the spool straight through. Only the ids are held, in one buffer,
        /// for the sort, with four bytes of order each; the slots are replaced, not copied beside.
        private mutating func sortSlots(_ slots: inout [ExerciseSlot], spool: RecordSpool) throws(CatalogError) {
            let ids: RecordSpool.PackedIDs
            do { ids = try spool.ids(at: slots) } catch { throw .spoolRead(error) }
            var order = (0..<Int32(slots.count)).map { $0 }
            order.sort { a, b in
                let order = ids.compare(Int(a), Int(b))
                return order < 0 || (order == 0 && a < b)
            }
            var sorted: [ExerciseSlot] = []
            sorted.reserveCapacity(slots.count)
            var previous: Int?
            for index in order.lazy.map(Int.init) {
                if let previous, ids.compare(previous, index) == 0 {
                    duplicates.insert(ids[index])
                    continue
                }
                sorted.append(slots[index])
                previous = index
            }
            slots = []
            order = []
            // Into a spool of their own: this one, as the pages wrote it, is the next run's page cache.
            let target: RecordSpool
            do { target = try sortedSpool(beside: spool) } catch { throw .spool(error) }
            try spool.rewrite(&sorted, into: target)
            slots = sorted
        }

        /// The spool an unsorted catalog is written again into, in id order.
        private mutating func sortedSpool(beside spool: RecordSpool) throws(FileSystemError) -> RecordSpool {
            let sorted = try RecordSpool(directory: spool.directory)
            self.sorted = sorted
            return sorted
        }
    }
}
