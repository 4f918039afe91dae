import GifPackFormat
import Foundation
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

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
    struct Counts: Equatable, Sendable {
        var gifsWritten = 0
        var gifsReused = 0
        var linksCreated = 0
        var bytesWritten: Int64 = 0
        var postersWritten = 0
        var postersReused = 0
        /// Kept GIFs not decoded again: the previous generation checked the same bytes against the
        /// same catalog record.
        var checksSkipped = 0

        mutating func add(_ other: Counts) {
            gifsWritten += other.gifsWritten
            gifsReused += other.gifsReused
            linksCreated += other.linksCreated
            bytesWritten += other.bytesWritten
            postersWritten += other.postersWritten
            postersReused += other.postersReused
            checksSkipped += other.checksSkipped
        }
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
    /// The pixel size renditions were chosen for (``InstallManifest/preferredPixelSize``).
    var preferredPixelSize: Int?
    /// The image formats the install preferred (``InstallManifest/formats``).
    var formats: [ImageFormat]?
    /// Looked at before each entry: a cancelled install stops staging (the caller removes the staging directory).
    var cancellation: InstallCancellation?
    /// Told of each GIF placed (``GIFLoader/refresh(progress:)``).
    var progress: InstallProgress?
    /// The install's phases (``InstallPhases``): decode and file writes, then sync.
    var phaseClock: InstallPhaseClock?
    var counts = Counts()
    /// Downloaded pack files the install deletes (not kept, ``PackInstaller/keepDownloads``): removed
    /// once everything is staged, right before the one sync, so their pages, still dirty, are
    /// dropped instead of written to the disk by the sync only to be deleted after the switch.
    var discardBeforeSync: [String] = []
    /// Files created (not linked) in the staging directory.
    private(set) var written: [String] = []

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
        phaseClock?.enter(.decode)
        let stagingStart = TimeSpan.now()
        let times = StagingTimes()
        let staged = try stageEntries(plan, times: times)
        let stagingEnd = TimeSpan.now()
        phaseClock?.enter(.fileWrites)
        // The staging's wall time, split by its threads' time in file calls against all their time.
        phaseClock?.move(InstallPhaseClock.seconds(from: stagingStart, to: stagingEnd) * times.fileShare, from: .decode, to: .fileWrites)
        counts.add(staged.counts)
        written += staged.written
        let checked = staged.checked
        var directories = [staging]
        if layout == .byHash {
            let map = "\(staging)/\(InstallLayout.idMapFileName)"
            try FileOps.writeNew(map, try InstallManifest.canonicalJSON(plan.exercises, path: InstallLayout.idMapFileName))
            written.append(map)
            directories.append("\(staging)/gifs")
        }
        if posters != nil { phaseClock?.enter(.decode) }
        let posterRecords = try posters.map { posters throws(PackClientError) in
            try placePosters(posters, plan: plan, directories: &directories)
        }
        phaseClock?.enter(.fileWrites)
        try writePlaceholders(plan)
        let manifest = InstallManifest(generation: generation, layout: layout, packs: plan.packs, exercises: plan.exercises,
                                       indexSequence: InstallManifest.floor(carrying: previous?.manifest.indexSequence, verified: verifiedSequence),
                                       posterPacks: posters?.packs, posters: posterRecords,
                                       checkedGIFs: checked, index: indexRecord, preferredPixelSize: preferredPixelSize,
                                       placeholderGIFs: plan.basis.mapValues(\.gif), formats: formats, imageFormats: plan.imageFormats)
        let manifestPath = "\(staging)/\(InstallManifest.fileName)"
        try FileOps.writeNew(manifestPath, try manifest.encoded())
        written.append(manifestPath)
        // Every entry is staged: nothing reads the downloads again.
        for path in discardBeforeSync { Self.discard(path) }
        phaseClock?.enter(.sync)
        try Durability.flush(files: written, directories: directories)
    }

    /// Drops a download's pages unwritten, then removes it. Truncated first: the plan's readers
    /// still hold it open, so an unlink alone would leave its dirty pages for the sync to write.
    private static func discard(_ path: String) {
        if let fd = try? FileOps.openRegular(path, [.writeOnly, .truncate]) { SystemCalls.close(fd) }
        FileOps.remove(path)
    }

    /// The index's placeholders of the installed GIFs (``InstalledPlaceholders``), when it has any.
    /// A GIF of a rendition beyond the first keeps its own size and timing but shows the BlurHash
    /// and average colour of its exercise's first-resolution GIF, so a cell looks the same whichever
    /// rendition the app installed.
    private mutating func writePlaceholders(_ plan: InstallPlan) throws(PackClientError) {
        var gifs: [String: GIFPlaceholder] = [:]
        for source in plan.entries where plan.idsByHash[source.entry.sha256] != nil {
            guard var placeholder = source.entry.placeholder else { continue }
            if let first = plan.basis[source.entry.sha256]?.placeholder {
                placeholder.blurHash = first.blurHash
                placeholder.averageColor = first.averageColor
            }
            gifs[source.entry.sha256] = placeholder
        }
        guard !gifs.isEmpty else { return }
        let path = "\(staging)/\(InstalledPlaceholders.fileName)"
        try FileOps.writeNew(path, try InstalledPlaceholders(gifs: gifs).encoded())
        written.append(path)
    }

    /// True when `path` is a regular file of `size` bytes hashing to `sha256`.
    static func holds(_ path: String, sha256: String, size: Int64) -> Bool {
        guard FileOps.regularFileSize(path) == size, let digest = try? StreamingSHA256.file(at: path) else { return false } // unreadable: not reusable
        return digest.sha256 == sha256
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
            files[hash] = "\(directory)/\(manifest.layout.relativePath(exercise: id, sha256: hash, format: manifest.imageFormat(for: hash)))"
        }
        return files
    }
}
