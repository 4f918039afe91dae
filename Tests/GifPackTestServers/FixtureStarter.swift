import ExerciseDBFixture
@testable import GifPackTestSupport

/// Starts an in-process fixture server: the tests' one starter. `count` exercises (nil: the
/// fixture's default), requiring `apiKey` (the test key; nil: none), then `configure`'s changes.
func startFixture(
    count: Int? = nil, apiKey: String? = testAPIKey,
    configure: (inout FixtureConfiguration) -> Void = { _ in }
) throws -> FixtureServer {
    var configuration = FixtureConfiguration()
    if let count { configuration.exerciseCount = count }
    configuration.apiKey = apiKey
    configure(&configuration)
    let server = try FixtureServer(configuration)
    try server.start()
    return server
}
