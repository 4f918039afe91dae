import GifPackTransport

extension AWSSignature {
    /// curl's provider string: `aws:amz:REGION:SERVICE`.
    var curlProvider: String { "aws:amz:\(region):\(service)" }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a positive duration never becomes zero ("no limit").
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let millis = attoseconds / 1_000_000_000_000_000
        let rest = attoseconds % 1_000_000_000_000_000
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int.max }
        return Int(total.partialValue + millis + (rest > 0 ? 1 : 0))
    }

    /// Whole seconds, rounded up, at least one.
    var curlWholeSeconds: Int {
        max(1, (curlMilliseconds + 999) / 1000)
    }
}
