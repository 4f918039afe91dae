import GifPackFormat
import GifPackSystem
import GifPackTransport
import Foundation

/// Why a client operation (reading an index, fetching a pack, installing, reading one GIF) failed.
///
/// Hostile or broken pack content is always ``rejected(_:)`` with a ``PackRejection`` that names
/// the reason; the other cases are about getting at the data (network, file system, arguments).
/// Every case carries the path, URL or name needed to act on it; its description never carries a
/// credential (a URL's user name and password are dropped, ``URLCredentials``).
///
/// ```swift
/// do { _ = try await PackIndexSource("https://cdn.example.com/index.json").load() }
/// catch .index(.unsupportedVersion(let version)) { print("index \(version) needs a newer app") }
/// catch { print(error) }
/// ```
package enum PackClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The index (or a pack) could not be read: a local file error or an HTTP error status.
    case unreadable(location: String, detail: String)
    /// The index is malformed or has a newer major format version.
    case index(IndexError)
    /// The transfer itself failed (connection, timeout, truncation after every retry).
    case transfer(url: String, HTTPError)
    /// The content was refused; the cache is untouched.
    case rejected(PackRejection)
    /// With trusted keys: the index is not signed by one of them, or is older than the installed one
    /// or expired; the cache is untouched.
    case untrusted(IndexRefusal)
    /// A file system call failed while staging or switching the cache.
    case fileSystem(path: String, operation: String, errno: Int32)
    /// Something other than a regular file (`kind`: "a FIFO", "a symbolic link", …) is at a path the
    /// client reads or writes: refused, nothing read or written through it.
    case notRegularFile(path: String, kind: String)
    /// The cache path exists but is not a directory installed by this library (a non-empty real
    /// directory, a file, or a symbolic link pointing elsewhere); it is left alone.
    case cacheNotManaged(path: String, detail: String)
    /// Another install holds the cache's lock.
    case cacheLocked(path: String)
    /// `--pack` named a pack the index does not have.
    case unknownPack(String, available: [String])
    /// No pack of the index lists this exercise.
    case unknownExercise(String)
    /// The exercise is listed without a GIF (show a placeholder).
    case noGIF(exercise: String)
    /// Posters were asked for, but the index gives this pack no posters pack (format before 1.2,
    /// or built with `output.posters: []`).
    case noPosters(pack: String)
    /// The install's task was cancelled before its commit point (the switch); nothing changed.
    /// ``PackInstaller/install(from:packs:client:)`` throws `CancellationError` in its place.
    case cancelled

    /// One line; every name, id, path or message that came from outside is escaped
    /// (`TerminalText`), so it cannot carry terminal control sequences, and no URL keeps its
    /// user name and password (``URLCredentials``).
    package var description: String {
        TerminalText.escaped(URLCredentials.redacted(rawDescription))
    }

    private var rawDescription: String {
        switch self {
        case let .unreadable(location, detail): "cannot read \(location): \(detail)"
        case let .index(error): error.description
        case let .transfer(url, error): "download of \(url) failed: \(error)"
        case let .rejected(rejection): "refused: \(rejection)"
        case let .untrusted(refusal): "refused: \(refusal)"
        case let .fileSystem(path, operation, code):
            "\(operation) \(path): \(SystemCalls.errorText(code)) (errno \(code))"
        case let .notRegularFile(path, kind):
            "\(path) is not a regular file (\(kind)): refused, gifpack opens only regular files and never through a symbolic link"
        case let .cacheNotManaged(path, detail): "\(path) is not a gifpack cache: \(detail)"
        case let .cacheLocked(path): "another install is running on \(path)"
        case let .unknownPack(name, available):
            "the index has no pack named \(name) (packs: \(available.joined(separator: ", ")))"
        case let .unknownExercise(id): "no pack lists exercise \(id)"
        case let .noGIF(id): "exercise \(id) has no GIF (show a placeholder)"
        case let .noPosters(pack):
            "the index gives pack \(pack) no posters pack (format before 1.2, or built with output.posters: []); install without --with-posters"
        case .cancelled: "the install was cancelled; the cache is as it was"
        }
    }

    package static func posix(_ path: String, _ operation: String, _ code: Int32 = Errno.current.code) -> PackClientError {
        .fileSystem(path: path, operation: operation, errno: code)
    }

    /// `location` answered an HTTP error status (`404`, `403`, `500`, …), `context` saying for what:
    /// the one wording ``answeredStatus`` reads back.
    package static func status(_ status: Int, of location: String, context: String = "") -> PackClientError {
        .unreadable(location: location, detail: "\(statusPrefix)\(status)\(context)")
    }

    /// The HTTP status the server answered, when that status is why the call failed
    /// (``unreadable(location:detail:)`` of an index, a pack or a range answered `404`, `403`,
    /// `500`, …; a range answered `200` by a server that ignores ranges); nil otherwise.
    package var answeredStatus: Int? {
        guard case .unreadable(_, let detail) = self else { return nil }
        if detail.hasPrefix(Self.rangesIgnoredDetail) { return 200 }
        guard detail.hasPrefix(Self.statusPrefix) else { return nil }
        return Int(detail.dropFirst(Self.statusPrefix.count).prefix { $0.isNumber })
    }

    private static let statusPrefix = "HTTP status "

    /// How a failure because the server answered a range request with the whole file starts.
    package static let rangesIgnoredDetail = "the server ignores Range requests (it answered 200)"

    /// A `304 Not Modified` answering a request for `location` that carried no validators of its.
    package static func unconditionalNotModified(_ location: String) -> PackClientError {
        .unreadable(location: location, detail: "the server answered 304 Not Modified to a request that was not conditional")
    }
}
