import Foundation
import GifPackFormat
import GifPackIndexReader

/// One rollback floor per index URL for a ``GIFLoader``, whichever tier verified the index: the
/// installer (its generation's ``InstallManifest/indexSequence``) and the lazy cache (its slots'
/// sequences, ``LazyGIFStore/floor(url:)``) each keep theirs on disk, so it survives a relaunch
/// and other processes sharing the folder see it, and each tier reads the other's before it
/// accepts an index. A replayed, validly signed older index is refused by both tiers once either
/// has verified a newer one.
///
/// ```swift
/// let floors = LoaderFloors(folder: folder, indexURL: url)
/// installer.floorSource = floors.lazyFloor
/// ```
struct LoaderFloors: Sendable {
    let folder: String
    let indexURL: String

    /// The lazy cache's floor for the URL (nil before the cache has its folders). Blocks.
    var lazyFloor: @Sendable () throws -> Int? {
        let store = LazyGIFStore(directory: "\(folder)/lazy")
        let url = indexURL
        return { () throws -> Int? in try store.floorIfPresent(url: url) }
    }

    /// The installed generation's floor, when it was installed from this URL (or its compressed
    /// copy); nil when nothing is installed. Blocks.
    var installedFloor: @Sendable () throws -> Int? {
        let directory = "\(folder)/installed"
        let url = indexURL
        return { () throws -> Int? in
            let generations = CacheGenerations(cachePath: directory)
            guard let generation = try generations.current(),
                let manifest = try InstallManifest.read(directory: generations.generationPath(generation))
            else { return nil }
            if let record = manifest.index,
                !record.validators.belong(to: url), !record.validators.belong(to: CompressedIndex.beside(url))
            {
                return nil
            }
            return manifest.indexSequence
        }
    }

    /// The floor `source` reads (nil without one); its failure as a ``PackClientError``. Blocks.
    static func read(_ source: (@Sendable () throws -> Int?)?) throws(PackClientError) -> Int? {
        guard let source else { return nil }
        do { return try source() } catch let error as PackClientError { throw error } catch {
            throw .unreadable(location: "the rollback floor", detail: "\(error)")
        }
    }
}
