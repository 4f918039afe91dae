import ExerciseDBFixture
import Foundation
import GifPackSigning
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// A key pair written to `workspace/keys/` and the manifest text that signs with it.
struct TestSigningKey {
    let secret: MinisignSecretKey
    let secretPath: String
    let publicPath: String

    init(workspace: TemporaryDirectory, name: String = "gifpack") throws {
        try FileManager.default.createDirectory(atPath: workspace.file("keys"), withIntermediateDirectories: true)
        secret = MinisignSecretKey.generate()
        secretPath = try workspace.write(secret.fileText, to: "keys/\(name).key")
        publicPath = try workspace.write(secret.publicKey.fileText, to: "keys/\(name).pub")
    }

    func block(expiresAfter: String = "10d") -> String {
        "signing:\n  secret_key_file: \(secretPath)\n  expires_after: \(expiresAfter)\n"
    }

    /// The base64 line of the secret key file, which must never appear in any output.
    var secretText: String { String(secret.fileText.split(separator: "\n")[1]) }
}

/// Every `packs/` file of a directory with the SHA-256 of its bytes.
func packFiles(_ dist: String) throws -> [String: String] {
    var files: [String: String] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(dist)/packs")) ?? [] where name.hasSuffix(".tar.zst") {
        files[name] = sha256Hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dist)/packs/\(name)"))))
    }
    return files
}

let trustT0 = Date(timeIntervalSince1970: 1_790_000_000)

/// A fixture server and a workspace whose `dist` is built and signed with `key`.
struct SignedDist {
    let server: FixtureServer
    let workspace: TemporaryDirectory
    let key: TestSigningKey
    var dist: String { workspace.file("dist") }
    var indexPath: String { workspace.file("dist/index.json") }

    init(count: Int = 8) throws {
        server = try startFixture(count: count)
        workspace = try TemporaryDirectory()
        key = try TestSigningKey(workspace: workspace)
    }

    func build(with key: TestSigningKey? = nil, at now: Date = trustT0) async throws {
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0") + "\n" + (key ?? self.key).block(expiresAfter: "10d")
        try await makeDist(manifest: manifest, workspace: workspace, now: now)
    }

    func changeAGIF(seed: UInt64) throws {
        server.replaceGIF(
            id: server.catalog.exercises.map(\.id).sorted()[0],
            with: try GIFSynthesizer.animatedGIF(width: 20, height: 20, frames: 2, colors: 4, seed: seed))
    }

    /// Copies `index.json` (and its signature, unless `signed` is false) to `dist/<name>`, optionally changed.
    func copyIndex(to name: String, signed: Bool = true, change: (inout [UInt8]) -> Void = { _ in }) throws -> String {
        var bytes = try fileBytes(indexPath)
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: "\(dist)/\(name)"))
        if signed {
            try FileManager.default.copyItem(atPath: "\(indexPath).minisig", toPath: "\(dist)/\(name).minisig")
        }
        return "\(dist)/\(name)"
    }

    /// Serves `copy` (made by ``copyIndex(to:signed:change:)``) and its signature as `index.json` again,
    /// as an older publisher served it (no `index.json.zst`): an old signed index replayed. Its mtime
    /// is another than the replaced index's, so nginx (whose ETag is mtime and size) gives another ETag.
    func replay(_ copy: String) throws {
        for file in ["index.json", "index.json.minisig", "index.json.zst"] { try? FileManager.default.removeItem(atPath: "\(dist)/\(file)") }
        try FileManager.default.copyItem(atPath: copy, toPath: indexPath)
        try FileManager.default.copyItem(atPath: copy + ".minisig", toPath: indexPath + ".minisig")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: indexPath)
    }
}
