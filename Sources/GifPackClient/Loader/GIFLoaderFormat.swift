import GifPackFormat

extension GIFLoader {
    /// An image format the loader can answer (index format 1.4): the app lists those it displays,
    /// in order of preference, in ``GIFLoader/Configuration/formats``, and each ``LoadedGIF`` says
    /// which one its bytes are. ImageIO (`CGImageSource`) displays both.
    ///
    /// ```swift
    /// var configuration = GIFLoader.Configuration()
    /// configuration.formats = [.webp, .gif]   // WebP where the index has it, else the GIFs
    /// ```
    public enum Format: Sendable, Hashable {
        /// GIF: every pack has it; always the last resort.
        case gif
        /// Animated (or still) WebP, about a third of the GIF's bytes at the same look.
        case webp

        /// The index's name for the format.
        package var imageFormat: ImageFormat {
            switch self {
            case .gif: .gif
            case .webp: .webp
            }
        }
    }
}
