import CCurl

/// How ``HTTPClient`` follows redirects itself instead of letting curl do it.
///
/// curl's `CURLOPT_FOLLOWLOCATION` sends every custom request header to every host a redirect
/// names, which would hand the API key to a third party. So curl never follows: a 3xx with a
/// `Location` on a request that asked to follow is recognised when its head ends, its body is
/// thrown away, and the client requests the URL curl resolved (`CURLINFO_REDIRECT_URL`) with
/// ``request(following:to:)``: the same request, its headers kept only while the origin stays
/// the same.
enum RedirectPolicy {
    static let maxRedirects = 5
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// True when a response head with this status and headers is a redirect to follow.
    static func follows(status: Int, headers: HTTPHeaders, request: HTTPRequest) -> Bool {
        request.followRedirects && statuses.contains(status) && headers.contains(name: "Location")
    }

    /// The error once more than ``maxRedirects`` redirects were followed (curl's own code for it).
    static func tooManyRedirects(last url: String) -> HTTPError {
        .transport(code: Int(CURLE_TOO_MANY_REDIRECTS.rawValue), message: "more than \(maxRedirects) redirects, the last to \(url)")
    }

    /// The request for the next hop: same options, the new URL, and no header at all when the
    /// origin (scheme, host, port) changes.
    static func request(following request: HTTPRequest, to url: String) -> HTTPRequest {
        var next = request
        next.url = url
        // Admitted once: its hops are part of the request. Their answers are still told.
        next.admission = request.admission?.answersOnly
        let from = CurlURL.Origin(request.url)
        if from == nil || from != CurlURL.Origin(url) { next.headers = HTTPHeaders() }
        return next
    }
}
