import Foundation
import GifPackSystem
import GifPackTransport

/// What a release review reads from one side of a release: a pack's `catalog.json` and the bytes of
/// its GIFs and posters. The command line implements it over the client's verified readers (each
/// entry checked against the index's hashes), for output folders, index files and downloaded packs.
public protocol ReleaseContent: Sendable {
    /// The pack's `catalog.json` (names, API records, GIF metadata), checked against the index.
    func catalog(of pack: PackDescription) throws -> PackCatalog
    /// The GIF with this hash, checked against it.
    func gif(sha256: String, in pack: PackDescription) throws -> [UInt8]
    /// The poster of `size` px of the GIF with this hash; nil when the pack has no posters pack or
    /// its file is not at hand.
    func poster(size: Int, gifSHA256: String, in pack: PackDescription) throws -> [UInt8]?
}

/// One side of a release review: the index, where it came from, who signed it, and its content.
///
/// ```swift
/// let new = ReviewRelease(index: index, location: "dist/index.json", signer: "key F04F51FA031D372D (verified)", content: content)
/// ```
public struct ReviewRelease: Sendable {
    public var index: PackIndex
    /// The folder, file or URL it was read from (shown escaped).
    public var location: String
    /// Who signed the index, as the page says it ("unsigned", "key … (verified)", …).
    public var signer: String
    public var content: any ReleaseContent
    /// Why exercises have no GIF, by id (the reason codes of the build's `report.json`, which
    /// lists the first 1,000); empty when the report is not at hand.
    public var missingReasons: [String: String]

    public init(index: PackIndex, location: String, signer: String, content: any ReleaseContent, missingReasons: [String: String] = [:]) {
        self.index = index
        // The page is an artifact others read: a URL's user name and password never reach it.
        self.location = URLCredentials.redacted(location)
        self.signer = signer
        self.content = content
        self.missingReasons = missingReasons
    }

    /// The largest `report.json` read for its reasons.
    public static let maxReportBytes: Int64 = 8 << 20

    /// The reason codes (`http-404`, `not-a-gif`, …) of the exercises `report.json` at `path` lists
    /// as rejected; empty when there is no such file, it is larger than ``maxReportBytes`` or it
    /// does not decode. Only the codes are shown: never a URL or a detail from the API.
    public static func missingReasons(reportAt path: String) -> [String: String] {
        guard let size = FileSystem.regularFileSize(path), size <= maxReportBytes,
              let bytes = try? FileSystem.readAll(path),
              let report = try? JSONDecoder().decode(BuildReport.self, from: Data(bytes)) else { return [:] }
        return Dictionary(report.rejections.map { ($0.exerciseID, $0.reason.code) }, uniquingKeysWith: { first, _ in first })
    }
}

/// One exercise as a review shows it: the first pack (by name) that lists it, and what its catalog
/// says of it. `name` and `bodyPart` are nil when the pack's catalog could not be read.
struct ReviewExercise: Sendable {
    var id: String
    var name: String?
    var bodyPart: String?
    var pack: String
    var gifSHA256: String?
    var gif: GIFMetadata?
}

/// Every exercise of one side, by id, read pack by pack (one catalog in memory at a time); the
/// packs whose catalog could not be read are named in `problems`.
struct ReviewExercises: Sendable {
    var byID: [String: ReviewExercise] = [:]
    var problems: [String] = []

    init() {}

    init(_ release: ReviewRelease) {
        for pack in release.index.packs {
            let described = described(pack, of: release)
            var entries: [String: GIFEntry]?
            for reference in pack.exercises where byID[reference.id] == nil {
                let record = described[reference.id]
                var gif = record?.gif
                if gif == nil, let hash = reference.gif {
                    // The catalog is not at hand: what the index alone says of the GIF.
                    if entries == nil { entries = Dictionary(pack.gifs.map { ($0.sha256, $0) }, uniquingKeysWith: { first, _ in first }) }
                    gif = entries?[hash].map(Self.metadata)
                }
                byID[reference.id] = ReviewExercise(id: reference.id, name: record?.name, bodyPart: record?.bodyPart,
                                                    pack: pack.name, gifSHA256: reference.gif, gif: gif)
            }
        }
    }

    /// Name, body part and GIF metadata of each exercise of the pack's catalog (the API records
    /// themselves are dropped with the catalog); empty, and a problem noted, when it cannot be read.
    private mutating func described(_ pack: PackDescription, of release: ReviewRelease)
        -> [String: (name: String, bodyPart: String?, gif: GIFMetadata?)] {
        var result: [String: (name: String, bodyPart: String?, gif: GIFMetadata?)] = [:]
        do {
            for exercise in try release.content.catalog(of: pack).exercises where result[exercise.id] == nil {
                result[exercise.id] = (exercise.name, Self.bodyPart(exercise), exercise.gif)
            }
        } catch {
            problems.append("pack \(pack.name) of \(release.location): its catalog could not be read (\(error)); "
                            + "its exercises are shown without names or images")
        }
        return result
    }

    /// What the index alone says of a GIF (its 1.2 placeholder), when the catalog is not at hand.
    private static func metadata(_ entry: GIFEntry) -> GIFMetadata {
        GIFMetadata(sha256: entry.sha256, bytes: entry.location.size, width: entry.placeholder?.width ?? 0,
                    height: entry.placeholder?.height ?? 0, frames: entry.placeholder?.frames ?? 0,
                    durationMilliseconds: entry.placeholder?.durationMilliseconds ?? 0, loopCount: entry.placeholder?.loopCount,
                    blurHash: entry.placeholder?.blurHash, averageColor: entry.placeholder?.averageColor)
    }

    /// The API's `bodyPart` (RapidAPI) or first of `bodyParts` (v1).
    private static func bodyPart(_ exercise: PackExercise) -> String? {
        exercise.data["bodyPart"]?.stringValue ?? exercise.data["bodyParts"]?.arrayValue?.first?.stringValue
    }
}
