import ArgumentParser
import Foundation
import GifPack

struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make an Ed25519 key pair for signing index.json.",
        discussion: """
            Writes the public key in minisign's format (give it to apps and to `minisign -V -p`) and the \
            secret key in minisign's secret key format, unencrypted (as `minisign -G -W` writes it), with \
            mode 0600. Neither file is replaced if it exists. The manifest's signing block names the secret \
            key file (secret_key_file) or an environment variable holding its text (secret_key_env); the \
            key itself never goes into the manifest.

            Examples:
              gifpack keygen --secret-key /etc/gifpack/gifpack.key --public-key gifpack.pub
              minisign -Vm dist/index.json -p gifpack.pub

            Exit status: 0 written, 1 a file could not be written, 2 a file already exists.
            """
    )

    @Option(help: "Where to write the secret key (created with mode 0600; never replaced).")
    var secretKey: String

    @Option(help: "Where to write the public key (minisign format; never replaced).")
    var publicKey: String

    @Flag(name: .shortAndLong, help: "Print nothing on success; a failure is one line.")
    var quiet = false

    func run() throws {
        for path in [secretKey, publicKey] where FileManager.default.fileExists(atPath: path) {
            Terminal.error("gifpack: \(path) already exists; keygen never replaces a key")
            throw ExitCode(2)
        }
        guard secretKey != publicKey else {
            Terminal.error("gifpack: --secret-key and --public-key must be different files")
            throw ExitCode(2)
        }
        let key = MinisignSecretKey.generate()
        do {
            try KeyFile.create(secretKey, text: key.fileText, mode: 0o600)
            try KeyFile.create(publicKey, text: key.publicKey.fileText, mode: 0o644)
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        guard !quiet else { return }
        Terminal.output("key id \(key.publicKey.keyIDText): secret key \(secretKey) (keep it private), public key \(publicKey)")
    }
}

/// Creates a file that must not exist yet, with its mode set before any byte is written.
enum KeyFile {
    struct WriteError: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "cannot write \(path): \(String(cString: strerror(code)))" }
    }

    static func create(_ path: String, text: String, mode: mode_t) throws(WriteError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw WriteError(path: path, code: errno) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else { throw WriteError(path: path, code: errno) }
    }
}
