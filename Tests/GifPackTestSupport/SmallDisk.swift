import Foundation
import Testing

/// Runs `body` with a tmpfs of `size` (mount(8)'s spelling: "512k") mounted at `path` (made if
/// missing): a real disk that fills up. Needs root: call it from a test enabled with
/// `.enabled(if: getuid() == 0, …)`; a system where mounting fails cancels the test visibly. The
/// tmpfs is unmounted whatever `body` does, before its error is rethrown.
///
/// ```swift
/// try await onASmallTmpfs(workspace.file("small"), size: "512k") { mount in … }
/// ```
func onASmallTmpfs(_ path: String, size: String, _ body: (String) async throws -> Void) async throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let mounted = try await run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
    if mounted.status != 0 { try Test.cancel("cannot mount a tmpfs here (\(mounted.error.trimmingCharacters(in: .whitespacesAndNewlines)))") }
    let outcome: Result<Void, any Error>
    do {
        try await body(path)
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    // Work the body started may hold a file there a moment longer (a clean-up on a thread of its
    // own after a failure): "target is busy" is tried again until it is let go.
    var unmounted = try await run("/bin/umount", [path])
    if unmounted.status != 0 {
        try? await waitUntil(deadline: .seconds(30), every: .milliseconds(100)) {
            unmounted = try await run("/bin/umount", [path])
            return unmounted.status == 0
        }
    }
    #expect(unmounted.status == 0, "umount: \(unmounted.error)")
    try outcome.get()
}
