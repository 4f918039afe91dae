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
public struct Pruner: Sendable {
    public let outputDirectory: String
    public let layout: CacheLayout
    public let keep: Int

    public init(outputDirectory: String, layout: CacheLayout, keep: Int) {
        self.outputDirectory = outputDirectory
        self.layout = layout
        self.keep = max(1, keep)
    }

    /// What a pruning pass deleted.
    public struct Result: Sendable, Equatable, Codable {
        public var deletedPacks: [String] = []
        public var deletedTemporaryFiles = 0
        public var deletedBlobs = 0
        public var freedBytes: Int64 = 0
    }

    public func prune(index: PackIndex?, state: BuildState?) throws -> Result {
        var result = Result()
        let packsDirectory = "\(outputDirectory)/packs"
        let referenced = Set(index?.packs.map { "\(outputDirectory)/\($0.file)" } ?? [])
        let names = (try? FileManager.default.contentsOfDirectory(atPath: packsDirectory)) ?? []
        for name in names where name.hasPrefix(".") && name.contains(".tmp-") {
            let path = "\(packsDirectory)/\(name)"
            result.freedBytes += FileSystem.fileSize(path) ?? 0
            FileSystem.remove(path)
            result.deletedTemporaryFiles += 1
        }
        for pack in index?.packs ?? [] {
            // Retention: keep versions V-keep+1 ... V. A version above V (published by a build whose
            // index this one does not know, or left by a killed run) is never deleted here: names are
            // immutable, and no build reuses its number.
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
            for (hash, path) in blobs() where !wanted.contains(hash) {
                result.freedBytes += FileSystem.fileSize(path) ?? 0
                FileSystem.remove(path)
                result.deletedBlobs += 1
                removeFrames(sha256: hash)
            }
        }
        result.deletedPacks.sort()
        return result
    }

    private func blobs() -> [(String, String)] {
        var found: [(String, String)] = []
        let root = layout.blobsDirectory
        for shard in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(shard)")) ?? [] where name.hasSuffix(".gif") {
                found.append((String(name.dropLast(4)), "\(root)/\(shard)/\(name)"))
            }
        }
        return found
    }

    private func removeFrames(sha256: String) {
        let framesRoot = "\(layout.root)/frames"
        for directory in (try? FileManager.default.contentsOfDirectory(atPath: framesRoot)) ?? [] {
            FileSystem.remove("\(framesRoot)/\(directory)/\(sha256.prefix(2))/\(sha256).zst")
        }
    }
}
