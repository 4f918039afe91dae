import Foundation
import GifPack

/// Writes ``MetricsText`` to a file the way node_exporter's textfile collector needs it: to a
/// temporary name in the same directory (which the collector ignores: it does not end in
/// `.prom`), fsynced, then renamed over the target, so a scrape never reads half a file. The
/// previous file's last-success time is read first and carried forward when this run failed.
///
/// ```swift
/// try MetricsFile(path: "/var/lib/node_exporter/textfile/gifpack.prom").write(report, finishedAt: Date())
/// ```
struct MetricsFile: Sendable, Equatable {
    var path: String

    init(path: String) {
        self.path = path
    }

    /// Renders `report` and replaces the file; returns the text written.
    @discardableResult
    func write(_ report: BuildReport, finishedAt: Date) throws(FileSystemError) -> String {
        let previous = (try? FileSystem.readAll(path)).flatMap { MetricsText.lastSuccess(in: String(decoding: $0, as: UTF8.self)) }
        let text = MetricsText.render(report, finishedAt: finishedAt, previousLastSuccess: previous)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try FileSystem.createDirectory(directory) }
        try FileSystem.writeAtomically(Array(text.utf8), to: path)
        return text
    }
}
