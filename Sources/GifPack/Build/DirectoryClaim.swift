import Foundation

/// Makes sure a build writes only into directories that are gifpack's: empty (or absent) ones,
/// which it marks, or ones it marked before.
///
/// A directory gifpack creates or adopts gets a marker file (`.gifpack-output` in the output
/// directory, `.gifpack-cache` in the cache) before anything else is written in it (every release
/// has). Anything else that is not empty — `/`, a home directory, a project folder, gifpack's
/// files without the marker — is refused before a single file is written, created or deleted in
/// it (exit 2).
///
/// ```swift
/// try DirectoryClaim.claim("dist", roles: [.output])        // creates dist/.gifpack-output
/// try DirectoryClaim.claim("/", roles: [.cache])            // throws: not empty, not gifpack's
/// ```
package enum DirectoryClaim {
    /// What a directory is used for; one directory may be both.
    package enum Role: String, Sendable, CaseIterable {
        case output, cache

        /// The marker file gifpack keeps in a directory it owns in this role.
        package var marker: String { ".gifpack-\(rawValue)" }
    }

    /// Checks `path` for `roles` without changing anything: returns true when it is already marked.
    @discardableResult
    package static func check(_ path: String, roles: Set<Role>) throws(DirectoryClaimError) -> Bool {
        // Absent, or not a directory: creating it says what is wrong, with the real errno.
        guard FileSystem.isDirectory(path) else { return false }
        let names: Set<String>
        do { names = Set(try FileSystem.list(path)) } catch {
            throw .unreadable(path: path, roles: roles, reason: error.description)
        }
        if roles.allSatisfy({ names.contains($0.marker) }) { return true }
        if names.isEmpty { return false }
        // Ours in another role already.
        guard Role.allCases.contains(where: { names.contains($0.marker) }) else {
            throw .foreign(path: path, roles: roles, examples: names.sorted().prefix(3).map { $0 })
        }
        return false
    }

    /// Creates `path` if needed and marks it for `roles`. Throws ``DirectoryClaimError`` when it is
    /// not gifpack's, and the ``FileSystemError`` (with its errno) when it cannot be made or marked.
    package static func claim(_ path: String, roles: Set<Role>) throws {
        if try check(path, roles: roles) { return }
        try FileSystem.createDirectory(path)
        for role in roles.sorted(by: { $0.rawValue < $1.rawValue }) where !FileSystem.exists("\(path)/\(role.marker)") {
            let text = "This directory is a gifpack \(role.rawValue) directory. gifpack refuses to write into a non-empty directory without this file.\n"
            try FileSystem.writeAtomically(Array(text.utf8), to: "\(path)/\(role.marker)")
        }
    }
}

/// Why a directory was refused as the output or cache directory (exit 2).
package enum DirectoryClaimError: Error, Sendable, Equatable, CustomStringConvertible {
    case foreign(path: String, roles: Set<DirectoryClaim.Role>, examples: [String])
    case unreadable(path: String, roles: Set<DirectoryClaim.Role>, reason: String)

    /// True when the output directory is the one refused (no report may be written into it).
    package var concernsOutput: Bool {
        switch self {
        case .foreign(_, let roles, _), .unreadable(_, let roles, _): roles.contains(.output)
        }
    }

    package var description: String {
        func role(_ roles: Set<DirectoryClaim.Role>) -> String {
            roles.map(\.rawValue).sorted().joined(separator: " and ") + " directory"
        }
        switch self {
        case .foreign(let path, let roles, let examples):
            let markers = roles.map(\.marker).sorted().joined(separator: ", ")
            return "refusing \(path) as the \(role(roles)): it is not empty (\(examples.joined(separator: ", ")), …) "
                + "and not a gifpack directory (no \(markers)); give an empty or new directory"
        case .unreadable(let path, let roles, let reason):
            return "cannot use \(path) as the \(role(roles)): \(reason)"
        }
    }
}
