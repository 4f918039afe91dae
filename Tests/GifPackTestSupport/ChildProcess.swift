import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A child process the tests start with `posix_spawn`, instead of Foundation's `Process`.
///
/// `Process.run()` on Linux (swift-corelibs-foundation in Swift 6.3) now and then crashes the whole
/// test process: to find the descriptors to close in the child it copies each `/proc/self/fd`
/// entry's 256-byte `d_name` whole, reading past the end of glibc's directory buffer, which faults
/// when the next page is unmapped (swift-corelibs-foundation pull request 5472; AddressSanitizer
/// shows the same over-read). This type closes every descriptor above 2 in the child with
/// `posix_spawn_file_actions_addclosefrom_np` instead, and sends standard input, output and error to
/// `/dev/null` or to files, never to pipes (so no reader can deadlock).
///
/// Waiting is async only (``exitStatus()``, on a thread of its own): a test that waits for a child
/// never holds one of the cooperative pool's threads (two on these machines), so a synchronous
/// test cannot start and wait for a process (TestHygieneTests keeps it so).
///
/// ```swift
/// let child = try ChildProcess("/usr/bin/zstd", ["-t", path], stdout: .file(outPath))
/// let status = await child.exitStatus()   // 0
/// ```
final class ChildProcess: @unchecked Sendable {
    /// Where one of the standard streams goes.
    enum Stream {
        case null
        /// A file, created or truncated (or appended to).
        case file(String, append: Bool = false)
    }

    let processIdentifier: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` (an absolute path) with `arguments`; `environment` nil inherits this
    /// process's environment. The child starts with no signal blocked and every signal at its default.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, currentDirectory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream, input) in [(Int32(0), stdin, true), (1, stdout, false), (2, stderr, false)] {
            let (path, flags): (String, Int32) =
                switch stream {
                case .null: ("/dev/null", input ? O_RDONLY : O_WRONLY)
                case .file(let path, let append): (path, input ? O_RDONLY : O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC))
                }
            guard posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o644) == 0 else {
                throw ChildProcessError("cannot redirect descriptor \(fd) to \(path)")
            }
        }
        guard Self.closeFrom(&actions, 3) == 0 else { throw ChildProcessError("posix_spawn_file_actions_addclosefrom_np failed") }
        if let currentDirectory, Self.changeDirectory(&actions, currentDirectory) != 0 {
            throw ChildProcessError("cannot change directory to \(currentDirectory)")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let pairs = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = pairs.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(result)))") }
        processIdentifier = pid
    }

    /// False once the child has exited (its status is then kept). Does not block.
    var isRunning: Bool {
        lock.withLock {
            if status != nil { return false }
            var raw: Int32 = 0
            let waited = waitpid(processIdentifier, &raw, WNOHANG)
            if waited == processIdentifier { status = Self.decode(raw) }
            return status == nil && waited == 0
        }
    }

    /// Waits for the child on a thread of its own, never on the cooperative pool, and returns its exit
    /// status (128 + the signal when a signal ended it). When the waiting task is cancelled (a test's
    /// time limit) the child is killed, so the wait ends.
    func exitStatus() async -> Int32 {
        if let status = lock.withLock({ status }) { return status }
        return await withTaskCancellationHandler {
            await onAThreadOfItsOwn("gifpack.test-wait") { [self] in reap() }
        } onCancel: {
            signal(SIGKILL)
        }
    }

    /// Sends `signal` (SIGTERM by default) unless the child has already been reaped (its process id
    /// may then belong to another process).
    func signal(_ signal: Int32 = SIGTERM) {
        lock.withLock {
            if status == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Sends SIGTERM.
    func terminate() { signal(SIGTERM) }

    /// SIGKILL, then reaps the child: for `stop()` and `deinit` of the servers, which cannot await.
    /// SIGKILL cannot be blocked or caught, so the wait is only the kernel tearing the process down.
    func killAndReap() {
        signal(SIGKILL)
        _ = reap()
    }

    /// Blocks until the child has exited, then reaps it. The wait (`waitid` with `WNOWAIT`) holds no
    /// lock and leaves the child a zombie, so ``signal(_:)`` can still reach it (its process id is not
    /// reused before the reap); the reap under the lock then cannot block.
    private func reap() -> Int32 {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        return lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            while waitpid(processIdentifier, &raw, 0) == -1, errno == EINTR {}
            let decoded = Self.decode(raw)
            status = decoded
            return decoded
        }
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }

    // glibc's `_np` spawn actions are declared only under _GNU_SOURCE, which Swift's Glibc module
    // does not define: they are looked up by name.
    private typealias FileAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias DirectoryAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static func closeFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ fd: Int32) -> Int32 {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return -1 }
        return unsafeBitCast(symbol, to: FileAction.self)(actions, fd)
    }

    private static func changeDirectory(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return -1 }
        return path.withCString { unsafeBitCast(symbol, to: DirectoryAction.self)(actions, $0) }
    }
}

struct ChildProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
