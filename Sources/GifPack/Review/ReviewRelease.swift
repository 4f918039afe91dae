import Foundation
import GifPackSystem
import GifPackTransport

/// What a release review reads from one side of a release: a pack's `catalog.json` and the bytes of
/// its GIFs and posters. The command line implements it over the client's verified readers (each
/// entry checked against the index's hashes), for output folders, index files and downloaded packs.
package protocol ReleaseContent: Sendable {
    /// The exercises of the pack's `catalog.json` (names, API records, GIF metadata), handed to
    /// `body` one at a time as the catalog is read, never the whole catalog in memory; the catalog
    /// is checked against the index's content digest before the first one. An error `body` throws
    /// stops the read and is rethrown.
    func catalogExercises(of pack: PackDescription, _ body: (PackExercise) throws -> Void) throws
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
package struct ReviewRelease: Sendable {
    package var index: PackIndex
    /// The folder, file or URL it was read from (shown escaped).
    package var location: String
    /// Who signed the index, as the page says it ("unsigned", "key … (verified)", …).
    package var signer: String
    package var content: any ReleaseContent
    /// Why exercises have no GIF, by id (the reason codes of the build's `report.json`, which
    /// lists the first 1,000); empty when the report is not at hand.
    package var missingReasons: [String: String]

    package init(index: PackIndex, location: String, signer: String, content: any ReleaseContent, missingReasons: [String: String] = [:]) {
        self.index = index
        // The page is an artifact others read: a URL's user name and password never reach it.
        self.location = URLCredentials.redacted(location)
        self.signer = signer
        self.content = content
        self.missingReasons = missingReasons
    }

    /// The largest `report.json` read for its reasons.
    package static let maxReportBytes: Int64 = 8 << 20

    /// The reason codes (`http-404`, `not-a-gif`, …) of the exercises `report.json` at `path` lists
    /// as rejected; empty when there is no such file, it is larger than ``maxReportBytes`` or it
    /// does not decode. Only the codes are shown: never a URL or a detail from the API.
    package static func missingReasons(reportAt path: String) -> [String: String] {
        guard let size = FileSystem.regularFileSize(path), size <= maxReportBytes,
            let bytes = try? FileSystem.readAll(path),
            let report = try? JSONDecoder().decode(BuildReport.self, from: Data(bytes))
        else { return [:] }
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

/// The exercises of one pack of a side, in the index's order, each with what the pack's catalog
/// says of it: the catalog is read as it comes (``ReleaseContent/catalogExercises(of:_:)``) and
/// each of its exercises must be the index's next one (same id, same GIF). When the catalog cannot
/// be read, or from where it stops agreeing with the index, the exercises come from the index alone
/// (no name, the GIF's metadata from its 1.2 placeholder) and a problem says so. Memory: one
/// exercise at a time.
enum ReviewPackWalk {
    /// Calls `body` once for every exercise the index lists in `pack`.
    static func exercises(
        of pack: PackDescription, in release: ReviewRelease, problems: inout [String],
        _ body: (ReviewExercise) throws -> Void
    ) throws {
        let refs = pack.exercises
        var position = 0
        do {
            try release.content.catalogExercises(of: pack) { exercise in
                guard position < refs.count, refs[position].id == exercise.id, refs[position].gif == exercise.gif?.sha256 else {
                    throw Disagreement(position: position)
                }
                let described = ReviewExercise(
                    id: exercise.id, name: exercise.name, bodyPart: bodyPart(exercise), pack: pack.name,
                    gifSHA256: refs[position].gif, gif: exercise.gif)
                do { try body(described) } catch { throw Stopped(error: error) }
                position += 1
            }
            if position < refs.count { throw Disagreement(position: position) }
        } catch let stopped as Stopped {
            throw stopped.error
        } catch let disagreement as Disagreement {
            problems.append(
                "pack \(pack.name) of \(release.location): its catalog disagrees with the index from exercise \(disagreement.position + 1) on; "
                    + "those exercises are shown without names")
        } catch {
            problems.append(
                "pack \(pack.name) of \(release.location): its catalog could not be read (\(error)); "
                    + "its exercises are shown without names")
        }
        guard position < refs.count else { return }
        let entries = Dictionary(pack.gifs.map { ($0.sha256, $0) }, uniquingKeysWith: { first, _ in first })
        for ref in refs[position...] {
            try body(
                ReviewExercise(
                    id: ref.id, name: nil, bodyPart: nil, pack: pack.name, gifSHA256: ref.gif,
                    gif: ref.gif.flatMap { entries[$0] }.map(metadata)))
        }
    }

    private struct Disagreement: Error { var position: Int }
    private struct Stopped: Error { var error: any Error }

    /// What the index alone says of a GIF (its 1.2 placeholder), when the catalog is not at hand.
    private static func metadata(_ entry: GIFEntry) -> GIFMetadata {
        GIFMetadata(
            sha256: entry.sha256, bytes: entry.location.size, width: entry.placeholder?.width ?? 0,
            height: entry.placeholder?.height ?? 0, frames: entry.placeholder?.frames ?? 0,
            durationMilliseconds: entry.placeholder?.durationMilliseconds ?? 0, loopCount: entry.placeholder?.loopCount,
            blurHash: entry.placeholder?.blurHash, averageColor: entry.placeholder?.averageColor)
    }

    /// The API's `bodyPart` (RapidAPI) or first of `bodyParts` (v1).
    private static func bodyPart(_ exercise: PackExercise) -> String? {
        exercise.data["bodyPart"]?.stringValue ?? exercise.data["bodyParts"]?.arrayValue?.first?.stringValue
    }
}
