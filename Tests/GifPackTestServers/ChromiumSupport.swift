import Foundation
@testable import GifPackTestSupport

/// Headless Chromium (Debian's `chromium`, installed by `make deps`) for the tests that look at a
/// page as a browser does: its DOM after the page's scripts ran, a screenshot, and the requests the
/// page made (Chromium's own network log). Every run has its own profile folder and is stopped by
/// `timeout` after ``timeLimit`` seconds; a missing Chromium fails with a message naming the fix.
enum Chromium {
    static let path = "/usr/bin/chromium"
    static let timeLimit = 90

    /// Flags that keep the browser from its own background requests (updates, sync, accounts), so
    /// that the network log holds what the page asked for.
    static let quietFlags = [
        "--headless", "--disable-gpu", "--no-sandbox", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
        "--mute-audio", "--hide-scrollbars", "--disable-extensions"
    ]

    struct Missing: Error, CustomStringConvertible {
        var description: String { "\(Chromium.path) is not installed: run `make deps` (or apt-get install chromium) — the review page tests need it" }
    }

    static func requireInstalled() throws {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing() }
    }

    /// The page's DOM serialized after it loaded (`--dump-dom`); with `netLog`, Chromium writes its
    /// network log there.
    static func dumpDOM(_ page: String, netLog: String? = nil, windowSize: String = "1280,900") async throws -> String {
        let profile = try TemporaryDirectory()
        var arguments = quietFlags + ["--user-data-dir=\(profile.path)", "--window-size=\(windowSize)"]
        if let netLog { arguments.append("--log-net-log=\(netLog)") }
        let result = try await runChromium(arguments + ["--dump-dom", URL(fileURLWithPath: page).absoluteString])
        guard result.status == 0, result.output.contains("<html") else {
            throw Failure("chromium --dump-dom \(page) exited \(result.status): \(result.error.suffix(2000))")
        }
        return result.output
    }

    /// A PNG screenshot of the page's first `windowSize` pixels.
    static func screenshot(_ page: String, to png: String, windowSize: String = "1280,1600") async throws {
        let profile = try TemporaryDirectory()
        let result = try await runChromium(
            quietFlags + [
                "--user-data-dir=\(profile.path)", "--window-size=\(windowSize)",
                "--screenshot=\(png)", URL(fileURLWithPath: page).absoluteString
            ])
        guard result.status == 0, FileManager.default.fileExists(atPath: png) else {
            throw Failure("chromium --screenshot \(page) exited \(result.status): \(result.error.suffix(2000))")
        }
    }

    /// The URLs the page itself requested through the network stack, from a `--log-net-log` file:
    /// requests whose network isolation key is the page's (`file://`). Files read from the page's
    /// folder do not go through the network stack; the browser's own requests carry no page key.
    static func pageRequests(netLog: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: netLog))
        guard let log = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let constants = log["constants"] as? [String: Any], let types = constants["logEventTypes"] as? [String: Int],
            let start = types["URL_REQUEST_START_JOB"], let events = log["events"] as? [[String: Any]]
        else {
            throw Failure("\(netLog) is not a Chromium network log")
        }
        return events.compactMap { event in
            guard event["type"] as? Int == start, let parameters = event["params"] as? [String: Any],
                let url = parameters["url"] as? String
            else { return nil }
            let key = parameters["network_isolation_key"] as? String ?? ""
            return key.hasPrefix("file://") ? url : nil
        }
    }

    /// Width and height from a PNG's header.
    static func pngSize(_ png: String) throws -> (width: Int, height: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))
        guard bytes.count > 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { throw Failure("\(png) is not a PNG") }
        func big(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (big(16), big(20))
    }

    private static func runChromium(_ arguments: [String]) async throws -> ProcessResult {
        try ServerTags.require(.chromium, starting: "Chromium")
        try requireInstalled()
        return try await run("/usr/bin/timeout", ["-k", "5", "\(timeLimit)", path] + arguments, environment: ["HOME": NSTemporaryDirectory(), "PATH": "/usr/bin:/bin"])
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
