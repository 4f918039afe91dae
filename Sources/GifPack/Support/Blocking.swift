import Dispatch

/// Runs blocking work (file copies, fsyncs, compression) on a Dispatch thread instead of Swift's
/// cooperative pool, and awaits its result.
///
/// ```swift
/// let summary = try await Blocking.run { try assembler.finish() }
/// ```
enum Blocking {
    private static let queue = DispatchQueue(label: "gifpack.blocking", qos: .userInitiated, attributes: .concurrent)

    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
