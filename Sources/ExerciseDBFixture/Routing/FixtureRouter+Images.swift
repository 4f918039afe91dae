import GIFSynthesis
import GifPackGIF

extension FixtureRouter {
    /// `GET /image?exerciseId=&resolution=`: quota, then parameters (422), then the id (404),
    /// then faults, then the GIF (or 304).
    func rapidAPIImage(_ request: HTTPRequest) -> HTTPResponse {
        guard state.spendQuota() else { return FixtureRouter.json(429, GatewayBodies.monthlyQuotaExceeded) }
        guard let id = request.query["exerciseId"], (1...6).contains(id.count), id.allSatisfy(\.isASCII),
              id.allSatisfy(\.isNumber) else {
            return FixtureRouter.json(422, GatewayBodies.message("exerciseId must be a numeric exercise id"))
        }
        guard let resolution = request.query["resolution"].flatMap({ Int($0) }),
              FixtureCatalog.resolutions.contains(resolution) else {
            return FixtureRouter.json(422, GatewayBodies.message("resolution must be one of 180, 360, 720, 1080"))
        }
        let catalog = state.catalog
        guard catalog.isRapidID(id) else { return FixtureRouter.json(404, GatewayBodies.forStatus(404)) }
        return gifResponse(id: id, resolution: resolution, catalog: catalog, request: request)
    }

    /// `GET /media/<v1 id>.gif`: the GIF at 180.
    func v1Media(id: String, request: HTTPRequest) -> HTTPResponse {
        let catalog = state.catalog
        guard catalog.isV1ID(id) else { return FixtureRouter.json(404, GatewayBodies.forStatus(404)) }
        return gifResponse(id: id, resolution: FixtureCatalog.baseResolution, catalog: catalog, request: request)
    }

    private func gifResponse(
        id: String, resolution: Int, catalog: FixtureCatalog, request: HTTPRequest
    ) -> HTTPResponse {
        let fault = faults.next(for: catalog.canonicalID(id))
        if let fault, let response = response(for: fault, id: id) { return response }
        guard let gif = catalog.servedGIF(id: id, resolution: resolution) else {
            return FixtureRouter.json(500, GatewayBodies.forStatus(500))
        }
        if ConditionalRequest.isNotModified(request, etag: gif.etag, lastModified: gif.lastModified) {
            var response = HTTPResponse(status: 304)
            addValidators(of: gif, to: &response)
            return response
        }
        var response = HTTPResponse(status: 200, contentType: "image/gif", body: gif.bytes)
        addValidators(of: gif, to: &response)
        switch fault {
        case .wrongContentType?:
            response.setHeader("Content-Type", "application/octet-stream")
        case .truncatedBody?:
            response.delivery = .truncated(bodyBytes: gif.bytes.count / 2)
        case .slowBody(let rate)?:
            response.delivery = .dripped(bytesPerSecond: max(1, rate))
        case .corruptFrame?:
            response = HTTPResponse(
                status: 200, contentType: "image/gif",
                body: GIFCorruptor.placingFirstFrameOffScreen(gif.bytes) ?? gif.bytes)
        case .hugeHeader(let bytes)?:
            response.addHeader("X-Padding", String(repeating: "a", count: max(0, bytes)))
        default:
            break
        }
        return response
    }

    /// The whole response of a fault that replaces the GIF; nil for faults that alter how the
    /// real GIF is sent (handled by the caller).
    private func response(for fault: Fault, id: String) -> HTTPResponse? {
        switch fault {
        case .htmlWith200:
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(
                ("<!DOCTYPE html><html><head><title>Scheduled maintenance</title></head><body>"
                    + "<h1>We'll be back soon</h1><p>The service is down for maintenance.</p></body></html>").utf8))
        case .notAGIF:
            var random = SplitMix64(seed: id.utf8.reduce(0x504E_47) { $0 &* 31 &+ UInt64($1) })
            let noise = (0..<1016).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return HTTPResponse(status: 200, contentType: "image/gif",
                                body: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + noise)
        case .status(let status):
            return FixtureRouter.json(status, GatewayBodies.forStatus(status))
        case .tooManyRequests(let retryAfter):
            var response = FixtureRouter.json(429, GatewayBodies.rateLimited)
            switch retryAfter {
            case .seconds(let seconds)?: response.addHeader("Retry-After", String(seconds))
            case .httpDate(let seconds)?: response.addHeader("Retry-After", HTTPDate.format(HTTPDate.now() + seconds))
            case nil: break
            }
            return response
        case .monthlyQuotaExceeded:
            return FixtureRouter.json(429, GatewayBodies.monthlyQuotaExceeded)
        case .connectionReset:
            var response = HTTPResponse(status: 0)
            response.delivery = .reset
            return response
        case .wrongContentType, .truncatedBody, .slowBody, .corruptFrame, .hugeHeader:
            return nil
        }
    }

    private func addValidators(of gif: ServedGIF, to response: inout HTTPResponse) {
        response.addHeader("ETag", gif.etag)
        response.addHeader("Last-Modified", HTTPDate.format(gif.lastModified))
        response.addHeader("Cache-Control", "public, max-age=86400")
    }
}
