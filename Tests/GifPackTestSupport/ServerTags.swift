import Testing

/// The tags of the suites that start a server or a browser the machine must have installed:
/// nginx (``NginxServer``), headless Chromium (``Chromium``), an S3-compatible store (moto's
/// ``MotoServer`` or another server from `.venv-test`). `make check` runs every suite without
/// them (Makefile, `CHECK_SKIP_TAGS`); `make test` runs all.
///
/// ```swift
/// @Suite("Client: installs against nginx", .tags(.nginx), .timeLimit(.minutes(5))) struct InstallTests { … }
/// ```
extension Tag {
    /// The suite starts nginx.
    @Tag public static var nginx: Self
    /// The suite opens pages in headless Chromium.
    @Tag public static var chromium: Self
    /// The suite talks to an S3-compatible store (moto, or a stand-in from `.venv-test`).
    @Tag public static var s3: Self
}

/// Holds the tags to what the tests do: a server start throws unless the running test carries the
/// server's tag, so a suite cannot start nginx, moto or Chromium and still run in `make check`.
enum ServerTags {
    struct Untagged: Error, CustomStringConvertible {
        let description: String
    }

    /// Throws ``Untagged`` when the running test (``Test/current``) lacks `tag`. Outside a test
    /// (a benchmark harness) there is no suite to tag and nothing is checked.
    static func require(_ tag: Tag, starting what: String) throws {
        guard let test = Test.current else { return }
        guard test.tags.contains(tag) else {
            throw Untagged(
                description: "\(test.name) starts \(what) but its suite lacks `.tags(\(tag))`: "
                    + "tag it, so that `make check` (which runs without \(what)) leaves it out")
        }
    }
}
