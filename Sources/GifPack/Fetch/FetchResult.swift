import Foundation

/// A GIF that passed every check and sits in the blob store.
package struct StoredGIF: Sendable, Equatable {
    package var exerciseID: String
    package var sha256: String
    package var bytes: Int64
    package var info: GIFInfo
    /// False when the same bytes were already in the store (a duplicate of another exercise or an
    /// earlier build).
    package var newlyStored: Bool
    /// The GIF's size differs from the requested resolution (the API silently downgrades).
    package var resolutionMismatch: Bool
    package var origin: GIFOrigin

    package var metadata: GIFMetadata {
        GIFMetadata(
            sha256: sha256, bytes: bytes, width: info.width, height: info.height, frames: info.frameCount,
            durationMilliseconds: info.durationMilliseconds, loopCount: info.loopCount)
    }
}

/// How a valid GIF was obtained in this run.
package enum GIFOrigin: String, Sendable, Equatable, Codable {
    /// A full body was downloaded and validated.
    case downloaded
    /// A conditional request answered 304: the stored blob is current.
    case notModified
    /// Fetched more recently than `refresh_after`: no request was sent.
    case fresh
    /// This run's fetch failed; the GIF stored by an earlier build is kept.
    case lastKnownGood
}

/// A response that was refused, with a stable reason (``RejectionReason``: `html-body`,
/// `wrong-content-type`, `truncated`, `not-a-gif`, `too-large`, `bad-frame`, `http-404`, …) and a
/// human detail. Its GIF never enters a pack.
package struct FetchRejection: Sendable, Equatable, Codable {
    package var exerciseID: String
    package var url: String
    package var reason: RejectionReason
    package var detail: String
    package var status: Int?
}

/// The outcome of fetching one exercise's GIF.
package enum GIFFetchResult: Sendable, Equatable {
    case stored(StoredGIF)
    case rejected(FetchRejection)
}

extension StoredGIF {
    /// A GIF already in the blob store, described by the metadata the state recorded for it.
    /// `requestedResolution` flags a size that is not that rendition; nil flags nothing.
    init(exerciseID: String, reusing metadata: GIFMetadata, origin: GIFOrigin, requestedResolution: Resolution?) {
        let info = GIFInfo(
            width: metadata.width, height: metadata.height, frameCount: metadata.frames,
            durationMilliseconds: metadata.durationMilliseconds, loopCount: metadata.loopCount, version: "89a")
        self.init(
            exerciseID: exerciseID, sha256: metadata.sha256, bytes: metadata.bytes, info: info, newlyStored: false,
            resolutionMismatch: requestedResolution.map { !$0.matches(width: info.width, height: info.height) } ?? false,
            origin: origin)
    }
}
