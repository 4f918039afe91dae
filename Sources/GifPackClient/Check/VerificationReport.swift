import GifPackIndexReader
/// The outcome of ``PackVerifier``: how much was checked and every problem found.
///
/// ```swift
/// let report = PackVerifier.verifyDirectory("dist")
/// for problem in report.problems { print(problem) }
/// exit(report.isOK ? 0 : 1)
/// ```
package struct VerificationReport: Sendable, Equatable {
    /// Pack files examined.
    package var packs: Int = 0
    /// GIF entries read, hashed and decoded.
    package var gifs: Int = 0
    /// zstd frames walked.
    package var frames: Int = 0
    /// Everything wrong, in the order found.
    package var problems: [PackRejection] = []
    /// With trusted keys: why the index itself was refused (then no pack was examined).
    package var indexRefusal: IndexRefusal?

    package init() {}

    package var isOK: Bool { problems.isEmpty && indexRefusal == nil }
}
