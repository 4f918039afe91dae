import GifPackFormat
import Foundation
import GifPackSystem

/// Fills a staging directory with one complete generation of the cache.
///
/// Every GIF entry of every pack is read from its frame and checked (header, capped size,
/// SHA-256, then decoded and compared with its catalog record, as `verify` does), so a pack is
/// refused for any hostile entry, even one whose GIF needs no writing.
/// For each GIF an exercise uses: if the previous generation holds a file with that hash (per its
/// manifest, and confirmed by hashing the file) it is hard-linked in, so an upgrade leaves
/// unchanged files alone (same inode, same mtime) and the pack entry is only verified — and not
/// decoded again when the previous generation's manifest records that it checked those bytes
/// against the same catalog record (``InstallManifest/checkedGIFs``); otherwise
/// the GIF is decompressed from its frame straight into a new file, which counts only once its
/// SHA-256 matched. Further names for the same GIF (exercises sharing it, `by-id`)
/// are hard links to the first. Where the file system refuses a hard link the file is copied.
/// With posters (``PosterInstallPlan``), each exercise's posters are placed the same way
/// (``placePosters(_:plan:directories:)``). The manifest (and for `by-hash` the id map) is written
/// last, and everything new is made durable at once (``Durability``).
///
/// ```swift
/// var builder = GenerationBuilder(staging: dir, layout: .byID, previous: previous)
/// try builder.build(plan, generation: 8)
/// builder.counts.gifsWritten
/// ```
struct GenerationBuilder {
    struct Counts: Equatable {
        var gifsWritten = 0
        var gifsReused = 0
        var linksCreated = 0
        var bytesWritten: Int64 = 0
        var postersWritten = 0
        var postersReused = 0
        /// Kept GIFs not decoded again: the previous generation checked the same bytes against the
        /// same catalog record.
        var checksSkipped = 0
    }

    /// The generation an install replaces: its directory and manifest.
    struct Previous {
        let directory: String
        let manifest: InstallManifest
    }

    let staging: String
    let layout: InstallLayout
    let previous: Previous?
    /// The sequence of the index the packs came from, when trusted keys verified it (nil without
    /// keys). The manifest records the floor: this or the previous generation's, whichever is higher.
    var verifiedSequence: Int?
    /// The remote index the generation comes from (``InstallManifest/index``).
    var indexRecord: InstalledIndex?
    /// Looked at before each entry: a cancelled install stops staging (the caller removes the staging directory).
    var cancellation: InstallCancellation?
    /// Told of each GIF placed (``GIFLoader/refresh(progress:)``).
    var progress: InstallProgress?
    var counts = Counts()
    /// Files created (not linked) in the staging directory.
    private var written: [String] = []

    init(staging: String, layout: InstallLayout, previous: Previous?) {
        self.staging = staging
        self.layout = layout
        self.previous = previous
    }

    /// Notes a file created in the staging directory (made durable with the rest).
    mutating func recordWritten(_ path: String) { written.append(path) }

    mutating func build(_ plan: InstallPlan, posters: PosterInstallPlan? = nil, generation: Int) throws(PackClientError) {
        try FileOps.makeDirectory(staging)
        if layout == .byHash { try FileOps.makeDirectory("\(staging)/gifs") }
        let reusable = previousFiles()
        var placed = Set<String>()
        var checked: [String: GIFMetadata] = [:]
        // A GIF several packs list is fetched with one of them only: it is placed from that pack's entry.
        let present = Set(plan.entries.filter(\.isPresent).map(\.entry.sha256))
        for source in plan.entries {
            try cancellation?.checkpoint(.stage)
            let hash = source.entry.sha256
            if !source.isPresent, present.contains(hash), !placed.contains(hash) { continue }
            guard let ids = plan.idsByHash[hash], placed.insert(hash).inserted else {
                if source.isPresent { try Self.verify(source) }
                continue
            }
            let names = layout == .byID ? ids.map { "\($0).gif" } : ["gifs/\(hash).gif"]
            let first = "\(staging)/\(names[0])"
            var alreadyChecked = false
            if let old = reusable[hash], Self.holds(old, sha256: hash, size: source.entry.location.size) {
                if source.isPresent {
                    try IndexedEntry.read(source.entry.location, sha256: hash, isGIF: true, pack: source.pack,
                                          reader: source.reader) { _ in }
                }
                try Self.linkOrCopy(old, to: first)
                counts.gifsReused += 1
                // These very bytes were decoded and checked against this very record when the
                // previous generation was installed.
                alreadyChecked = source.metadata != nil && previous?.manifest.checkedGIFs?[hash] == source.metadata
            } else if !source.isPresent {
                throw .unreadable(location: reusable[hash] ?? GIFEntry.path(forSHA256: hash),
                                  detail: "the previous generation no longer holds this GIF intact and the sparse upgrade did not fetch it; install again")
            } else {
                try write(source, to: first)
                written.append(first)
                counts.gifsWritten += 1
                counts.bytesWritten += source.entry.location.size
            }
            if alreadyChecked {
                counts.checksSkipped += 1
            } else {
                try Self.check(.file(first), source)
            }
            progress?.gifPlaced()
            if let metadata = source.metadata { checked[hash] = metadata }
            for name in names.dropFirst() {
                try Self.linkOrCopy(first, to: "\(staging)/\(name)")
                counts.linksCreated += 1
            }
        }
        var directories = [staging]
        if layout == .byHash {
            let map = "\(staging)/\(InstallLayout.idMapFileName)"
            try FileOps.writeNew(map, try InstallManifest.canonicalJSON(plan.exercises, path: InstallLayout.idMapFileName))
            written.append(map)
            directories.append("\(staging)/gifs")
        }
        let posterRecords = try posters.map { posters throws(PackClientError) in
            try placePosters(posters, plan: plan, directories: &directories)
        }
        try writePlaceholders(plan)
        let manifest = InstallManifest(generation: generation, layout: layout, packs: plan.packs, exercises: plan.exercises,
                                       indexSequence: InstallManifest.floor(carrying: previous?.manifest.indexSequence, verified: verifiedSequence),
                                       posterPacks: posters?.packs, posters: posterRecords,
                                       checkedGIFs: checked, index: indexRecord)
        let manifestPath = "\(staging)/\(InstallManifest.fileName)"
        try FileOps.writeNew(manifestPath, try manifest.encoded())
        written.append(manifestPath)
        try Durability.flush(files: written, directories: directories)
    }

