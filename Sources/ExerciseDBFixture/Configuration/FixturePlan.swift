/// The RapidAPI plans as the image endpoint meets them: each serves resolutions up to its
/// ceiling, and a request above it is answered at the ceiling, silently, still 200
/// (`docs/exercisedb-api.md`: BASIC 180; PRO 180 and 360; ULTRA and MEGA all four).
///
/// ```swift
/// var configuration = FixtureConfiguration()
/// configuration.planMaxResolution = FixturePlan.basic.maxResolution   // every 360 request gets 180
/// ```
package enum FixturePlan: String, Sendable, CaseIterable {
    case basic = "BASIC"
    case pro = "PRO"
    case ultra = "ULTRA"
    case mega = "MEGA"

    /// The highest resolution the plan serves.
    package var maxResolution: Int {
        switch self {
        case .basic: 180
        case .pro: 360
        case .ultra, .mega: 1080
        }
    }
}
