import GifPackTransport

extension AWSSignature {
    /// curl's provider string: `aws:amz:REGION:SERVICE`.
    var curlProvider: String { "aws:amz:\(region):\(service)" }
}

extension TimeSpan {
    /// Whole milliseconds, rounded up so that a positive span never becomes zero ("no limit").
    var curlMilliseconds: Int {
        guard nanoseconds > 0 else { return 0 }
        return Int(nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0))
    }

    /// Whole seconds, rounded up, at least one.
    var curlWholeSeconds: Int {
        max(1, (curlMilliseconds + 999) / 1000)
    }

    /// The same length as `duration`, to the nanosecond (held at the ends of `Int64`): the
    /// builder's settings are `Duration`s (Linux), the transport's limits ``TimeSpan``s (iOS 15).
    package init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .seconds(Int(clamping: seconds)) + TimeSpan(nanoseconds: attoseconds / 1_000_000_000)
    }
}
