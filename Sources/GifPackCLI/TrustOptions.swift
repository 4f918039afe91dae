import ArgumentParser
import Foundation
import GifPackClient
import GifPackFormat
import GifPackIndexReader

/// `--trusted-key`, shared by the commands that read an index.
struct TrustOptions: ParsableArguments {
    @Option(
        name: .customLong("trusted-key"),
        help: ArgumentHelp(
            "A minisign public key (gifpack keygen) the index must be signed by (repeatable, for key rotation). With keys, an unsigned, badly signed, expired or rolled-back index is refused.",
            valueName: "file"))
    var trustedKeys: [String] = []

    /// The trust to apply, nil without keys; a bad key file or GIFPACK_NOW exits with status 2.
    func load() throws -> IndexTrust? {
        guard !trustedKeys.isEmpty else { return nil }
        do {
            let now = try IndexTimestamp.now(environment: ProcessInfo.processInfo.environment)
            return try IndexTrust(keyFiles: trustedKeys, now: now)
        } catch {
            Terminal.error("gifpack: --trusted-key: \(error)")
            throw ExitCode(2)
        }
    }
}
