/// The exercises of an index's packs (``PackIndex/packs``) in ascending id order, each id once:
/// that of the first pack by name that lists it (its first entry there), as ``IndexDiff`` counts
/// them. A merge of the packs' lists, which are sorted by id: memory is a cursor per pack, never a
/// map of every id (a list that is not sorted, in an index no client checked, is walked in a
/// sorted order of its positions: 4 bytes an exercise). With `renditionsAt` (format 1.3), each
/// entry also carries the exercise's GIF in the rendition packs of those resolutions
/// (`Entry.renditions`), from one more merge per resolution.
///
/// ```swift
/// for entry in IndexExercises(index) { print(entry.id, entry.gif ?? "no GIF", entry.pack, entry.position) }
/// ```
package struct IndexExercises: Sequence {
    /// One exercise: its id and GIF, the number of its pack in name order and its position in that pack's list.
    package struct Entry: Sendable, Equatable {
        package var id: String
        package var gif: String?
        package var pack: Int
        package var position: Int
        /// The exercise's GIF in each rendition asked for (`renditionsAt`) whose packs list it, by
        /// resolution ascending; empty without renditions.
        package var renditions: [Rendition] = []

        /// Whether the exercise's GIFs differ: in `packs[]` (one gained or lost included) or in
        /// any rendition both entries were read with. What ``IndexDiff`` and `gifpack review`
        /// count as changed.
        package func gifsDiffer(from other: Entry) -> Bool {
            gif != other.gif || renditions != other.renditions
        }
    }

    /// An exercise's row in the rendition packs of one resolution.
    package struct Rendition: Sendable, Equatable {
        package var resolution: Int
        package var gif: String?
    }

    /// The packs in name order (a stable sort: of two packs of one name, the first listed first).
    package let packs: [PackDescription]
    /// Per resolution asked for, ascending: its rendition packs in name order.
    let renditionGroups: [(resolution: Int, packs: [PackDescription])]

    /// Every exercise of `index`'s `packs[]`.
    package init(_ index: PackIndex) {
        self.init(index, renditionsAt: [])
    }

    /// With each exercise's GIF in the rendition packs at `resolutions` too (`Entry.renditions`).
    package init(_ index: PackIndex, renditionsAt resolutions: Set<Int>) {
        packs = Self.inNameOrder(index.packs)
        renditionGroups = resolutions.sorted().map { resolution in
            (resolution, Self.inNameOrder((index.renditionPacks ?? []).filter { $0.resolution == resolution }))
        }
    }

    /// The resolutions of an index's rendition packs.
    package static func renditionResolutions(of index: PackIndex) -> Set<Int> {
        Set((index.renditionPacks ?? []).compactMap(\.resolution))
    }

    private static func inNameOrder(_ packs: [PackDescription]) -> [PackDescription] {
        packs.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.map(\.element)
    }

    package func makeIterator() -> Iterator {
        Iterator(packs: packs, renditions: renditionGroups.map { ($0.resolution, Iterator(packs: $0.packs, renditions: [])) })
    }

    package struct Iterator: IteratorProtocol {
        private let packs: [PackDescription]
        /// Per pack: the next place in its walk, and the order of its positions when its list is not sorted.
        private var cursor: [Int]
        private var orders: [[Int32]?]
        private var heads: [ExerciseRef?]
        /// Per rendition resolution: the walk of its packs and its next entry.
        private var renditions: [(resolution: Int, walk: Iterator)]
        private var renditionHeads: [Entry?]

        init(packs: [PackDescription], renditions: [(Int, Iterator)]) {
            self.packs = packs
            cursor = Array(repeating: 0, count: packs.count)
            orders = packs.map { Self.order(of: $0.exercises) }
            heads = Array(repeating: nil, count: packs.count)
            self.renditions = renditions.map { (resolution: $0.0, walk: $0.1) }
            renditionHeads = []
            for pack in packs.indices { heads[pack] = ref(pack) }
            for group in self.renditions.indices { renditionHeads.append(self.renditions[group].walk.next()) }
        }

        package mutating func next() -> Entry? {
            var smallest: String?
            for head in heads { if let head, smallest.map({ head.id < $0 }) ?? true { smallest = head.id } }
            guard let id = smallest else { return nil }
            var winner: Entry?
            for pack in packs.indices {
                // Every entry of this id in this pack is passed; the first of the first pack is kept.
                while let head = heads[pack], head.id == id {
                    if winner == nil { winner = Entry(id: head.id, gif: head.gif, pack: pack, position: position(pack)) }
                    cursor[pack] += 1
                    heads[pack] = ref(pack)
                }
            }
            // Each rendition's walk is brought up to this id (ids only rendition packs list are passed).
            for group in renditions.indices {
                while let head = renditionHeads[group], head.id < id { renditionHeads[group] = renditions[group].walk.next() }
                if let head = renditionHeads[group], head.id == id {
                    winner?.renditions.append(Rendition(resolution: renditions[group].resolution, gif: head.gif))
                    renditionHeads[group] = renditions[group].walk.next()
                }
            }
            return winner
        }

        private func position(_ pack: Int) -> Int {
            orders[pack].map { Int($0[cursor[pack]]) } ?? cursor[pack]
        }

        private func ref(_ pack: Int) -> ExerciseRef? {
            guard cursor[pack] < packs[pack].exercises.count else { return nil }
            return packs[pack].exercises[position(pack)]
        }

        /// nil when the list's ids never go down; else its positions sorted by id (stable).
        private static func order(of list: ExerciseRefList) -> [Int32]? {
            var previous: String?
            var sorted = true
            for ref in list {
                if let previous, ref.id < previous { sorted = false; break }
                previous = ref.id
            }
            guard !sorted else { return nil }
            return list.indices.sorted { (list[$0].id, $0) < (list[$1].id, $1) }.map { Int32($0) }
        }
    }
}

/// Two indexes' exercises side by side, in ascending id order (``IndexExercises`` of each): an id
/// in both has both entries, an added one only `new`, a removed one only `old`. Each entry carries
/// its GIFs in the renditions both indexes have (format 1.3), so an exercise whose 360 px GIF alone
/// changed differs (`IndexExercises.Entry.gifsDiffer(from:)`); a resolution one index lacks
/// changes no exercise (its packs are the diff's downloads).
///
/// ```swift
/// for case let (old?, new?) in IndexExercisePairs(old: v1, new: v2) where old.gifsDiffer(from: new) { print(new.id) }
/// ```
package struct IndexExercisePairs: Sequence, IteratorProtocol {
    private var old: IndexExercises.Iterator
    private var new: IndexExercises.Iterator
    private var oldHead: IndexExercises.Entry?
    private var newHead: IndexExercises.Entry?

    package init(old: PackIndex, new: PackIndex) {
        let common = IndexExercises.renditionResolutions(of: old).intersection(IndexExercises.renditionResolutions(of: new))
        self.old = IndexExercises(old, renditionsAt: common).makeIterator()
        self.new = IndexExercises(new, renditionsAt: common).makeIterator()
        oldHead = self.old.next()
        newHead = self.new.next()
    }

    package mutating func next() -> (old: IndexExercises.Entry?, new: IndexExercises.Entry?)? {
        switch (oldHead, newHead) {
        case (nil, nil):
            return nil
        case (let before?, let after?) where before.id == after.id:
            (oldHead, newHead) = (old.next(), new.next())
            return (before, after)
        case (let before?, let after) where after.map({ before.id < $0.id }) ?? true:
            oldHead = old.next()
            return (before, nil)
        default:
            let after = newHead
            newHead = new.next()
            return (nil, after)
        }
    }
}
