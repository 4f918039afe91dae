import ArgumentParser
import Foundation
import GifPackClient

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check an output directory or a pack file: every hash, every frame offset, every GIF decodes.",
        discussion: """
            DIR (a directory holding index.json): for every pack (the rendition packs of a format 1.3 \
            index, renditionPacks, included), its size and SHA-256, every frame \
            offset against the file's real zstd frames (no unlisted entry), catalog.json against the \
            content digest and the index, and every GIF read through its frame offset, hashed, decoded \
            and compared with its catalog record.

            PACK (a .tar.zst file alone): walks the zstd frames, parses every tar header, checks each \
            gifs/<sha256>.gif against its name, matches catalog.json with the entries both ways and \
            decodes every GIF.

            Every problem is listed, one per line, as "<pack>: <entry>: <reason>: <detail>".

            With --trusted-key (repeatable), DIR's index.json must first verify against \
            index.json.minisig with one of the keys and not be expired; a refused index is reported as \
            "refused: index <path>: <reason>: <detail>" and nothing else is checked.

            Examples:
              gifpack verify dist/
              gifpack verify dist/packs/all-v3-1a2b3c4d.tar.zst
              gifpack verify dist/ --trusted-key gifpack.pub

            Exit status: 0 all good, 1 problems found (listed) or index refused, 2 no such file or directory, or a bad key file.
            """
    )

    @Argument(help: "An output directory with index.json, or a .tar.zst pack file.")
    var target: String

    @OptionGroup var trust: TrustOptions

    @Flag(name: .shortAndLong, help: "Print nothing on success; a failure is one line.")
    var quiet = false

    func run() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) else {
            Terminal.error("gifpack: no such file or directory: \(target)")
            throw ExitCode(2)
        }
        let trust = try self.trust.load()
        if trust != nil && !isDirectory.boolValue {
            Terminal.error("gifpack: a pack file alone carries no signature; verify its directory (index.json and index.json.minisig) with --trusted-key")
            throw ExitCode(2)
        }
        let report = isDirectory.boolValue ? PackVerifier.verifyDirectory(target, trust: trust) : PackVerifier.verifyPack(target)
        if let refusal = report.indexRefusal {
            Terminal.error("error: refused: \(refusal)")
            throw ExitCode(1)
        }
        if !quiet { for problem in report.problems { Terminal.output("problem: \(problem)") } }
        let summary = "\(report.packs) pack(s), \(report.frames) frame(s), \(report.gifs) GIF(s)"
        if report.isOK {
            if !quiet { Terminal.output("ok: verified \(summary)") }
        } else {
            Terminal.error("error: \(report.problems.count) problem(s) in \(summary)")
            throw ExitCode(1)
        }
    }
}
