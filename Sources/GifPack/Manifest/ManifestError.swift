/// Why a manifest was refused. Every case names the key path (`packs[1].selector.bodyPart`) so the
/// user can find the line to fix; exit status 2.
package enum ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case syntax(String)
    case unknownKey(path: String, allowed: [String])
    case missingKey(path: String)
    case wrongType(path: String, expected: String)
    case invalidValue(path: String, reason: String)
    case missingEnvironmentVariable(path: String, variable: String)

    package var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read manifest \(path): \(reason)"
        case .syntax(let detail): "manifest is not valid YAML or JSON: \(detail)"
        case .unknownKey(let path, let allowed):
            "unknown key \(path) (allowed here: \(allowed.joined(separator: ", ")))"
        case .missingKey(let path): "missing required key \(path)"
        case .wrongType(let path, let expected): "\(path) must be \(expected)"
        case .invalidValue(let path, let reason): "\(path): \(reason)"
        case .missingEnvironmentVariable(let path, let variable):
            "\(path) names the environment variable \(variable), which is not set or empty: export it with your API key"
        }
    }
}
