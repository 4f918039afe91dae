/// The outcome of ``PackVerifier``: how much was checked and every problem found.
///
/// ```swift
/// let report = PackVerifier.verifyDirectory("dist")
/// for problem in report.problems { print(problem) }
/// exit(report.isOK ? 0 : 1)
/// ```
public struct VerificationReport: Sendable, Equatable {
    /// Pack files examined.
    public var packs: Int = 0
    /// GIF entries read, hashed and decoded.
    public var gifs: Int = 0
    /// zstd frames walked.
    public var frames: Int = 0
    /// Everything wrong, in the order found.
    public var problems: [PackRejection] = []
    /// With trusted keys: why the index itself was refused (then no pack was examined).
    public var indexRefusal: IndexRefusal?

    public init() {}

    public var isOK: Bool { problems.isEmpty && indexRefusal == nil }
}
