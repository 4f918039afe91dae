import Foundation

/// Runs blocking work (file I/O, decompression, fsync) on a dedicated thread and awaits it, so
/// Swift's cooperative pool never blocks.
///
/// ```swift
/// let report = try await BlockingWork.run("gifpack.install") { () throws(PackClientError) in try install() }
/// ```
enum BlockingWork {
    static func run<T: Sendable>(_ name: String,
                                 _ body: @escaping @Sendable () throws(PackClientError) -> T) async throws(PackClientError) -> T {
        let result: Result<T, PackClientError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Result { () throws(PackClientError) -> T in try body() })
            }
            thread.name = name
            thread.start()
        }
        return try result.get()
    }
}

extension BlockingWork {
    /// Like ``run(_:_:)`` but hands back the outcome instead of throwing it.
    static func result<T: Sendable>(_ name: String,
                                    _ body: @escaping @Sendable () throws(PackClientError) -> T) async -> Result<T, PackClientError> {
        do { return .success(try await run(name, body)) } catch { return .failure(error) }
    }
}
