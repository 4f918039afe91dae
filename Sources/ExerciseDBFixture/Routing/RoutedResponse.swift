/// A routed request's response together with how the stats should count it.
///
/// ```swift
/// RoutedResponse(response: HTTPResponse(status: 404), kind: .other)
/// ```
struct RoutedResponse: Sendable {
    var response: HTTPResponse
    var kind: StatsRecorder.Kind
}
