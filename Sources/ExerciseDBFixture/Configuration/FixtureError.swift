import Glibc

/// Why a fixture server could not be built or started, with what a user needs to fix it.
///
/// ```swift
/// do { try server.start() } catch { print(error) } // e.g. "bind 127.0.0.1:80 failed: Permission denied"
/// ```
package enum FixtureError: Error, Equatable, CustomStringConvertible {
    /// A configuration field holds a value the server cannot work with.
    case invalidConfiguration(field: String, reason: String)
    /// A file of the real-data folder is missing or malformed.
    case realDataUnreadable(path: String, reason: String)
    /// The GIF synthesizer rejected the parameters for an exercise's GIF.
    case gifSynthesisFailed(exerciseID: String, reason: String)
    /// A socket call failed; `errno` is the C error number.
    case socketFailed(operation: String, errno: Int32)
    /// A server thread could not be created.
    case threadStartFailed(errno: Int32)
    /// ``FixtureServer/start()`` was called on a running server.
    case alreadyRunning

    package var description: String {
        switch self {
        case let .invalidConfiguration(field, reason):
            return "invalid fixture configuration \(field): \(reason)"
        case let .realDataUnreadable(path, reason):
            return "cannot read real data \(path): \(reason)"
        case let .gifSynthesisFailed(exerciseID, reason):
            return "cannot synthesize the GIF of exercise \(exerciseID): \(reason)"
        case let .socketFailed(operation, code):
            return "\(operation) failed: \(String(cString: strerror(code)))"
        case let .threadStartFailed(code):
            return "cannot start a server thread: \(String(cString: strerror(code)))"
        case .alreadyRunning:
            return "the fixture server is already running"
        }
    }
}
