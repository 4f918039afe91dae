import ArgumentParser
import GifPackClient
import GifPackHTTP
import GifPackIndexReader

/// The transport the command-line tool hands the client library: libcurl's `HTTPClient`, for a
/// private CA (`CURL_CA_BUNDLE`, `SSL_CERT_FILE`), curl's proxy variables (`http_proxy`,
/// `https_proxy`, `no_proxy`) and its low-speed limits, the same as `build` and `publish` use.
/// Apps get `URLSessionTransport` by default instead.
enum CurlTransport {
    /// A client for `source` when it is a URL (nil for a local path: nothing goes over the network);
    /// shut it down when done. A curl that cannot start is one line and exit 1.
    static func client(for source: String, maxConnections: Int = 4) throws -> HTTPClient? {
        guard case .url = PackIndexSource(source).location else { return nil }
        do { return try HTTPClient(maxConnections: maxConnections) } catch {
            Terminal.error("gifpack: cannot start the HTTP client: \(error)")
            throw ExitCode(1)
        }
    }
}
