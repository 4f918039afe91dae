// The memory an app's loader holds while a list scrolls through GIFs fetched by range, for `make
// bench` (bench/run.sh, part 11), against plain URLSession fetching the same ranges:
//
//   gifpack-loader-memory-bench loader INDEX_URL CACHE RANGES      GIFLoader, a 5 MB memory tier
//   gifpack-loader-memory-bench urlsession RANGES                  URLSession data tasks, nothing kept
//
// RANGES: one line per GIF, "EXERCISE_ID PACK_URL FIRST_BYTE LAST_BYTE" (bench/run.sh writes it from
// the index). Both load every line with 20 callers at once (a screen of cells scrolling) over at
// most 4 connections (the loader's `maxConcurrentFetches`). Prints one JSON object: GIFs answered,
// body bytes, seconds, and the process's resident memory: `peak_rss_kb` (VmHWM), `end_rss_kb` right
// after the last answer and `settled_rss_kb` 3 s later (VmRSS).
import Foundation
import GifPackClient
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Line: Sendable {
    var id: String
    var url: String
    var range: ClosedRange<Int64>
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("gifpack-loader-memory-bench: \(message)\n".utf8))
    exit(1)
}

func readLines(_ path: String) -> [Line] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
    return text.split(separator: "\n").map { row in
        let fields = row.split(separator: " ")
        guard fields.count == 4, let first = Int64(fields[2]), let last = Int64(fields[3]), first <= last else { fail("bad line: \(row)") }
        return Line(id: String(fields[0]), url: String(fields[1]), range: first...last)
    }
}

/// A field of /proc/self/status in kB (VmRSS, VmHWM).
func statusKB(_ field: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for row in text.split(separator: "\n") where row.hasPrefix(field + ":") {
        return Int(row.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") ?? -1
    }
    return -1
}

/// Runs `load` for every line, `callers` at once; returns the body bytes.
func loadAll(_ lines: [Line], callers: Int, _ load: @escaping @Sendable (Line) async throws -> Int) async throws -> Int {
    try await withThrowingTaskGroup(of: Int.self) { group in
        var next = 0
        var bytes = 0
        while next < min(callers, lines.count) {
            let line = lines[next]
            group.addTask { try await load(line) }
            next += 1
        }
        while let got = try await group.next() {
            bytes += got
            if next < lines.count {
                let line = lines[next]
                group.addTask { try await load(line) }
                next += 1
            }
        }
        return bytes
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first ?? ""
let lines: [Line]
let clock = Date()
let bytes: Int
do {
    switch (mode, arguments.count) {
    case ("loader", 4):
        lines = readLines(arguments[3])
        var configuration = GIFLoader.Configuration()
        configuration.memoryCostLimit = 5 << 20
        configuration.preferredPixelSize = 360
        let loader = try GIFLoader(
            indexURL: URL(string: arguments[1])!, cacheFolder: URL(fileURLWithPath: arguments[2]),
            configuration: configuration)
        bytes = try await loadAll(lines, callers: 20) { line in
            guard let gif = try await loader.gif(for: line.id) else { fail("no GIF for \(line.id)") }
            guard gif.tier == .network else { fail("\(line.id) came from the \(gif.tier) tier, not by range") }
            return gif.data.count
        }
    case ("urlsession", 2):
        lines = readLines(arguments[1])
        let settings = URLSessionConfiguration.ephemeral
        settings.httpMaximumConnectionsPerHost = 4
        settings.urlCache = nil
        let session = URLSession(configuration: settings)
        bytes = try await loadAll(lines, callers: 20) { line in
            var request = URLRequest(url: URL(string: line.url)!)
            request.setValue("bytes=\(line.range.lowerBound)-\(line.range.upperBound)", forHTTPHeaderField: "Range")
            let (data, response) = try await session.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 206, data.count == line.range.count else {
                fail("\(line.url) \(line.range): not the 206 asked for")
            }
            return data.count
        }
    default:
        fail("usage: gifpack-loader-memory-bench loader INDEX_URL CACHE RANGES | urlsession RANGES")
    }
} catch {
    fail("\(error)")
}
let seconds = Date().timeIntervalSince(clock)
let end = statusKB("VmRSS")
try? await Task.sleep(nanoseconds: 3_000_000_000)
let settled = statusKB("VmRSS")
print(
    "{\"mode\": \"\(mode)\", \"gifs\": \(lines.count), \"body_bytes\": \(bytes), \"seconds\": \(seconds), "
        + "\"peak_rss_kb\": \(statusKB("VmHWM")), \"end_rss_kb\": \(end), \"settled_rss_kb\": \(settled)}")
