// The library's install as an app runs it, for `make bench` (bench/run.sh, part 9): PackInstaller
// with its default transport (URLSessionTransport; FoundationNetworking on Linux), no options.
//
//   gifpack-install-bench INDEX CACHE      INDEX: an http(s) URL or a path to index.json
//
// Prints the install's counts on success, then its phases (InstallReport.phases) as one JSON object
// on the last line, in seconds; exit status 1 and one line on a failure.
import Foundation
import GifPackClient
import GifPackIndexReader

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let index = arguments.first, let cache = arguments.last else {
    FileHandle.standardError.write(Data("usage: gifpack-install-bench INDEX CACHE\n".utf8))
    exit(2)
}
do {
    let report = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
    print(
        "installed generation \(report.generation): \(report.gifsWritten) GIFs written, \(report.bytesWritten) bytes, "
            + "\(report.bytesDownloaded) bytes downloaded")
    let phases = report.phases.named.map { "\"\($0.name)\": \($0.seconds)" } + ["\"other\": \(report.phases.other)", "\"total\": \(report.phases.total)"]
    print("{" + phases.joined(separator: ", ") + "}")
} catch {
    FileHandle.standardError.write(Data("gifpack-install-bench: \(error)\n".utf8))
    exit(1)
}
