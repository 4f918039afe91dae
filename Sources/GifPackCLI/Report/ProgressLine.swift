import Foundation
import GifPack

/// Formats a ``ProgressSnapshot`` as one line of text: `live` for a terminal status line that is
/// redrawn in place, `plain` for a log line.
///
/// A live line never exceeds `width - 1` visible characters (writing the last column makes many
/// terminals wrap), whatever the width: when everything does not fit, the least useful parts go
/// first (the bar, then retries, the byte count, the stage name…), and the count with its percentage
/// stays. With `color`, the bar, retries and failures get ANSI colours; the colour codes do not count
/// towards the width. Neither form holds `\r` or a newline: the caller decides how to place it.
///
/// ```swift
/// ProgressLine.live(snapshot, width: 100, color: false)
/// // "fetch [##########----------]  123/200 (61%)  2.1 MB  350 kB/s  ETA 12s  retries 3  failed 1"
/// ProgressLine.plain(snapshot)
/// // "fetch 123/200 (61%), 2.1 MB at 350 kB/s, ETA 12s, 3 retries, 1 failed"
/// ```
enum ProgressLine {
    /// A part of the line; lower `priority` values are kept longer when space runs out.
    private struct Part {
        var text: String
        var priority: Int
        var color: String?
    }

    private static let separator = "  "

    static func live(_ snapshot: ProgressSnapshot, width: Int, color: Bool) -> String {
        let budget = max(1, width - 1)
        guard snapshot.stage == .fetch, let total = snapshot.total else {
            return truncate(stageDescription(snapshot), to: budget)
        }
        var parts = [
            Part(text: snapshot.rendition.map { "fetch \($0)" } ?? "fetch", priority: 6, color: color ? "1" : nil),
            Part(text: "\(snapshot.done)/\(total) (\(snapshot.percent ?? 100)%)", priority: 0, color: nil),
            Part(text: HumanUnits.bytes(snapshot.bytesDownloaded), priority: 5, color: nil),
            Part(text: snapshot.bytesPerSecond.map(HumanUnits.rate) ?? "- B/s", priority: 4, color: nil),
            Part(text: "ETA " + (snapshot.etaSeconds.map(HumanUnits.duration) ?? "-"), priority: 2, color: nil),
            Part(text: "retries \(snapshot.retries)", priority: 7, color: color && snapshot.retries > 0 ? "33" : nil),
            Part(text: "failed \(snapshot.failures)", priority: 3, color: color && snapshot.failures > 0 ? "31" : nil)
        ]
        while parts.count > 1, visibleLength(parts) > budget {
            let drop = parts.indices.max { parts[$0].priority < parts[$1].priority }!
            parts.remove(at: drop)
        }
        // The bar takes what is left, between 8 and 32 columns including its brackets.
        let room = budget - visibleLength(parts) - separator.count
        if room >= 8, let fraction = snapshot.fraction {
            let inner = min(30, room - 2)
            let filled = Int((fraction * Double(inner)).rounded(.down))
            let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: inner - filled) + "]"
            let position = parts.first?.text.hasPrefix("fetch") == true ? 1 : 0
            parts.insert(Part(text: bar, priority: 9, color: color ? "32" : nil), at: position)
        }
        let text = parts.map(\.text).joined(separator: separator)
        guard text.count <= budget else { return truncate(text, to: budget) }
        guard color else { return text }
        return parts.map { part in
            part.color.map { "\u{1B}[\($0)m\(part.text)\u{1B}[0m" } ?? part.text
        }.joined(separator: separator)
    }

    static func plain(_ snapshot: ProgressSnapshot) -> String {
        guard snapshot.stage == .fetch, let total = snapshot.total else { return stageDescription(snapshot) }
        var text = "fetch \(snapshot.rendition.map { "\($0) " } ?? "")\(snapshot.done)/\(total) (\(snapshot.percent ?? 100)%), \(HumanUnits.bytes(snapshot.bytesDownloaded))"
        if let rate = snapshot.bytesPerSecond { text += " at \(HumanUnits.rate(rate))" }
        if let eta = snapshot.etaSeconds { text += ", ETA \(HumanUnits.duration(eta))" }
        text += ", \(snapshot.retries) \(snapshot.retries == 1 ? "retry" : "retries"), \(snapshot.failures) failed"
        return text
    }

    private static func stageDescription(_ snapshot: ProgressSnapshot) -> String {
        let elapsed = HumanUnits.duration(snapshot.stageSeconds)
        switch snapshot.stage {
        case nil: return snapshot.total == nil ? "starting" : "finishing"
        case .catalog?: return "catalog: reading the exercise list (\(elapsed))"
        case .plan?: return "plan: choosing what to fetch (\(elapsed))"
        case .fetch?: return "fetch: planning requests (\(elapsed))"
        case .pack?: return "pack: writing packs, \(snapshot.packsDone) done (\(elapsed))"
        case .index?: return "index: writing index.json (\(elapsed))"
        case .prune?: return "prune: deleting old versions (\(elapsed))"
        }
    }

    private static func visibleLength(_ parts: [Part]) -> Int {
        parts.reduce(0) { $0 + $1.text.count } + max(0, parts.count - 1) * separator.count
    }

    private static func truncate(_ text: String, to budget: Int) -> String {
        text.count <= budget ? text : String(text.prefix(max(0, budget - 1))) + "…"
    }
}
