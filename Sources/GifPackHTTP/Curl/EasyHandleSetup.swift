import CCurl

/// Turns an ``HTTPRequest`` into options on a fresh (or freshly reset) easy handle.
enum EasyHandleSetup {
    static let userAgent = "gifpack-http/1 libcurl"

    /// Bytes curl reads from a socket at a time (`CURLOPT_BUFFERSIZE`; curl's default is 16 KiB).
    static let receiveBufferSize = 512 * 1024

    /// Applies every option of the request to `easy`, wiring the callbacks to `transfer`. curl never
    /// follows redirects itself (see ``RedirectPolicy``). `caFile` replaces the system's trusted
    /// certificate authorities (`CURLOPT_CAINFO`); proxies come from curl's own reading of
    /// `http_proxy`, `https_proxy` and `no_proxy`.
    static func configure(_ easy: UnsafeMutableRawPointer, for transfer: Transfer, caFile: String?) throws(HTTPError) {
        let request = transfer.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let timeouts = request.timeouts
        // The total limit, or what is left of the call's deadline when that ends first.
        var totalMilliseconds = timeouts.total.curlMilliseconds
        let now = TimeSpan.now()
        if let deadline = timeouts.deadlineInstant(from: now) {
            guard deadline > now else { throw .timedOut(timeouts.deadlineMessage(for: request.url)) }
            let left = TimeSpan(nanoseconds: Int64(clamping: deadline - now)).curlMilliseconds
            if totalMilliseconds == 0 || left < totalMilliseconds {
                totalMilliseconds = left
                transfer.deadline = deadline
            }
        }
        var codes: [CURLcode] = [
            gp_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(transfer.errorBuffer)),
            gp_easy_setopt_string(easy, CURLOPT_URL, request.url),
            gp_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"),
            gp_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1),
            gp_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)),
            gp_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1),
            gp_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1),
            gp_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, Self.receiveBufferSize),
            gp_easy_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1),
            gp_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0),
            gp_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, timeouts.connect.curlMilliseconds),
            gp_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, totalMilliseconds),
            gp_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, max(0, timeouts.lowSpeedBytesPerSecond)),
            gp_easy_setopt_long(
                easy, CURLOPT_LOW_SPEED_TIME,
                timeouts.lowSpeedBytesPerSecond > 0 ? timeouts.lowSpeedWindow.curlWholeSeconds : 0),
            gp_easy_setopt_data_cb(easy, CURLOPT_WRITEFUNCTION, curlBodyCallback),
            gp_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context),
            gp_easy_setopt_data_cb(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback),
            gp_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        ]
        if let caFile {
            codes.append(gp_easy_setopt_string(easy, CURLOPT_CAINFO, caFile))
        }
        if request.acceptCompressedBody {
            codes.append(gp_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""))
        }
        if let range = request.byteRange {
            // No CURLOPT_MAXFILESIZE here: a 200 announcing the whole file would fail on its
            // Content-Length before its head could be handed back; the sink's cap still holds.
            codes.append(gp_easy_setopt_string(easy, CURLOPT_RANGE, "\(range.lowerBound)-\(range.upperBound)"))
        } else if let offset = request.resumeFrom, offset > 0 {
            codes.append(gp_easy_setopt_off(easy, CURLOPT_RESUME_FROM_LARGE, curl_off_t(offset)))
        } else {
            // An early refusal when Content-Length already exceeds the cap; the write callback
            // enforces the cap for bodies without a length.
            codes.append(gp_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(0, transfer.sink.maxBytes))))
        }
        if !request.headers.contains(name: "User-Agent") {
            codes.append(gp_easy_setopt_string(easy, CURLOPT_USERAGENT, userAgent))
        }
        codes += try methodOptions(easy, for: transfer, context: context)
        var headers = request.headers
        if let encoding = HTTPContentCoding.acceptEncoding(for: request) {
            // A file's own bytes, as URLSessionTransport asks for them (no field would mean "any coding").
            headers.append(name: "Accept-Encoding", value: encoding)
        }
        transfer.headerList = try headerList(for: headers)
        if request.method == .put && request.awsSignature == nil {
            // No `Expect: 100-continue` round trip before a body. Not for signed requests: curl
            // 7.88's SigV4 signs the empty `Expect:` line it then does not send (S3 answers
            // SignatureDoesNotMatch), so those keep curl's own Expect, which is not signed.
            transfer.headerList = curl_slist_append(transfer.headerList, "Expect:")
        }
        if let list = transfer.headerList {
            codes.append(gp_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list))
        }
        if let failed = codes.first(where: { $0 != CURLE_OK }) {
            throw .transport(code: Int(failed.rawValue), message: String(cString: curl_easy_strerror(failed)))
        }
    }

    /// HEAD, PUT (with its streamed body) and DELETE, and AWS SigV4 signing.
    private static func methodOptions(
        _ easy: UnsafeMutableRawPointer, for transfer: Transfer,
        context: UnsafeMutableRawPointer
    ) throws(HTTPError) -> [CURLcode] {
        let request = transfer.request
        var codes: [CURLcode] = []
        switch request.method {
        case .get: break
        case .head: codes.append(gp_easy_setopt_long(easy, CURLOPT_NOBODY, 1))
        case .delete: codes.append(gp_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, "DELETE"))
        case .put:
            guard let upload = transfer.upload else {
                throw .transport(code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue), message: "a PUT needs a body")
            }
            try upload.open()
            codes += [
                gp_easy_setopt_long(easy, CURLOPT_UPLOAD, 1),
                gp_easy_setopt_data_cb(easy, CURLOPT_READFUNCTION, curlReadCallback),
                gp_easy_setopt_pointer(easy, CURLOPT_READDATA, context),
                gp_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(upload.length))
            ]
        }
        if let signature = request.awsSignature {
            codes += [
                gp_easy_setopt_string(easy, CURLOPT_AWS_SIGV4, signature.curlProvider),
                gp_easy_setopt_string(easy, CURLOPT_USERNAME, signature.accessKeyID),
                gp_easy_setopt_string(easy, CURLOPT_PASSWORD, signature.secretAccessKey)
            ]
        }
        return codes
    }

    /// The request headers as curl wants them. A field with an empty value is sent as `Name;`
    /// (curl reads `Name:` as "remove this header"). Names and values holding line breaks are
    /// refused, naming the field but never showing its value.
    static func headerList(for headers: HTTPHeaders) throws(HTTPError) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers {
            let nameIsToken = !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
            let valueIsClean = !value.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 }
            guard nameIsToken, valueIsClean else {
                if let list { curl_slist_free_all(list) }
                let shownName = nameIsToken ? name : String(name.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 }.prefix(40))
                throw .transport(
                    code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue),
                    message: "request header \"\(shownName)\" holds a control character or an invalid name")
            }
            let line = value.isEmpty ? "\(name);" : "\(name): \(value)"
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "out of memory building the request headers")
            }
            list = appended
        }
        return list
    }
}
