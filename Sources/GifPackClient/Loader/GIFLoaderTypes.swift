import Foundation
import GifPackFormat
import GifPackGIFCore
import GifPackIndexReader

/// Which tier of a ``GIFLoader`` answered.
public enum GIFTier: Sendable, Equatable, CaseIterable {
    /// The loader's memory (bytes checked when they entered it).
    case memory
    /// The installed packs (``GIFLoader/refresh(progress:)`` installs them), read from disk and hashed.
    case installed
    /// The lazy disk cache (GIFs fetched one by one, bounded by bytes), read from disk and hashed.
    case lazyCache
    /// The network: the GIF's one zstd frame fetched by range, checked, then stored in the lazy cache.
    case network
}

/// A verified GIF (or, with ``GIFLoader/Configuration/formats`` preferring WebP, a WebP) and where it came from.
///
/// ```swift
/// let gif = try await loader.gif(for: "0001")
/// imageView.load(gif.fileURL ?? temporaryFile(gif.data))   // gif.tier: .memory, .installed, …; gif.format: .gif or .webp
/// ```
public struct LoadedGIF: Sendable, Equatable {
    /// The image's SHA-256 (lowercase hex): its bytes hash to it.
    public var sha256: String
    /// The image's bytes, in ``format``.
    public var data: Data
    /// What the bytes are: ``GIFLoader/Format/gif``, or ``GIFLoader/Format/webp`` (format 1.4, when
    /// the app prefers WebP and the index has a WebP of the exercise). Both were checked
    /// structurally (the GIF walker, the WebP container walker) before they were first served.
    public var format: GIFLoader.Format
    /// A file holding exactly these bytes (installed packs or the lazy cache), for views that take
    /// a URL; nil when the GIF is in memory only (the lazy cache keeps no GIF larger than its limit).
    /// The lazy cache may evict its file later; the installed one stays until the next install
    /// after the one that removes it. An installed WebP's file ends in `.webp`; the lazy cache
    /// names every file `<sha256>.gif`, whatever its ``format`` (ImageIO reads the content, not
    /// the name).
    public var fileURL: URL?
    /// Which tier answered: memory, the installed packs, the lazy disk cache or the network.
    public var tier: GIFTier

    /// `data` already verified (its hash, and its format's structure where it came from a pack):
    /// its format is the one its signature says (a WebP's RIFF header, else GIF).
    init(sha256: String, data: Data, fileURL: URL?, tier: GIFTier) {
        self.sha256 = sha256
        self.data = data
        self.format = WebPWalker.hasSignature(data.prefix(12)) ? .webp : .gif
        self.fileURL = fileURL
        self.tier = tier
    }
}

/// An exercise's placeholder from what the installed cache keeps: usable offline and after a
/// relaunch (``GIFLoader/placeholder(for:)``).
public struct LoaderPlaceholder: Sendable, Equatable {
    /// The exercise this placeholder stands for.
    package var exerciseID: String
    /// The SHA-256 of the GIF it stands for (``GIFLoader/gif(sha256:)`` loads it).
    public var gifSHA256: String
    /// `#rrggbb`, the mean colour of the GIF's still; nil when the generation has no placeholders
    /// (installed from a format 1.0/1.1 index, or by a version before placeholders were kept).
    public var averageColor: String?
    /// The GIF's still as a BlurHash string (decode it at a few pixels for a blurred preview); nil
    /// as for ``averageColor``.
    public var blurHash: String?
    /// The GIF's width in pixels, for the view's aspect ratio before the GIF arrives; nil as for ``averageColor``.
    public var width: Int?
    /// The GIF's height in pixels; nil as for ``averageColor``.
    public var height: Int?
    /// The still poster on disk (installed with posters), at the loader's ``GIFLoader/Configuration/posterSize``
    /// or the generation's smallest size.
    public var posterURL: URL?
}

/// Where a ``GIFLoader/refresh(progress:)`` is, with its bytes and GIFs done and total.
///
/// Reports arrive in order and their done counts never go down: `.checking` (the conditional
/// index request), then either `.upToDate` (nothing to fetch: every count 0) or `.fetching` (the
/// packs' transfers), `.installing` (each GIF verified and placed) and `.installed`, where done
/// equals total for bytes and GIFs. ``gifsTotal`` is known from the index when fetching starts;
/// ``bytesTotal`` grows as each pack's transfer is planned (the rest of a whole pack, or the ranges
/// of the frames the cache lacks) and is final from `.installing` on; ``fractionCompleted`` never
/// goes down from one report to the next. Reports come on the thread
/// of the transfer or of the disk work: hop to the main actor to show them.
///
/// ```swift
/// try await loader.refresh { step in
///     Task { @MainActor in bar.progress = Float(step.fractionCompleted) }   // or step.bytesDone, step.gifsDone
/// }
/// ```
public struct RefreshProgress: Sendable, Equatable {
    /// The step of the refresh a report is about, in the order they come.
    public enum Stage: Sendable, Equatable {
        /// The conditional index request is on its way.
        case checking
        /// The server answered that nothing changed (a 304, or the same packs): nothing was fetched or written.
        case upToDate
        /// The packs (only the frames the cache lacks) are in transfer.
        case fetching
        /// Every transfer is done: the GIFs are verified and placed in the new generation.
        case installing
        /// The new generation is installed.
        case installed
    }

