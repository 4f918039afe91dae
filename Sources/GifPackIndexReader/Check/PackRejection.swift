import GifPackFormat
import GifPackSystem

/// Why a pack (or the index entry describing it) was refused.
///
/// A rejection is raised before anything reaches an installed cache: installs stage everything in
/// a separate directory and switch only when every check passed, so a rejected pack leaves the cache
/// exactly as it was. ``reason`` is a stable machine-readable code (see ``Reason``), ``pack`` and
/// ``entry`` locate the problem (a tar path, an exercise id or a frame offset), ``detail`` explains it.
///
/// ```swift
/// do { try await installer.install(from: source) }
/// catch PackClientError.rejected(let rejection) {
///     print(rejection.reason.rawValue)   // "link"
///     print(rejection)                   // "pack chest: gifs/ab….gif: link: entry is a symbolic link to /etc/passwd"
/// }
/// ```
package struct PackRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of hostile or broken content a client refuses.
    package enum Reason: String, Sendable, CaseIterable {
        /// A path starts with `/`.
        case absolutePath = "absolute-path"
        /// A path has a `..` (or `.`, or empty) component.
        case parentDirectory = "parent-directory"
        /// A name is not plain ASCII of the allowed characters (pack names, exercise ids, hashes).
        case unsafeName = "unsafe-name"
        /// A tar entry is a symbolic or hard link.
        case link = "link"
        /// A tar entry is a character or block device or a FIFO.
        case deviceFile = "device-file"
        /// A tar entry is a directory or another non-regular type.
        case notARegularFile = "not-a-regular-file"
        /// The pack holds a frame (entry) the index does not list.
        case unlistedEntry = "unlisted-entry"
        /// The index lists an entry that is not where it says, or a reference that leads nowhere.
        case missingEntry = "missing-entry"
        /// The entry's tar name is not the one the index gives for that frame.
        case entryMismatch = "entry-mismatch"
        /// The data's SHA-256 is not the index's.
        case hashMismatch = "hash-mismatch"
        /// The entry is smaller than the index says.
        case sizeMismatch = "size-mismatch"
        /// The entry (its tar header or its frame's declared size) is larger than the index says,
        /// or larger than the client's limit.
        case oversize = "oversize"
        /// Decompression produced more bytes than the frame declared and the index allows.
        case bomb = "bomb"
        /// A tar header is malformed (checksum, magic, numbers) or a frame holds other than one entry.
        case badEntry = "bad-entry"
        /// A zstd frame is corrupt, truncated, lacks its content size or checksum, or fails it.
        case badFrame = "bad-frame"
        /// The pack file's size is not the index's.
        case packSize = "pack-size"
        /// The pack file's SHA-256 is not the index's.
        case packChecksum = "pack-checksum"
        /// An id or hash appears twice where it must be unique.
        case duplicate = "duplicate"
        /// `catalog.json` does not match the index (content digest, exercises or GIF hashes).
        case catalogMismatch = "catalog-mismatch"
        /// The data does not start with a GIF signature, or (verify) does not decode as a GIF.
        case notAGIF = "not-a-gif"
        /// The pack file is missing or cannot be read.
        case unreadable = "unreadable"
        /// Two installed packs give one exercise different GIFs.
        case conflict = "conflict"
        /// A version, size, offset or count in the index is negative or otherwise impossible.
        case invalidNumber = "invalid-number"
        /// A GIF of a rendition pack (format 1.3) whose logical screen's larger side is not the
        /// pack's `resolution`: a 360 px rendition made of 180 px GIFs.
        case wrongResolution = "wrong-resolution"
        /// A WebP entry (format 1.4) whose bytes are not a well-formed WebP container: the RIFF
        /// header, its chunks, the canvas, the frames or the limits (`WebPWalker`).
        case notAWebP = "not-a-webp"
    }

    package var reason: Reason
    /// The pack's name as the index gives it.
    package var pack: String
    /// The tar path, exercise id or frame that is wrong, when there is one.
    package var entry: String?
    /// What exactly is wrong, for a person.
    package var detail: String

    package init(_ reason: Reason, pack: String, entry: String? = nil, detail: String) {
        self.reason = reason
        self.pack = pack
        self.entry = entry
        self.detail = detail
    }

    /// One line, with every part escaped (`TerminalText`).
    package var description: String {
        TerminalText.escaped("pack \(pack): " + (entry.map { "\($0): " } ?? "") + "\(reason.rawValue): \(detail)")
    }
}
