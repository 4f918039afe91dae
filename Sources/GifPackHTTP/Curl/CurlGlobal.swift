import CCurl

/// `curl_global_init`, run exactly once per process before the first multi handle is made
/// (a `static let` initialiser runs once, thread-safely).
enum CurlGlobal {
    static let initialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    static func ensureInitialized() throws(HTTPError) {
        let code = initialization
        guard code == CURLE_OK else {
            throw .transport(code: Int(code.rawValue), message: "curl_global_init failed: \(String(cString: curl_easy_strerror(code)))")
        }
    }
}
