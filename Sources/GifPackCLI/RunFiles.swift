import Foundation
import GifPack

/// The files a `gifpack build` writes whatever its outcome: the metrics file (`--metrics-file`),
/// the step summary (`--summary-file`) and the step outputs (`--github-output`) after every run, and for a run refused before any work
/// (exit status 2) also `report.json` — in an output directory that already exists (`--out`, else
/// the manifest's `output.directory` when the manifest can be read), since a refused run creates
/// nothing. (The build pipeline writes `report.json` of every run it starts.)
///
/// ```swift
/// RunFiles(arguments: ["build", "-m", "m.yaml", "--metrics-file", "g.prom", "--bogus"])
///     .recordRefusal(message: "Unknown option '--bogus'")
/// ```
struct RunFiles {
    var metricsFile: String?
    var summaryFile: String?
    var githubOutput: String?
    var outputDirectory: String?

    init(metricsFile: String?, summaryFile: String?, githubOutput: String?, outputDirectory: String?) {
        self.metricsFile = metricsFile
        self.summaryFile = summaryFile
        self.githubOutput = githubOutput
        self.outputDirectory = outputDirectory
    }

    /// What a command line swift-argument-parser refused still says: the values of `--metrics-file`,
    /// `--summary-file`, `--github-output`, `--out` and `--manifest` of a `build` command line (`--name value` or
    /// `--name=value`). Any other command writes nothing.
    init(arguments: [String]) {
        func value(_ names: [String]) -> String? {
            var found: String?
            var index = arguments.startIndex
            while index < arguments.endIndex {
                let argument = arguments[index]
                if argument == "--" { break }
                if names.contains(argument), index + 1 < arguments.endIndex {
                    found = arguments[index + 1]
                    index += 1
                } else if let name = names.first(where: { argument.hasPrefix("\($0)=") }) {
                    found = String(argument.dropFirst(name.count + 1))
                }
                index += 1
            }
            return found.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard arguments.first == "build" else {
            self.init(metricsFile: nil, summaryFile: nil, githubOutput: nil, outputDirectory: nil)
            return
        }
        var output = value(["--out"])
        if output == nil, let manifest = value(["--manifest", "-m"]) {
            output = RunFiles.outputDirectory(ofManifest: manifest)
        }
        self.init(
            metricsFile: value(["--metrics-file"]), summaryFile: value(["--summary-file"]),
            githubOutput: value(["--github-output"]), outputDirectory: output)
    }

    /// The output directory a manifest names, when it can be read even without its API key.
    static func outputDirectory(ofManifest path: String) -> String? {
        try? ManifestLoader(requiresAPIKey: false, readsSigningKey: false).load(path: path, environment: ProcessInfo.processInfo.environment).output.directory
    }

    /// Writes the files for a run refused with exit status 2 and `message`. A failure to write one
    /// is reported on standard error and changes nothing else.
    func recordRefusal(message: String, startedAt: Date = Date()) {
        var report = BuildReport(
            generator: "gifpack \(BuildOptions.version)", exitStatus: .usage,
            message: "refused before any work: \(message)")
        report.complete(startedAt: startedAt, finishedAt: Date())
        write(report)
    }

    /// Writes `report` to every file this run names.
    func write(
        _ report: BuildReport, redactor: SecretRedactor = SecretRedactor(secrets: []),
        complain: (String) -> Void = { Terminal.error("gifpack: \($0)") }
    ) {
        if let metricsFile {
            do { try MetricsFile(path: metricsFile).write(report, finishedAt: Date()) } catch {
                complain("could not write the metrics file: \(error)")
            }
        }
        if let summaryFile {
            do { try StepSummary.append(redactor.redact(StepSummary.markdown(report)), to: summaryFile) } catch {
                complain("could not append the summary: \(error)")
            }
        }
        if let githubOutput {
            do { try StepSummary.append(StepOutputs.lines(report), to: githubOutput) } catch {
                complain("could not append the step outputs: \(error)")
            }
        }
        if let outputDirectory, report.exitStatus == .usage {
            var info = stat()
            guard stat(outputDirectory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return }
            do { try report.write(toDirectory: outputDirectory) } catch {
                complain("could not write \(outputDirectory)/report.json: \(error)")
            }
        }
    }
}
