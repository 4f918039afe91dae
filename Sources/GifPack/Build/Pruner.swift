import Foundation

/// Deletes what nothing needs any more, never anything the current index references: pack files
/// older than the last `keep` versions of each pack, temporary files left by killed runs, blobs no
/// exercise in the state refers to, and their precompressed frames.
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
        let names = try FileSystem.list(packsDirectory)
        var versions: [String: [(version: Int, file: String)]] = [:]
        for name in names {
            let path = "\(packsDirectory)/\(name)"
            if FileSystem.isOwnTemporaryName(name) {
                result.freedBytes += FileSystem.fileSize(path) ?? 0
                FileSystem.remove(path)
                result.deletedTemporaryFiles += 1
                continue
            }
            guard let (pack, version) = Self.parsePackFileName(name) else { continue }
            versions[pack, default: []].append((version, path))
        }
        for pack in index?.packs ?? [] {
            // Keep versions V-keep+1 ... V. Versions above V were left by a run killed before it
            // published its index: nothing references them, and the next publish rewrites them.
            let oldestKept = pack.version - keep + 1
            for file in versions[pack.name] ?? [] where !referenced.contains(file.file)
                && (file.version < oldestKept || file.version > pack.version) {
                result.freedBytes += FileSystem.fileSize(file.file) ?? 0
                FileSystem.remove(file.file)
                result.deletedPacks.append(PathText.lastComponent(file.file))
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

    /// `<name>-v<N>.tar.zst` → (name, N).
    static func parsePackFileName(_ file: String) -> (String, Int)? {
        guard file.hasSuffix(".tar.zst") else { return nil }
        let stem = file.dropLast(".tar.zst".count)
        guard let marker = stem.range(of: "-v", options: .backwards), let version = Int(stem[marker.upperBound...]) else {
            return nil
        }
        return (String(stem[..<marker.lowerBound]), version)
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
    }
}
