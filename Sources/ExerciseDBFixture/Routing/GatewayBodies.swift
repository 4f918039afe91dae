import Foundation

/// The JSON bodies the RapidAPI gateway and the ExerciseDB API answer errors with, word for word
/// where they are known, so clients are tested against the real texts.
///
/// ```swift
/// GatewayBodies.forStatus(401)   // {"message":"Invalid API key. Go to https://docs.rapidapi.com/docs/keys for more info."}
/// ```
enum GatewayBodies {
    static let invalidKey = json(["message": "Invalid API key. Go to https://docs.rapidapi.com/docs/keys for more info."])
    static let notSubscribed = json(["message": "You are not subscribed to this API."])
    static let rateLimited = json([
        "message": "You have exceeded the rate limit per second for your plan, BASIC, by the API provider"
    ])
    static let monthlyQuotaExceeded = json([
        "message": "You have exceeded the MONTHLY quota for Requests on your current plan, BASIC. "
            + "Upgrade your plan at https://rapidapi.com/justin-WFnsXH_t6/api/exercisedb"
    ])
    static let unreachable = json([
        "message": "The API is unreachable, please contact the API provider",
        "info": "Your Client (working) ---> Gateway (working) ---> API (not working)"
    ])
    static let timedOut = json([
        "message": "The request to the API has timed out. Please try again later, or if the issue persists, "
            + "please contact the API provider",
        "info": "Your Client (working) ---> Gateway (working) ---> API (took too long to respond)"
    ])

    /// The body a fault or route answers `status` with.
    static func forStatus(_ status: Int) -> [UInt8] {
        switch status {
        case 401: invalidKey
        case 403: notSubscribed
        case 404: message("Exercise not found")
        case 422: message("Invalid request parameters")
        case 429: rateLimited
        case 502: unreachable
        case 504: timedOut
        default: message(HTTPResponse.reasonPhrase(for: status))
        }
    }

    static func message(_ text: String) -> [UInt8] { json(["message": text]) }

    static func json(_ fields: [String: String]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(fields)).map { [UInt8]($0) } ?? Array("{}".utf8)
    }
}
