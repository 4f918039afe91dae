/// A list of exercises, in id order: held in memory, or written whole to a build's ``RecordSpool``
/// with only eight bytes per exercise kept (where it is in the spool file). A build spools its
/// catalog as pages arrive, so 100,000 exercises cost 800 KB of memory here, not their fields.
///
/// Every read throws: indexing (``exercise(at:)``) and iteration (``makeIterator()``,
/// ``forEach(_:)``) decode each exercise from the spool as it is reached, and iteration reads ahead
/// in large pieces, so a pass over a spooled catalog costs a few reads, not one per exercise.
/// Slicing and counting read nothing.
///
/// ```swift
/// let list: ExerciseList = [situp, squat]            // in memory
/// let chosen = try catalog.exercises.filtered { selector.matches($0) }   // still spooled, 8 bytes each
/// try chosen.forEach { print($0.id) }
/// ```
///
/// The spool is a file this process wrote and holds open (unnamed while the build runs, or the
/// page cache it became, which only this build, under its lock, writes). A read that fails (the
/// disk), comes short (the file cut) or finds bytes that are not the exercise written there
/// throws ``SpoolReadError``, and the build stops with it: nothing new is written.
package struct ExerciseList: Sendable, ExpressibleByArrayLiteral {
    enum Storage: Sendable {
        case memory(ArraySlice<Exercise>)
        case spooled(RecordSpool, ArraySlice<ExerciseSlot>)
    }

    let storage: Storage
    /// Whether iteration gives spooled exercises their record's bytes in memory (read with the
    /// exercise, in the same piece of the file) rather than a place to read them from.
    private var readsRecords = false
    /// When set, every exercise whose image URL is made from a template is handed out with this
    /// template instead: the same catalog at another resolution (``atImageTemplate(_:)``).
    private var imageTemplate: ImageURLTemplate?

    package init(_ exercises: [Exercise]) { storage = .memory(exercises[...]) }

    package init(arrayLiteral exercises: Exercise...) { self.init(exercises) }

    init(spool: RecordSpool, slots: [ExerciseSlot]) { storage = .spooled(spool, slots[...]) }

    private init(storage: Storage) { self.storage = storage }

    package var startIndex: Int {
        switch storage {
        case .memory(let exercises): exercises.startIndex
        case .spooled(_, let slots): slots.startIndex
        }
    }

    package var endIndex: Int {
        switch storage {
        case .memory(let exercises): exercises.endIndex
        case .spooled(_, let slots): slots.endIndex
        }
    }

    package var count: Int { endIndex - startIndex }
    package var isEmpty: Bool { startIndex == endIndex }
    package var indices: Range<Int> { startIndex..<endIndex }

    /// The exercise at `position` (one read of the spool).
    package func exercise(at position: Int) throws(SpoolReadError) -> Exercise {
        let exercise =
            switch storage {
            case .memory(let exercises): exercises[position]
            case .spooled(let spool, let slots): try spool.exercise(at: slots[position])
            }
        return Self.retemplated(exercise, imageTemplate)
    }

    package subscript(bounds: Range<Int>) -> ExerciseList {
        var list =
            switch storage {
            case .memory(let exercises): ExerciseList(storage: .memory(exercises[bounds]))
            case .spooled(let spool, let slots): ExerciseList(storage: .spooled(spool, slots[bounds]))
            }
        list.imageTemplate = imageTemplate
        return list
    }

    /// The same exercises with their templated image URLs made from `template` (another
    /// resolution of the same API): nothing is copied.
    func atImageTemplate(_ template: ImageURLTemplate) -> ExerciseList {
        var list = self
        list.imageTemplate = template
        return list
    }

    private static func retemplated(_ exercise: Exercise, _ template: ImageURLTemplate?) -> Exercise {
        guard let template, case .template = exercise.image else { return exercise }
        var changed = exercise
        changed.image = .template(template)
        return changed
    }

    /// The exercises `isIncluded` accepts, in order, as a list of the same kind: a spooled list
    /// gives a spooled list (eight bytes per exercise kept), never an array of exercises.
    package func filtered(_ isIncluded: (Exercise) throws -> Bool) throws -> ExerciseList {
        var list: ExerciseList
        switch storage {
        case .memory(let exercises):
            list = ExerciseList(try exercises.filter { try isIncluded(Self.retemplated($0, imageTemplate)) })
        case .spooled(let spool, let slots):
            var kept: [ExerciseSlot] = []
            var iterator = makeIterator()
            for slot in slots {
                guard let exercise = try iterator.next() else { break }
                if try isIncluded(exercise) { kept.append(slot) }
            }
            list = ExerciseList(spool: spool, slots: kept)
        }
        list.imageTemplate = imageTemplate
        return list
    }

    /// The same list, whose iteration hands out each record's bytes along with its exercise: how
    /// `catalog.json` is written, with no read per record.
    package var readingRecords: ExerciseList {
        var list = self
        list.readsRecords = true
        return list
    }

    /// The exercises as an array (a batch of them: an array holds every field of each).
    package func array() throws(SpoolReadError) -> [Exercise] {
        var exercises: [Exercise] = []
        exercises.reserveCapacity(count)
        var iterator = makeIterator()
        while let exercise = try iterator.next() { exercises.append(exercise) }
        return exercises
    }

    /// Calls `body` with each exercise in order.
    package func forEach(_ body: (Exercise) throws -> Void) throws {
        var iterator = makeIterator()
        while let exercise = try iterator.next() { try body(exercise) }
    }

    /// `transform` of each exercise, in order.
    package func map<T>(_ transform: (Exercise) throws -> T) throws -> [T] {
        var result: [T] = []
        result.reserveCapacity(count)
        try forEach { result.append(try transform($0)) }
        return result
    }

    /// Whether some exercise satisfies `predicate` (read until one does).
    package func contains(where predicate: (Exercise) throws -> Bool) throws -> Bool {
        var iterator = makeIterator()
        while let exercise = try iterator.next() { if try predicate(exercise) { return true } }
        return false
    }

    package func makeIterator() -> Iterator {
        Iterator(storage: storage, readsRecords: readsRecords, imageTemplate: imageTemplate)
    }

    /// Calls `body` with each exercise's id (its UTF-8 bytes) and fingerprint, in order, without
    /// making the exercises: what the catalog's digest is made of.
    func forEachIDAndFingerprint(_ body: (UnsafeRawBufferPointer, RecordDigest) -> Void) throws(SpoolReadError) {
        switch storage {
        case .memory(let exercises):
            for exercise in exercises {
                var id = exercise.id
                id.withUTF8 { body(UnsafeRawBufferPointer($0), exercise.fingerprint) }
            }
        case .spooled(let spool, let slots):
            var reader = spool.reader()
            for slot in slots {
                try reader.withBytes(at: slot) { raw in body(RecordSpool.idBytes(raw), RecordSpool.fingerprint(raw)) }
            }
        }
    }

    /// Walks the list; a spooled one is read a large piece at a time (a catalog spooled in id order
    /// is read straight through).
    ///
    /// ```swift
    /// var exercises = list.makeIterator()
    /// while let exercise = try exercises.next() { print(exercise.id) }
    /// ```
    package struct Iterator {
        private let storage: Storage
        private var position: Int
        private var reader: RecordSpool.ExerciseReader?
        private let readsRecords: Bool
        private let imageTemplate: ImageURLTemplate?

        init(storage: Storage, readsRecords: Bool, imageTemplate: ImageURLTemplate?) {
            self.storage = storage
            self.readsRecords = readsRecords
            self.imageTemplate = imageTemplate
            switch storage {
            case .memory(let exercises): position = exercises.startIndex
            case .spooled(let spool, let slots):
                position = slots.startIndex
                reader = spool.reader()
            }
        }

        package mutating func next() throws(SpoolReadError) -> Exercise? {
            switch storage {
            case .memory(let exercises):
                guard position < exercises.endIndex else { return nil }
                defer { position += 1 }
                return ExerciseList.retemplated(exercises[position], imageTemplate)
            case .spooled(_, let slots):
                guard position < slots.endIndex else { return nil }
                defer { position += 1 }
                return ExerciseList.retemplated(try reader!.exercise(at: slots[position], withRecord: readsRecords), imageTemplate)
            }
        }
    }
}