    /// The index's placeholders of the installed GIFs (``InstalledPlaceholders``), when it has any.
    private mutating func writePlaceholders(_ plan: InstallPlan) throws(PackClientError) {
        var gifs: [String: GIFPlaceholder] = [:]
        for source in plan.entries where plan.idsByHash[source.entry.sha256] != nil {
            if let placeholder = source.entry.placeholder { gifs[source.entry.sha256] = placeholder }
        }
        guard !gifs.isEmpty else { return }
        let path = "\(staging)/\(InstalledPlaceholders.fileName)"
        try FileOps.writeNew(path, try InstalledPlaceholders(gifs: gifs).encoded())
        written.append(path)
    }

    /// Hash → a file of the previous generation holding it.
    private func previousFiles() -> [String: String] {
        previous?.filesByHash ?? [:]
    }

    /// True when `path` is a regular file of `size` bytes hashing to `sha256`.
    static func holds(_ path: String, sha256: String, size: Int64) -> Bool {
        guard FileOps.regularFileSize(path) == size, let digest = try? StreamingSHA256.file(at: path) else { return false } // unreadable: not reusable
        return digest.sha256 == sha256
    }

    /// Reads the entry and runs the GIF checks on it without writing it anywhere.
    private static func verify(_ source: InstallPlan.Source) throws(PackClientError) {
        let bytes = try IndexedEntry.readAll(source.entry.location, sha256: source.entry.sha256, isGIF: true,
                                             pack: source.pack, reader: source.reader)
        try check(.bytes(bytes), source)
    }

    /// The GIF decodes and matches its catalog record (the checks `verify` runs), else the pack is refused.
    private static func check(_ gif: PackChecks.GIFSource, _ source: InstallPlan.Source) throws(PackClientError) {
        let name = SafePath.printable(source.pack)
        if let problem = PackChecks.gifProblems(gif, metadata: source.metadata, pack: name,
                                                entry: SafePath.printable(source.entry.location.path)).first {
            throw .rejected(problem)
        }
    }

    /// Decompresses the GIF into a new file at `path`, verified; made durable later with the rest.
    private func write(_ source: InstallPlan.Source, to path: String) throws(PackClientError) {
        let file = try FileOps.client { () throws(FileSystemError) in try NewFile(path: path) }
        try IndexedEntry.read(source.entry.location, sha256: source.entry.sha256, isGIF: true, pack: source.pack,
                              reader: source.reader) { chunk throws(PackReadError) in
            do throws(FileSystemError) { try file.append(chunk) } catch {
                throw .io(path: path, operation: "write", errno: error.errno)
            }
        }
        try FileOps.client { () throws(FileSystemError) in try file.finish(sync: false) }
    }

    /// A hard link from `source` to `target`, or a copy (fsynced) where links are not possible.
    static func linkOrCopy(_ source: String, to target: String) throws(PackClientError) {
        if SystemCalls.link(source, to: target) == 0 { return }
        let code = Errno.current
        let noLink: [Errno] = [.improperLink, .notPermitted, .tooManyLinks, .notSupported, .notSupportedOnSocket, .permissionDenied]
        guard noLink.contains(code) else {
            throw .posix(target, "link \(source) to", code.code)
        }
        try copy(source, to: target)
    }

    private static func copy(_ source: String, to target: String) throws(PackClientError) {
        let fd = try FileOps.openRegular(source, .readOnly)
        defer { SystemCalls.close(fd) }
        let file = try FileOps.client { () throws(FileSystemError) in try NewFile(path: target) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let got: Int
            do throws(Errno) { got = try POSIXIO.read(fd, into: chunk) } catch { throw .posix(source, "read", error.code) }
            if got == 0 { break }
            try FileOps.client { () throws(FileSystemError) in try file.append(UnsafeRawBufferPointer(rebasing: chunk[0..<got])) }
        }
        try FileOps.client { () throws(FileSystemError) in try file.finish(sync: true) }
    }
}

extension GenerationBuilder.Previous {
    /// Hash → a file of this generation holding it (per the manifest; not checked).
    var filesByHash: [String: String] {
        var files: [String: String] = [:]
        for (id, hash) in manifest.exercises.sorted(by: { $0.key < $1.key }) {
            guard let hash, files[hash] == nil, ExerciseID.isValid(id), SafePath.isSHA256(hash) else { continue }
            files[hash] = "\(directory)/\(manifest.layout.relativePath(exercise: id, sha256: hash))"
        }
        return files
    }
}
