import Foundation

/// Deletes what nothing needs any more, never anything the current index references: pack files
/// older than the last `keep` versions of each pack, temporary files left by killed runs, blobs no
/// exercise in the state refers to, and their precompressed frames. Versions above the current one
/// are kept: pack names are immutable and no build reuses their numbers.
///
/// ```swift
/// let result = try Pruner(outputDirectory: "dist", layout: layout, keep: 3).prune(index: index, state: state)
/// print(result.deletedPacks)
/// ```
package struct Pruner: Sendable {
    package let outputDirectory: String
    package let layout: CacheLayout
    package let keep: Int

    package init(outputDirectory: String, layout: CacheLayout, keep: Int) {
        self.outputDirectory = outputDirectory
        self.layout = layout
        self.keep = max(1, keep)
    }

    /// What a pruning pass deleted.
    package struct Result: Sendable, Equatable, Codable {
        package var deletedPacks: [String] = []
        package var deletedTemporaryFiles = 0
        package var deletedBlobs = 0
        package var freedBytes: Int64 = 0
    }

    package func prune(index: PackIndex?, state: BuildState?) throws -> Result {
        var result = Result()
        let packsDirectory = "\(outputDirectory)/packs"
        let referenced = Set(index?.packFiles.map { "\(outputDirectory)/\($0.file)" } ?? [])
        let names = try FileSystem.list(packsDirectory)
        for name in names where FileSystem.isOwnTemporaryName(name) {
            let path = "\(packsDirectory)/\(name)"
            result.freedBytes += FileSystem.fileSize(path) ?? 0
            FileSystem.remove(path)
            result.deletedTemporaryFiles += 1
        }
        let listed = (index?.allPacks ?? []).flatMap { pack in
            [(pack.name, pack.version)] + (pack.posters.map { [($0.name, $0.version)] } ?? [])
        }
        for pack in listed.map({ (name: $0.0, version: $0.1) }) {
            // Retention: keep versions V-keep+1 ... V of each pack and of its posters pack. A version
            // above V (written by a build whose index this one does not know, or left by a killed
            // run) is never deleted here: names are immutable, and no build reuses its number.
            let oldestKept = pack.version - keep + 1
            for name in names {
                guard let version = PackFileName.version(of: name, pack: pack.name), version < oldestKept else { continue }
                let path = "\(packsDirectory)/\(name)"
                guard !referenced.contains(path) else { continue }
                result.freedBytes += FileSystem.fileSize(path) ?? 0
                FileSystem.remove(path)
                result.deletedPacks.append(name)
            }
        }
        if let state {
            let wanted = try state.referencedBlobs()
            for (hash, path) in try blobs() where !wanted.contains(hash) {
                result.freedBytes += FileSystem.fileSize(path) ?? 0
                FileSystem.remove(path)
                result.deletedBlobs += 1
                try removeFrames(sha256: hash)
            }
        }
        result.deletedPacks.sort()
        return result
    }

    /// 64 lowercase hex digits: a blob's name as gifpack stores it (nothing else is deleted).
    static func isSHA256Hex(_ text: Substring) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private func blobs() throws(FileSystemError) -> [(String, String)] {
        var found: [(String, String)] = []
        let root = layout.blobsDirectory
        for shard in try FileSystem.list(root) where shard.utf8.count == 2 && FileSystem.isDirectory("\(root)/\(shard)") {
            for name in try FileSystem.list("\(root)/\(shard)")
            where name.hasSuffix(".gif") && Self.isSHA256Hex(name.dropLast(4)) && name.hasPrefix(shard) {
                found.append((String(name.dropLast(4)), "\(root)/\(shard)/\(name)"))
            }
        }
        return found
    }

    private func removeFrames(sha256: String) throws(FileSystemError) {
        let framesRoot = "\(layout.root)/frames"
        for directory in try FileSystem.list(framesRoot) {
            FileSystem.remove("\(framesRoot)/\(directory)/\(sha256.prefix(2))/\(sha256).zst")
        }
        // Placeholders and posters derived from the blob, under every settings key.
        let derivedRoot = "\(layout.root)/derived"
        for directory in try FileSystem.list(derivedRoot) where FileSystem.isDirectory("\(derivedRoot)/\(directory)") {
            let shard = "\(derivedRoot)/\(directory)/\(sha256.prefix(2))"
            for name in try FileSystem.list(shard) where name.hasPrefix(sha256) {
                FileSystem.remove("\(shard)/\(name)")
            }
        }
        // Its WebP renditions (WebPCache), under every policy key.
        let webpRoot = "\(layout.root)/webp"
        for directory in try FileSystem.list(webpRoot) where FileSystem.isDirectory("\(webpRoot)/\(directory)") {
            for suffix in ["txt", "webp"] {
                FileSystem.remove("\(webpRoot)/\(directory)/\(sha256.prefix(2))/\(sha256).\(suffix)")
            }
        }
    }
}
