import Glibc

/// The BlurHash algorithm (https://blurha.sh, woltapp/blurhash's reference encoder): a DCT of the
/// image in linear light, `componentsX` x `componentsY` coefficients, quantised and written in base 83.
///
/// The arithmetic follows the reference encoder step by step (same summation order, same rounding),
/// so its output matches other faithful implementations on the same pixels; the tests compare it
/// with PyPI's `blurhash` 1.1.5. gifpack encodes the still downscaled to ``pixelSide`` px on its
/// longest side (area filter), which is what the hash in a pack describes.
///
/// ```swift
/// let hash = try BlurHashEncoder.encode(image, componentsX: 4, componentsY: 3) // "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
/// ```
package enum BlurHashEncoder {
    /// The longest side of the image gifpack hashes (see ``GIFPlaceholderDeriver``).
    package static let pixelSide = 32
    package static let componentRange = 1...9

    package enum EncodeError: Error, Equatable { case componentsOutOfRange(x: Int, y: Int) }

    package static func encode(_ image: RGBImage, componentsX: Int, componentsY: Int) throws(EncodeError) -> String {
        guard componentRange.contains(componentsX), componentRange.contains(componentsY) else {
            throw .componentsOutOfRange(x: componentsX, y: componentsY)
        }
        let width = Double(image.width)
        let height = Double(image.height)
        let linearTable = (0..<256).map { srgbToLinear(Int($0)) }
        let linear = image.pixels.map { linearTable[Int($0)] }
        var components: [(Double, Double, Double)] = []
        var maxAC = 0.0
        for j in 0..<componentsY {
            let cosY = (0..<image.height).map { cos(Double.pi * Double(j) * Double($0) / height) }
            for i in 0..<componentsX {
                let cosX = (0..<image.width).map { cos(Double.pi * Double(i) * Double($0) / width) }
                let norm = (i == 0 && j == 0) ? 1.0 : 2.0
                var component = (0.0, 0.0, 0.0)
                for y in 0..<image.height {
                    for x in 0..<image.width {
                        let basis = norm * cosX[x] * cosY[y]
                        let p = (y * image.width + x) * 3
                        component.0 += basis * linear[p]
                        component.1 += basis * linear[p + 1]
                        component.2 += basis * linear[p + 2]
                    }
                }
                let scale = width * height
                component = (component.0 / scale, component.1 / scale, component.2 / scale)
                components.append(component)
                if !(i == 0 && j == 0) {
                    maxAC = max(maxAC, abs(component.0), abs(component.1), abs(component.2))
                }
            }
        }
        let dc = components[0]
        let dcValue = (linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2)
        let quantisedMaxAC = Int(max(0, min(82, (maxAC * 166 - 0.5).rounded(.down))))
        let acNorm = Double(quantisedMaxAC + 1) / 166.0
        func quantise(_ value: Double) -> Int {
            Int(max(0.0, min(18.0, (signPow(value / acNorm, 0.5) * 9.0 + 9.5).rounded(.down))))
        }
        var hash = base83((componentsX - 1) + (componentsY - 1) * 9, length: 1)
        hash += base83(quantisedMaxAC, length: 1)
        hash += base83(dcValue, length: 4)
        for component in components.dropFirst() {
            hash += base83(quantise(component.0) * 19 * 19 + quantise(component.1) * 19 + quantise(component.2), length: 2)
        }
        return hash
    }

    static func srgbToLinear(_ value: Int) -> Double {
        let v = Double(value) / 255.0
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0.0, min(1.0, value))
        if v <= 0.0031308 { return Int(v * 12.92 * 255 + 0.5) }
        return Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signPow(_ value: Double, _ exponent: Double) -> Double {
        copysign(pow(abs(value), exponent), value)
    }

    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    static func base83(_ value: Int, length: Int) -> String {
        var bytes: [UInt8] = []
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            bytes.append(alphabet[(value / divisor) % 83])
            divisor /= 83
            if divisor == 0 { divisor = 1 }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
