import Foundation
import Glibc
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackDistFixtures

/// The manifest and the signing key file, read as an operator names them (``OperatorFile``):
/// through the links a mounted config map or secret is made of, regular files only, never without bound.
@Suite("Manifest and key files as operators name them", .computes, .timeLimit(.minutes(2)))
struct OperatorFileTests {
    let environment = ["KEY_VAR": "k"]

    /// A Kubernetes volume's layout: `name -> ..data/name`, `..data -> ..<version>/`.
    func mounted(_ text: String, as name: String, in workspace: TemporaryDirectory) throws -> String {
        let version = workspace.file("..2026_11_27")
        try FileManager.default.createDirectory(atPath: version, withIntermediateDirectories: true)
        try text.write(toFile: "\(version)/\(name)", atomically: true, encoding: .utf8)
        if !FileManager.default.fileExists(atPath: workspace.file("..data")) {
            try FileManager.default.createSymbolicLink(atPath: workspace.file("..data"), withDestinationPath: "..2026_11_27")
        }
        try FileManager.default.createSymbolicLink(atPath: workspace.file(name), withDestinationPath: "..data/\(name)")
        return workspace.file(name)
    }

    func manifestText(signingWith keyPath: String? = nil) -> String {
        var text = "source:\n  kind: exercisedb-rapidapi\n  api_key_env: KEY_VAR\n"
        if let keyPath { text += "signing:\n  secret_key_file: \(keyPath)\n" }
        return text
    }

    @Test func aManifestAndAKeyMountedAsLinksLoad() throws {
        let workspace = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: workspace)
        let keyText = try String(contentsOfFile: key.secretPath, encoding: .utf8)
        let keyPath = try mounted(keyText, as: "gifpack.key", in: workspace)
        let manifestPath = try mounted(manifestText(signingWith: keyPath), as: "exercisedb.yaml", in: workspace)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: manifestPath) == "..data/exercisedb.yaml")
        let manifest = try ManifestLoader().load(path: manifestPath, environment: environment)
        #expect(manifest.signing?.secretKey.publicKey == key.secret.publicKey)
        #expect(manifest.signing?.keySource == "file \(keyPath)")
    }

    /// A FIFO (even one nothing writes to: the read never waits), a device and a file over the
    /// limit are refused with what is there; on main, `/dev/zero` was read without end.
    @Test func pipesDevicesAndOversizeFilesAreRefusedWithWhatTheyAre() throws {
        let workspace = try TemporaryDirectory()
        let fifo = workspace.file("manifest.fifo")
        #expect(mkfifo(fifo, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        for (path, reason) in [(fifo, "it is a FIFO, not a file"), ("/dev/zero", "it is a character device, not a file")] {
            #expect(throws: ManifestError.unreadable(path: path, reason: reason)) {
                try ManifestLoader().load(path: path, environment: environment)
            }
        }
        let big = try workspace.write(String(repeating: "#", count: (4 << 20) + 1), to: "big.yaml")
        #expect(throws: ManifestError.unreadable(path: big, reason: "it is larger than 4194304 bytes")) {
            try ManifestLoader().load(path: big, environment: environment)
        }
        let key = try workspace.write(String(repeating: "k", count: (64 << 10) + 1), to: "big.key")
        let manifest = try workspace.write(manifestText(signingWith: key), to: "signed.yaml")
        #expect(
            throws: ManifestError.invalidValue(
                path: "signing.secret_key_file",
                reason: "the secret key file \(key) cannot be read (it is larger than 65536 bytes)")
        ) {
            try ManifestLoader().load(path: manifest, environment: environment)
        }
    }

    @Test func missingAndDanglingKeyFilesAndADirectoryManifestSayWhatIsThere() throws {
        let workspace = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: workspace.file("dangling.key"), withDestinationPath: "nowhere.key")
        for key in [workspace.file("absent.key"), workspace.file("dangling.key")] {
            let manifest = try workspace.write(manifestText(signingWith: key), to: "m.yaml")
            #expect(throws: ManifestError.invalidValue(path: "signing.secret_key_file", reason: "the secret key file \(key) does not exist")) {
                try ManifestLoader().load(path: manifest, environment: environment)
            }
        }
        #expect(
            throws: ManifestError.unreadable(
                path: workspace.path,
                reason: "it is a directory; name the manifest file (e.g. \(workspace.path)/exercisedb.yaml)")
        ) {
            try ManifestLoader().load(path: workspace.path, environment: environment)
        }
    }
}
