import Foundation
import GifPackSystemBuilder
import Yams

/// Reads and validates a manifest. Every problem is reported with its key path before any network
/// traffic: unknown keys, wrong types, bad values, and an API key variable that is not set.
///
/// ```swift
/// let manifest = try ManifestLoader().load(path: "manifests/exercisedb.yaml",
///                                          environment: ProcessInfo.processInfo.environment)
/// ```
package struct ManifestLoader: Sendable {
    /// When false, a RapidAPI manifest whose key variable is unset still loads (with no key):
    /// for commands that send no request, such as `gifpack prune`.
    package var requiresAPIKey: Bool
    /// When false, the `signing` block is checked (its keys, one key source, the variable's name,
    /// `expires_after`) but the secret key is not read and ``Manifest/signing`` is nil: for commands
    /// that never sign, such as `gifpack prune`, which then run without the key file or variable.
    package var readsSigningKey: Bool

    package init(requiresAPIKey: Bool = true, readsSigningKey: Bool = true) {
        self.requiresAPIKey = requiresAPIKey
        self.readsSigningKey = readsSigningKey
    }

    /// Reads the manifest at `path`. Its relative paths are resolved against the manifest's own
    /// folder (see ``Manifest/resolvePaths(against:)``) and `fetch.ca_file` must be readable.
    package func load(path: String, environment: [String: String]) throws(ManifestError) -> Manifest {
        let text = try Self.readText(path)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var manifest = try parse(text, environment: environment, folder: folder)
        manifest.resolvePaths(against: folder)
        if let caFile = manifest.fetch.caFile, !SystemCalls.canRead(caFile) {
            throw .invalidValue(path: "fetch.ca_file", reason: "cannot read \(caFile): \(SystemCalls.errorText(Errno.current.code))")
        }
        return manifest
    }

    /// The manifest's text, or why it cannot be had, with the system's words (`Is a directory`,
    /// `No such file or directory`, `Permission denied`). Read as ``OperatorFile`` reads what an
    /// operator names: through links (a mounted config map), from a pipe, at most 4 MiB.
    private static func readText(_ path: String) throws(ManifestError) -> String {
        let bytes: [UInt8]
        do { bytes = try OperatorFile.read(path, limit: OperatorFile.manifestLimit) } catch {
            if case .notAFile(let kind) = error, kind == FileType.directory.words {
                throw .unreadable(path: path, reason: "it is a directory; name the manifest file (e.g. \(path)/exercisedb.yaml)")
            }
            throw .unreadable(path: path, reason: error.description)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .unreadable(path: path, reason: "not UTF-8 text") }
        return text
    }

    /// `folder`: where a relative `signing.secret_key_file` is (the manifest's folder); nil: the working directory.
    package func parse(_ text: String, environment: [String: String], folder: String? = nil) throws(ManifestError) -> Manifest {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else { throw ManifestError.syntax("the manifest is empty") }
            root = node
        } catch let error as ManifestError {
            throw error
        } catch {
            throw .syntax(String(describing: error))
        }
        let top = try ManifestNode(node: root, path: "").mapping(allowed: ["version", "source", "fetch", "packs", "output", "cache", "signing"])
        if let version = top["version"] {
            _ = try version.int(in: 1...1)
        }
        guard let sourceNode = top["source"] else { throw .missingKey(path: "source") }
        let source = try parseSource(sourceNode, environment: environment)
        let fetch = try top["fetch"].map { node throws(ManifestError) in try parseFetch(node) } ?? FetchSettings()
        var packs = try top["packs"].map { node throws(ManifestError) in try parsePacks(node, source: source) } ?? []
        if packs.isEmpty { packs = [PackSpec(name: "all", selector: Selector())] }
        let output = try top["output"].map { node throws(ManifestError) in try parseOutput(node) } ?? OutputSettings()
        let cache = try top["cache"].map { node throws(ManifestError) in try parseCache(node) } ?? CacheSettings()
        let signing = try top["signing"].flatMap { node throws(ManifestError) in try parseSigning(node, environment: environment, folder: folder) }
        if !output.posterSizes.isEmpty,
            let clash = packs.firstIndex(where: { pack in
                packs.contains { PosterPackMaker.name(forPack: $0.name) == pack.name }
            })
        {
            throw .invalidValue(
                path: "packs[\(clash)].name",
                reason: "\"\(packs[clash].name)\" is the name of another pack's posters pack (output.posters)")
        }
        if output.makesWebP, source.resolution.pixels == nil {
            throw .invalidValue(
                path: "output.formats",
                reason: "webp needs a source with a resolution (its packs are named "
                    + "<pack>.<resolution>.webp); the exercisedb-v1 source serves one size only")
        }
        return Manifest(source: source, fetch: fetch, packs: packs, output: output, cache: cache, signing: signing)
    }

    /// Reads the secret key now, so a missing or wrong key stops the build before any traffic.
    /// Messages name the key path and the file or variable, never the key. Without
    /// ``readsSigningKey`` the block is checked and nil returned, the key left unread.
    private func parseSigning(
        _ node: ManifestNode, environment: [String: String],
        folder: String?
    ) throws(ManifestError) -> SigningSettings? {
        let keys = try node.mapping(allowed: ["secret_key_file", "secret_key_env", "expires_after"])
        let expiresAfter = try keys["expires_after"].map { n throws(ManifestError) -> Duration in
            let duration = try n.duration()
            guard duration >= .seconds(60) else {
                throw .invalidValue(path: n.path, reason: "must be at least 1m (an index that expires at once cannot be installed)")
            }
            return duration
        }
        let text: String
        let keySource: String
        let keyPath: String
        switch (keys["secret_key_file"], keys["secret_key_env"]) {
        case (let fileNode?, nil):
            var file = try nonEmptyPath(fileNode)
            guard readsSigningKey else { return nil }
            if let folder, !file.hasPrefix("/") { file = (folder.hasSuffix("/") ? folder : folder + "/") + file }
            keyPath = fileNode.path
            keySource = "file \(file)"
            let bytes: [UInt8]
            do { bytes = try OperatorFile.read(file, limit: OperatorFile.secretKeyLimit) } catch {
                let reason = error.isMissing ? "does not exist" : "cannot be read (\(error))"
                throw .invalidValue(path: keyPath, reason: "the secret key file \(file) \(reason)")
            }
            guard let decoded = String(validating: bytes, as: UTF8.self) else {
                throw .invalidValue(path: keyPath, reason: "the secret key file \(file) is not UTF-8 text")
            }
            text = decoded
        case (nil, let envNode?):
            let variable = try envNode.string()
            keyPath = envNode.path
            guard variable.range(of: "^[A-Za-z_][A-Za-z0-9_]*$", options: .regularExpression) != nil else {
                throw .invalidValue(path: keyPath, reason: "\"\(variable)\" is not an environment variable name")
            }
            guard readsSigningKey else { return nil }
            guard let value = environment[variable], !value.isEmpty else {
                throw .invalidValue(path: keyPath, reason: "the environment variable \(variable) is not set or empty: export the secret key (the text of the file gifpack keygen wrote) in it")
            }
            keySource = "environment variable \(variable)"
            text = value
        case (nil, nil):
            throw .missingKey(path: node.child("secret_key_file"))
        case (_?, _?):
            throw .invalidValue(path: node.path, reason: "give secret_key_file or secret_key_env, not both")
        }
        let secretKey: MinisignSecretKey
        do { secretKey = try MinisignSecretKey(text: text) } catch {
            throw .invalidValue(path: keyPath, reason: "the \(keySource) does not hold a usable secret key: \(error)")
        }
        var settings = SigningSettings(keySource: keySource, secretKey: secretKey)
        if let expiresAfter { settings.expiresAfter = expiresAfter }
        return settings
    }

    private func parseSource(_ node: ManifestNode, environment: [String: String]) throws(ManifestError) -> SourceSettings {
        let keys = try node.mapping(allowed: ["kind", "base_url", "api_key_env", "host_header", "resolution", "resolutions", "page_size"])
        guard let kindNode = keys["kind"] else { throw .missingKey(path: node.child("kind")) }
        let kindText = try kindNode.string()
        guard let kind = SourceKind(rawValue: kindText) else {
            throw .invalidValue(path: kindNode.path, reason: "\"\(kindText)\" is not one of \(SourceKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let defaultURL = kind == .rapidAPI ? "https://exercisedb.p.rapidapi.com" : "https://oss.exercisedb.dev/api/v1"
        let baseURL = try keys["base_url"]?.string() ?? defaultURL
        if let urlNode = keys["base_url"] { try Self.checkHTTPURL(baseURL, path: urlNode.path) }

        var settings = SourceSettings(
            kind: kind, baseURL: baseURL, apiKeyEnvironmentVariable: nil, apiKey: nil,
            hostHeader: nil, resolutions: [.sourceDefault], pageSize: 100)
        if let pageNode = keys["page_size"] { settings.pageSize = try pageNode.int(in: 1...(kind == .v1 ? 100 : 1000)) }
        switch kind {
        case .rapidAPI:
            guard let envNode = keys["api_key_env"] else { throw .missingKey(path: node.child("api_key_env")) }
            let variable = try envNode.string()
            guard variable.range(of: "^[A-Za-z_][A-Za-z0-9_]*$", options: .regularExpression) != nil else {
                throw .invalidValue(path: envNode.path, reason: "\"\(variable)\" is not an environment variable name")
            }
            settings.apiKeyEnvironmentVariable = variable
            if let key = environment[variable], !key.isEmpty {
                settings.apiKey = APIKey(key)
            } else if requiresAPIKey {
                throw .missingEnvironmentVariable(path: envNode.path, variable: variable)
            }
            settings.hostHeader = try keys["host_header"]?.string() ?? URLComponents(string: baseURL)?.host
            settings.resolutions = try parseResolutions(keys, in: node)
        case .v1:
            for key in ["api_key_env", "host_header", "resolution", "resolutions"] where keys[key] != nil {
                throw .invalidValue(path: node.child(key), reason: "not used by exercisedb-v1 (it needs no key and serves one resolution)")
            }
        }
        return settings
    }

    private func parseFetch(_ node: ManifestNode) throws(ManifestError) -> FetchSettings {
        let keys = try node.mapping(allowed: [
            "concurrency", "connect_timeout", "request_timeout", "low_speed_limit",
            "low_speed_time", "max_gif_bytes", "max_catalog_bytes", "max_catalog_records", "max_width",
            "max_height", "max_frames", "max_total_pixels", "max_missing", "max_removed", "retry",
            "circuit_breaker", "quota_reserve", "max_requests", "max_duration",
            "refresh_after", "missing_ttl", "ca_file"
        ])
        var fetch = FetchSettings()
        if let n = keys["concurrency"] { fetch.concurrency = try n.int(in: 1...3) }
        if let n = keys["connect_timeout"] { fetch.connectTimeout = try positive(n.duration(), n) }
        if let n = keys["request_timeout"] { fetch.requestTimeout = try positive(n.duration(), n) }
        if let n = keys["low_speed_limit"] { fetch.lowSpeedBytesPerSecond = try n.int(in: 0...1_000_000_000) }
        if let n = keys["low_speed_time"] { fetch.lowSpeedTime = try positive(n.duration(), n) }
        if let n = keys["max_gif_bytes"] { fetch.maxGIFBytes = try n.byteSize() }
        if let n = keys["max_catalog_bytes"] { fetch.maxCatalogBytes = try n.byteSize() }
        if let n = keys["max_catalog_records"] { fetch.maxCatalogRecords = try n.int(in: 1...10_000_000) }
        if let n = keys["max_width"] { fetch.maxWidth = try n.int(in: 1...65535) }
        if let n = keys["max_height"] { fetch.maxHeight = try n.int(in: 1...65535) }
        if let n = keys["max_frames"] { fetch.maxFrames = try n.int(in: 1...1_000_000) }
        if let n = keys["max_total_pixels"] { fetch.maxTotalPixels = try n.int(in: 1...Int.max) }
        if let n = keys["max_missing"] { fetch.maxMissing = try allowance(n, examples: "5", "2%") }
        if let n = keys["max_removed"] { fetch.maxRemoved = try allowance(n, examples: "50", "10%") }
        if let n = keys["circuit_breaker"] { fetch.circuitBreaker = try n.int(in: 0...1_000_000) }
        if let n = keys["quota_reserve"] { fetch.quotaReserve = try n.int(in: 0...Int.max) }
        if let n = keys["max_requests"] { fetch.maxRequests = try n.int(in: 1...Int.max) }
        if let n = keys["max_duration"] { fetch.maxDuration = try positive(n.duration(), n) }
        if let n = keys["refresh_after"] {
            let duration = try n.duration()
            fetch.refreshAfter = duration == .zero ? nil : duration
        }
        if let n = keys["missing_ttl"] { fetch.missingTTL = try n.duration() }
        if let n = keys["ca_file"] { fetch.caFile = try nonEmptyPath(n) }
        if let n = keys["retry"] {
            let retry = try n.mapping(allowed: ["max_attempts", "base_delay", "max_delay", "max_retry_after"])
            if let m = retry["max_attempts"] { fetch.retry.maxAttempts = try m.int(in: 1...20) }
            if let m = retry["base_delay"] { fetch.retry.baseDelay = try m.duration() }
            if let m = retry["max_delay"] { fetch.retry.maxDelay = try m.duration() }
            if let m = retry["max_retry_after"] { fetch.retry.maxRetryAfter = try m.duration() }
        }
        return fetch
    }

    private func parsePacks(_ node: ManifestNode, source: SourceSettings) throws(ManifestError) -> [PackSpec] {
        var packs: [PackSpec] = []
        for element in try node.sequence() {
            let keys = try element.mapping(allowed: ["name", "selector", "resolutions"])
            guard let nameNode = keys["name"] else { throw .missingKey(path: element.child("name")) }
            let name = try nameNode.string()
            guard PackSpec.isValidName(name) else {
                throw .invalidValue(path: nameNode.path, reason: "\"\(name)\" must match [a-z0-9][a-z0-9_-]{0,63} (it becomes a file name)")
            }
            guard !packs.contains(where: { $0.name == name }) else {
                throw .invalidValue(path: nameNode.path, reason: "pack name \"\(name)\" is used twice")
            }
            var selector = Selector()
            if let selectorNode = keys["selector"], !selectorNode.isNull {
                let fields = try selectorNode.mapping(allowed: ["bodyPart", "equipment", "target", "ids"])
                selector.bodyParts = try nonEmptyList(fields["bodyPart"])
                selector.equipment = try nonEmptyList(fields["equipment"])
                selector.targets = try nonEmptyList(fields["target"])
                selector.ids = try nonEmptyList(fields["ids"])
                for (index, id) in selector.ids.enumerated() where !ExerciseID.isValid(id) {
                    throw .invalidValue(path: "\(selectorNode.child("ids"))[\(index)]", reason: "\"\(id)\" is not a valid exercise id")
                }
            }
            let resolutions = try keys["resolutions"].map { n throws(ManifestError) in try parsePackResolutions(n, source: source) }
            packs.append(PackSpec(name: name, selector: selector, resolutions: resolutions))
        }
        return packs
    }

    private func parseOutput(_ node: ManifestNode) throws(ManifestError) -> OutputSettings {
        let keys = try node.mapping(allowed: [
            "directory", "zstd_level", "keep_versions", "publish_base_url", "publish", "publish_endpoint",
            "index_max_age", "posters", "blurhash", "formats"
        ])
        var output = OutputSettings()
        if let n = keys["formats"] { output.formats = try parseFormats(n) }
        if let n = keys["posters"] { output.posterSizes = try parsePosterSizes(n) }
        if let n = keys["blurhash"] { (output.blurHashComponentsX, output.blurHashComponentsY) = try parseBlurHash(n) }
        if let n = keys["publish"] {
            output.publish = try nonEmptyPath(n)
            let endpoint = try keys["publish_endpoint"].map { n throws(ManifestError) in try n.string() }
            do { _ = try PublishTargetSpec.parse(output.publish!, endpoint: endpoint) } catch {
                throw .invalidValue(path: n.path, reason: error.description)
            }
            output.publishEndpoint = endpoint
        } else if let n = keys["publish_endpoint"] {
            throw .invalidValue(path: n.path, reason: "needs output.publish")
        }
        if let n = keys["index_max_age"] {
            let age = try n.duration()
            guard age >= .zero, age <= .seconds(86400) else { throw .invalidValue(path: n.path, reason: "must be between 0s and 1d") }
            output.indexMaxAge = Int(age.components.seconds)
        }
        if let n = keys["directory"] { output.directory = try nonEmptyPath(n) }
        if let n = keys["zstd_level"] { output.zstdLevel = Int32(try n.int(in: 1...19)) }
        if let n = keys["keep_versions"] { output.keepVersions = try n.int(in: 1...1000) }
        if let n = keys["publish_base_url"] { output.writesBaseURL = try n.bool() }
        return output
    }

    private func parseCache(_ node: ManifestNode) throws(ManifestError) -> CacheSettings {
        let keys = try node.mapping(allowed: ["directory"])
        var cache = CacheSettings()
        if let n = keys["directory"] { cache.directory = try nonEmptyPath(n) }
        return cache
    }

    private func nonEmptyList(_ node: ManifestNode?) throws(ManifestError) -> [String] {
        guard let node else { return [] }
        let values = try node.stringList()
        guard !values.isEmpty, !values.contains(where: { $0.isEmpty }) else {
            throw .invalidValue(path: node.path, reason: "must list at least one non-empty value")
        }
        return values
    }

    /// A count or a percentage (`max_missing`, `max_removed`), as a string or a number.
    private func allowance(_ node: ManifestNode, examples count: String, _ share: String) throws(ManifestError) -> MissingAllowance {
        let text = try node.string()
        guard let allowance = MissingAllowance(parsing: text) else {
            throw .invalidValue(
                path: node.path,
                reason: "\"\(text.trimmingCharacters(in: .whitespaces))\" is neither a count (\(count)) "
                    + "nor a percentage from 0% to 100% (\(share))")
        }
        return allowance
    }

    private func nonEmptyPath(_ node: ManifestNode) throws(ManifestError) -> String {
        let value = try node.string()
        guard !value.isEmpty, !value.contains("\0") else { throw .invalidValue(path: node.path, reason: "must be a non-empty path") }
        return value
    }

    private func positive(_ duration: Duration, _ node: ManifestNode) throws(ManifestError) -> Duration {
        guard duration > .zero else { throw .invalidValue(path: node.path, reason: "must be greater than zero") }
        return duration
    }

    package static func checkHTTPURL(_ text: String, path: String) throws(ManifestError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", components.host?.isEmpty == false
        else {
            throw .invalidValue(path: path, reason: "\"\(text)\" is not an http(s) URL")
        }
        guard components.user == nil, components.password == nil else {
            throw .invalidValue(path: path, reason: "credentials in the URL are not allowed; use api_key_env")
        }
    }
}

extension PackSpec {
    static func isValidName(_ name: String) -> Bool {
        name.range(of: "^[a-z0-9][a-z0-9_-]{0,63}$", options: .regularExpression) != nil
    }
}

extension ManifestLoader {
    /// `output.posters`: a list of distinct longest sides in 16...512 (an empty list: no posters).
    private func parsePosterSizes(_ node: ManifestNode) throws(ManifestError) -> [Int] {
        var sizes: [Int] = []
        for element in try node.sequence() {
            let size = try element.int(in: PlaceholderSettings.posterSizeRange)
            guard !sizes.contains(size) else {
                throw .invalidValue(path: element.path, reason: "poster size \(size) appears twice")
            }
            sizes.append(size)
        }
        return sizes.sorted()
    }

    /// `output.formats`: `[gif]` or `[gif, webp]`: known formats, each once, `gif` present and first.
    private func parseFormats(_ node: ManifestNode) throws(ManifestError) -> [OutputFormat] {
        let known = OutputFormat.allCases.map(\.rawValue).joined(separator: ", ")
        var formats: [OutputFormat] = []
        for element in try node.sequence() {
            let name = try element.string()
            guard let format = OutputFormat(rawValue: name) else {
                throw .invalidValue(path: element.path, reason: "\"\(name)\" is not a format gifpack writes (\(known))")
            }
            guard !formats.contains(format) else { throw .invalidValue(path: element.path, reason: "format \(name) appears twice") }
            formats.append(format)
        }
        guard formats.first == .gif else {
            throw .invalidValue(path: node.path, reason: "must list gif first (the packs every client can install), e.g. [gif, webp]")
        }
        return formats
    }

    /// `output.blurhash`: `{x: 4, y: 3}`, BlurHash components across and down, each 1...9.
    private func parseBlurHash(_ node: ManifestNode) throws(ManifestError) -> (Int, Int) {
        let keys = try node.mapping(allowed: ["x", "y"])
        let x = try keys["x"].map { n throws(ManifestError) in try n.int(in: BlurHashEncoder.componentRange) } ?? 4
        let y = try keys["y"].map { n throws(ManifestError) in try n.int(in: BlurHashEncoder.componentRange) } ?? 3
        return (x, y)
    }
}

extension ManifestLoader {
    /// RapidAPI's `source.resolutions: [180]`, or the older `source.resolution: 180` read as a list of
    /// one; 180 when neither is given. Each value must be one `/image` accepts and appear once.
    func parseResolutions(_ keys: [String: ManifestNode], in node: ManifestNode) throws(ManifestError) -> [Resolution] {
        switch (keys["resolution"], keys["resolutions"]) {
        case (nil, nil):
            return [.pixels(180)]
        case (let single?, nil):
            return [try resolution(single)]
        case (nil, let list?):
            var resolutions: [Resolution] = []
            for element in try list.sequence() {
                let resolution = try resolution(element)
                guard !resolutions.contains(resolution) else {
                    throw .invalidValue(path: element.path, reason: "\(resolution) appears twice")
                }
                resolutions.append(resolution)
            }
            guard !resolutions.isEmpty else { throw .invalidValue(path: list.path, reason: "list at least one resolution") }
            return resolutions
        case (_?, _?):
            throw .invalidValue(path: node.path, reason: "give resolution or resolutions, not both")
        }
    }

    /// A pack's `resolutions: [360]`: some of the source's resolutions (in the source's order).
    func parsePackResolutions(_ node: ManifestNode, source: SourceSettings) throws(ManifestError) -> [Resolution] {
        guard source.kind == .rapidAPI else {
            throw .invalidValue(path: node.path, reason: "not used by exercisedb-v1 (it serves one resolution)")
        }
        var chosen: [Resolution] = []
        for element in try node.sequence() {
            let resolution = try resolution(element)
            guard source.resolutions.contains(resolution) else {
                throw .invalidValue(
                    path: element.path,
                    reason: "\(resolution) is not one of source.resolutions ("
                        + source.resolutions.map(\.description).joined(separator: ", ") + ")")
            }
            guard !chosen.contains(resolution) else { throw .invalidValue(path: element.path, reason: "\(resolution) appears twice") }
            chosen.append(resolution)
        }
        guard !chosen.isEmpty else { throw .invalidValue(path: node.path, reason: "list at least one resolution") }
        return source.resolutions.filter(chosen.contains)
    }

    private func resolution(_ node: ManifestNode) throws(ManifestError) -> Resolution {
        let pixels = try node.int(in: 1...10_000)
        guard Resolution.rapidAPIChoices.contains(pixels) else {
            throw .invalidValue(
                path: node.path,
                reason: "\(pixels) is not one of "
                    + Resolution.rapidAPIChoices.map(String.init).joined(separator: ", "))
        }
        return .pixels(pixels)
    }
}
