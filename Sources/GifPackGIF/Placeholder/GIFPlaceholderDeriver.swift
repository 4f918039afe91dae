/// What the builder derives from each GIF for apps to show before (or instead of) playing it.
///
/// ```swift
/// let derived = try GIFPlaceholderDeriver.derive(path: blob, settings: .init(posterSizes: [80, 200]))
/// print(derived.blurHash, derived.averageColor, derived.posters[80]!.count)
/// ```
package struct GIFPlaceholders: Sendable, Equatable {
    package var blurHash: String
    /// `#rrggbb`, the mean of the still.
    package var averageColor: String
    /// Which frame the still is (0 unless the first frame is blank).
    package var stillFrameIndex: Int
    /// Single-frame GIF bytes by requested longest side.
    package var posters: [Int: [UInt8]]

    package init(blurHash: String, averageColor: String, stillFrameIndex: Int, posters: [Int: [UInt8]]) {
        self.blurHash = blurHash
        self.averageColor = averageColor
        self.stillFrameIndex = stillFrameIndex
        self.posters = posters
    }
}

/// How placeholders and posters are made: BlurHash components and poster sizes (longest side, px).
package struct PlaceholderSettings: Sendable, Equatable, Hashable {
    package var componentsX: Int
    package var componentsY: Int
    package var posterSizes: [Int]

    package static let posterSizeRange = 16...512

    package init(componentsX: Int = 4, componentsY: Int = 3, posterSizes: [Int] = [80]) {
        self.componentsX = componentsX
        self.componentsY = componentsY
        self.posterSizes = posterSizes.sorted()
    }

    /// Names the settings in cache paths: equal keys mean equal derived files.
    /// Bump the leading revision when the derivation itself changes (r2: posters' palettes at full
    /// precision, ``PaletteQuantizer``, instead of giflib's 5-bit `GifQuantizeBuffer`).
    package var cacheKey: String {
        "r2-bh\(componentsX)x\(componentsY)-p" + posterSizes.map(String.init).joined(separator: "_")
    }
}

/// Decodes a GIF's still (``StillFrameDecoder``) and derives its BlurHash, average colour and posters.
package enum GIFPlaceholderDeriver {
    package enum DeriveError: Error, CustomStringConvertible {
        case decode(GIFRejection)
        case encode(String)

        package var description: String {
            switch self {
            case .decode(let rejection): "cannot decode the still: \(rejection)"
            case .encode(let detail): detail
            }
        }
    }

    package static func derive(path: String, settings: PlaceholderSettings) throws(DeriveError) -> GIFPlaceholders {
        let still: StillFrame
        do { still = try StillFrameDecoder.decode(path: path) } catch { throw .decode(error) }
        return try derive(still: still, settings: settings)
    }

    package static func derive(still: StillFrame, settings: PlaceholderSettings) throws(DeriveError) -> GIFPlaceholders {
        let hashPixels = AreaDownscaler.downscale(still.image, longestSide: BlurHashEncoder.pixelSide)
        let hash: String
        do { hash = try BlurHashEncoder.encode(hashPixels, componentsX: settings.componentsX, componentsY: settings.componentsY) } catch {
            throw .encode("BlurHash components \(settings.componentsX)x\(settings.componentsY) are outside 1...9")
        }
        var posters: [Int: [UInt8]] = [:]
        for size in settings.posterSizes {
            do { posters[size] = try PosterEncoder.encode(AreaDownscaler.downscale(still.image, longestSide: size)) } catch {
                throw .encode(error.description)
            }
        }
        return GIFPlaceholders(
            blurHash: hash, averageColor: still.image.averageColorHex,
            stillFrameIndex: still.frameIndex, posters: posters)
    }
}
