import CCurl

/// URL checks made with curl's own URL parser, so that they agree with what curl will request.
enum CurlURL {
    /// True for an absolute http(s) URL that curl's URL parser accepts.
    static func isValid(_ url: String) -> Bool {
        let scheme = url.prefix(8).lowercased()
        guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://") else { return false }
        return Origin(url) != nil
    }

    /// Scheme, host and port (the default port filled in), lowercased: two URLs with equal origins
    /// reach the same server.
    struct Origin: Equatable {
        var scheme: String
        var host: String
        var port: String

        init?(_ url: String) {
            guard let handle = curl_url() else { return nil }
            defer { curl_url_cleanup(handle) }
            guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
            func part(_ which: CURLUPart, flags: Int32 = 0) -> String? {
                var value: UnsafeMutablePointer<CChar>?
                guard curl_url_get(handle, which, &value, UInt32(flags)) == CURLUE_OK, let value else { return nil }
                defer { curl_free(value) }
                return String(cString: value).lowercased()
            }
            guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST),
                let port = part(CURLUPART_PORT, flags: CURLU_DEFAULT_PORT)
            else { return nil }
            self.scheme = scheme
            self.host = host
            self.port = port
        }
    }
}
