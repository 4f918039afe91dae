import Glibc

/// Dedicated POSIX threads for the server's blocking socket calls, which must never run on
/// Swift's cooperative pool. Unlike Foundation's `Thread`, a pthread can be joined.
///
/// ```swift
/// let thread = try ServerThread.spawn { acceptLoop() }
/// ServerThread.join(thread)
/// ```
enum ServerThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread; a detached thread cannot be joined and frees itself.
    static func spawn(detached: Bool = false, _ body: @escaping @Sendable () -> Void) throws(FixtureError) -> pthread_t {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(run: body)).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw .threadStartFailed(errno: result)
        }
        if detached { pthread_detach(thread) }
        return thread
    }

    static func join(_ thread: pthread_t) {
        pthread_join(thread, nil)
    }
}
