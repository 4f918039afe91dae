/// Where a transfer's body goes. Every method is called on the loop thread only, while the
/// transfer runs; the caller reads the results after the transfer's continuation was resumed.
protocol BodySink: AnyObject, Sendable {
    /// The most body bytes this request may deliver.
    var maxBytes: Int64 { get }
    /// Prepares to receive the body (opens the file).
    func open() throws(HTTPError)
    /// Takes one chunk; returns the error that must abort the transfer, or nil to go on.
    func write(_ bytes: UnsafeRawBufferPointer) -> HTTPError?
    /// The body's first bytes received (up to ``HTTPDownload/prefixLength``).
    var bodyPrefix: [UInt8] { get }
    /// The body bytes taken so far.
    var bodyBytes: Int64 { get }
    /// Releases what ``open()`` acquired; safe to call more than once. Returns a failure to report.
    func close() -> HTTPError?
}
