import Foundation
import GifPackIndexReader
import GifPackSystem
import GifPackTransport
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a failed ``GIFLoader`` call means for the screen that asked: the few answers a cell or a
/// refresh button acts on: a ``GIFLoaderError``'s ``GIFLoaderError/kind``, or what any other error
/// (``HTTPError``, `URLError`, `CancellationError`, …) means. Show `error.localizedDescription` for the detail;
/// switch on this to decide what to show and whether to try again.
///
/// ```swift
/// do { cell.show(try await loader.gif(for: id)) } catch {
///     switch GIFLoadFailure(error) {
///     case .cancelled: break                                  // the cell went off screen
///     case .offline: cell.showPlaceholder(retryWhenOnline: true)
///     case .serverRefused, .notTrusted, .other: cell.showPlaceholder(retryWhenOnline: false)
///     case .noSpace: cell.showPlaceholder(retryWhenOnline: false); storageBanner.show()
///     }
/// }
/// ```
public enum GIFLoadFailure: Sendable, Equatable, CaseIterable {
    /// The network is down or the server cannot be reached: the connection was refused or reset,
    /// a host name did not resolve, a request timed out or its body broke off. Try again when
    /// the network is back (what was installed or cached still answers).
    case offline
    /// The server answered, with an error status (`404`, `403`, `500`, …) or in a way the client
    /// cannot use (it ignores ranges): a retry now gets the same answer. Try again after the next
    /// refresh, or give up.
    case serverRefused
    /// What came is not what the publisher signed or described: a signature that does not verify,
    /// an index older than the installed one or expired, a pack or GIF whose bytes do not hash to
    /// the index's. Nothing of it was used; do not retry until the index changes.
    case notTrusted
    /// The disk (or the app's quota) is full: nothing was installed or cached. Free space first.
    case noSpace
    /// The caller's task was cancelled (the cell went off screen, the refresh was stopped): show
    /// nothing.
    case cancelled
    /// Anything else (a bad argument, a damaged cache folder, an index of a newer format): show
    /// the error's `localizedDescription`; retrying will not help.
    case other

    /// What `error` means for the caller. Errors the client wraps are looked through:
    /// `PackClientError.transfer(url:_:)` is its ``HTTPError``'s kind.
    public init(_ error: any Error) {
        switch error {
        case is CancellationError: self = .cancelled
        case let error as GIFLoaderError: self = error.kind
        case let error as PackClientError: self = Self.kind(of: error)
        case let error as HTTPError: self = Self.kind(of: error)
        case is IndexRefusal, is PackRejection, is MinisignError: self = .notTrusted
        case let error as FileSystemError: self = Errno(error.errno).meansDiskFull ? .noSpace : .other
        case let error as URLError: self = Self.kind(of: error.code)
        case let error as CocoaError where error.code == .fileWriteOutOfSpace: self = .noSpace
        case let error as POSIXError where Errno(error.code.rawValue).meansDiskFull: self = .noSpace
        default: self = .other
        }
    }

    private static func kind(of error: PackClientError) -> GIFLoadFailure {
        switch error {
        case .cancelled: .cancelled
        case .transfer(_, let failure): kind(of: failure)
        case .untrusted, .rejected: .notTrusted
        case .fileSystem(_, _, let code): Errno(code).meansDiskFull ? .noSpace : .other
        case .unreadable: error.answeredStatus != nil ? .serverRefused : .other
        case .index, .notRegularFile, .cacheNotManaged, .cacheLocked, .unknownPack, .unknownExercise, .noGIF, .noPosters: .other
        }
    }

    private static func kind(of error: HTTPError) -> GIFLoadFailure {
        switch error {
        case .cancelled: .cancelled
        case .connectFailed, .timedOut, .connectionReset, .truncated: .offline
        case .fileError(_, let code): Errno(code).meansDiskFull ? .noSpace : .other
        case .transport(HTTPError.rangeNotHonouredCode, _): .serverRefused
        // URLSessionTransport's codes are URLError's (the initializer is failable in FoundationNetworking only).
        case .transport(let code, _) where code < 0: kind(of: URLError.Code(rawValue: code))
        case .invalidURL, .bodyTooLarge, .notRegularFile, .notAdmitted, .headersTooLarge, .transport: .other
        }
    }

    private static func kind(of code: URLError.Code?) -> GIFLoadFailure {
        guard let code else { return .other }
        return switch code {
        case .cancelled: .cancelled
        case .notConnectedToInternet, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
            .timedOut, .internationalRoamingOff, .dataNotAllowed:
            .offline
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            .notTrusted
        default: .other
        }
    }
}
