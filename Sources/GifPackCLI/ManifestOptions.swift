import ArgumentParser
import Foundation
import GifPack
import GifPackSystem

/// The options every manifest-driven command shares.
struct ManifestOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "The manifest (YAML or JSON). Its relative paths are relative to its own folder.")
    var manifest: String

    @Option(name: .customLong("out"), help: "Output directory (overrides output.directory).")
    var outputDirectory: String?

    @Option(name: .customLong("cache"), help: "Cache directory (overrides cache.directory).")
    var cacheDirectory: String?

    @Option(name: .customLong("base-url"), help: "API base URL (overrides source.base_url), e.g. a fixture server.")
    var baseURL: String?

    /// Loads and validates the manifest and the options that override it; a problem is a
    /// ``ManifestError`` naming the key path, before any network traffic. `requiresAPIKey: false`
    /// loads a manifest whose key variable is unset (for commands that send no request).
    /// `previousIndex`: `build --previous-index`, a path or an http(s) URL.
    /// `readsSigningKey: false` leaves the secret key of a `signing` block unread (for commands that never sign).
    func loadManifest(
        requiresAPIKey: Bool = true, readsSigningKey: Bool = true,
        previousIndex: String? = nil
    ) throws(ManifestError) -> (Manifest, BuildOptions) {
        let environment = ProcessInfo.processInfo.environment
        var manifest = try ManifestLoader(requiresAPIKey: requiresAPIKey, readsSigningKey: readsSigningKey)
            .load(path: self.manifest, environment: environment)
        if let baseURL {
            try ManifestLoader.checkHTTPURL(baseURL, path: "--base-url")
            manifest.source.baseURL = baseURL
        }
        for (flag, path) in [("--out", outputDirectory), ("--cache", cacheDirectory)] {
            if let path, let problem = Self.directoryProblem(path) { throw .invalidValue(path: flag, reason: problem) }
        }
        var options = try BuildOptions.resolve(
            manifest: manifest, outputDirectory: outputDirectory,
            cacheDirectory: cacheDirectory, environment: environment)
        if let previousIndex {
            if previousIndex.lowercased().hasPrefix("http:") || previousIndex.lowercased().hasPrefix("https:") {
                try ManifestLoader.checkHTTPURL(previousIndex, path: "--previous-index")
            } else if previousIndex.isEmpty {
                throw .invalidValue(path: "--previous-index", reason: "must be a path or an http(s) URL")
            }
            options.previousIndex = previousIndex
        }
        return (manifest, options)
    }

    /// Why `path` cannot be the directory a command-line option names, or nil: it must be a
    /// directory, or a new name in a directory that exists — gifpack creates the last component
    /// only, so a mistyped `--out /srv/gifpakc/dist` is refused (exit 2) instead of growing a tree.
    static func directoryProblem(_ path: String) -> String? {
        guard !path.isEmpty else { return "must name a directory" }
        var info = stat()
        if stat(path, &info) == 0 {
            return (info.st_mode & S_IFMT) == S_IFDIR ? nil : "\(path) exists and is not a directory"
        }
        let code = errno
        guard code == ENOENT else { return "cannot use \(path): \(String(cString: strerror(code)))" }
        let parent = PathText.parent(path)
        if stat(parent, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return nil }
        return "the folder holding \(path) (\(parent)) does not exist or is not a directory; gifpack creates only the last "
            + "component — create \(parent) first"
    }

    /// ``loadManifest(requiresAPIKey:readsSigningKey:previousIndex:)``, printing a refusal and exiting with status 2.
    func load(requiresAPIKey: Bool = true, readsSigningKey: Bool = true) throws -> (Manifest, BuildOptions) {
        do { return try loadManifest(requiresAPIKey: requiresAPIKey, readsSigningKey: readsSigningKey) } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }
}