    /// The step this report is about.
    public var stage: Stage
    /// Bytes of the packs received so far.
    public var bytesDone: Int64 = 0
    /// All the bytes the transfers planned so far fetch.
    public var bytesTotal: Int64 = 0
    /// GIFs verified and placed in the new generation so far.
    public var gifsDone = 0
    /// The distinct GIFs the chosen packs' exercises use.
    public var gifsTotal = 0

    /// A report of `stage` with these counts.
    package init(stage: Stage, bytesDone: Int64 = 0, bytesTotal: Int64 = 0, gifsDone: Int = 0, gifsTotal: Int = 0) {
        self.stage = stage
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
        self.gifsDone = gifsDone
        self.gifsTotal = gifsTotal
    }

    /// The fraction an earlier report of the same refresh showed: this one never shows less.
    var fractionFloor = 0.0

    /// 0…1 for a progress bar: half for the bytes, half for the GIFs (1 once up to date or
    /// installed). Monotone across one refresh's reports: when the next pack's bytes join the
    /// total, the bar holds where it was until the bytes catch up.
    public var fractionCompleted: Double {
        switch stage {
        case .checking: return 0
        case .upToDate, .installed: return 1
        case .fetching, .installing:
            func part(_ done: Int64, _ total: Int64) -> Double { total > 0 ? Double(done) / Double(total) : (stage == .installing ? 1 : 0) }
            return max(fractionFloor, (part(bytesDone, bytesTotal) + part(Int64(gifsDone), Int64(gifsTotal))) / 2)
        }
    }
}

/// The one error a ``GIFLoader`` throws (besides `CancellationError` when the caller's task is
/// cancelled): ``kind`` says what the failure means for the screen that asked, ``description`` (and
/// `localizedDescription`) what failed and what to check, in one line that never carries a
/// credential or a terminal control sequence.
///
/// ```swift
/// do { cell.show(try await loader.gif(for: id)) }
/// catch let error as GIFLoaderError where error.kind == .offline { cell.showPlaceholder(retryWhenOnline: true) }
/// catch { cell.showPlaceholder(retryWhenOnline: false) }
/// ```
public struct GIFLoaderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the failure means for the caller: try again when online, give up, free space, …
    public var kind: GIFLoadFailure
    /// One line saying what failed and what to check.
    public var description: String
    /// The error of the part that failed (the index reader, the installer, a transport), for the
    /// command line and the tests.
    package var underlying: (any Error)?

    package init(kind: GIFLoadFailure, description: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.description = description
        self.underlying = underlying
    }

    /// `error` as the loader throws it: a `GIFLoaderError` stays itself; any other error is
    /// classified (``GIFLoadFailure/init(_:)``) and kept as ``underlying``.
    package init(wrapping error: any Error) {
        if let error = error as? GIFLoaderError {
            self = error
        } else {
            self.init(kind: GIFLoadFailure(error), description: String(describing: error), underlying: error)
        }
    }

    /// The ``underlying`` error when it is a `PackClientError` (the tests and the command line switch on its cases).
    package var packClientError: PackClientError? { underlying as? PackClientError }

    /// The cache folder is not a `file:` URL.
    package static func cacheFolderNotAFileURL(_ url: String) -> GIFLoaderError {
        GIFLoaderError(
            kind: .other,
            description:
                "the cache folder must be a file URL (URL(fileURLWithPath:) or FileManager's url(for:in:…)), not \(url)")
    }

    /// The cache folder's path is relative (it would depend on the working directory, `/` in an iOS app).
    package static func cacheFolderRelative(_ path: String) -> GIFLoaderError {
        GIFLoaderError(
            kind: .other,
            description:
                "the cache folder must be an absolute path, not \(path) (it would resolve against the working directory)")
    }

    /// The index URL is neither http(s) nor a file URL.
    package static func unsupportedIndexURL(_ url: String) -> GIFLoaderError {
        GIFLoaderError(kind: .other, description: "the index URL must be http, https or file, not \(url)")
    }

    /// Equal when they mean the same and say the same (the underlying error is not compared).
    public static func == (lhs: GIFLoaderError, rhs: GIFLoaderError) -> Bool {
        lhs.kind == rhs.kind && lhs.description == rhs.description
    }
}

/// Cancels a ``GIFLoader/prefetch(_:)``: its requests not answered yet stop (each is cancelled when
/// no visible request shares it).
public struct PrefetchHandle: Sendable {
    let task: Task<Void, Never>

    /// Stops the prefetch; what it already loaded stays in the loader's memory and disk caches.
    public func cancel() { task.cancel() }

    /// Waits until every GIF of the prefetch is loaded, failed or cancelled.
    package func finished() async { await task.value }
}
