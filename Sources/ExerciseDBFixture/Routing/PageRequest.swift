/// The `limit` and `offset` of a list request, with the real API's rules: `limit` defaults to
/// 10, is clamped to the page cap, and `limit=0` (which older API versions answered with
/// everything) gets a full capped page. Non-numeric or negative values are refused (422).
///
/// ```swift
/// let page = try PageRequest(query: ["limit": "500"], maxPageSize: 100)   // limit 100, offset 0
/// ```
struct PageRequest: Equatable {
    static let defaultLimit = 10

    /// A parameter that is not a non-negative integer; the message names it.
    struct Invalid: Error, Equatable {
        let message: String
    }

    let limit: Int
    let offset: Int

    init(query: [String: String], maxPageSize: Int) throws(Invalid) {
        func number(_ name: String) throws(Invalid) -> Int? {
            guard let text = query[name] else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw Invalid(message: "\(name) must be a non-negative integer, got \"\(text)\"")
            }
            return value
        }
        let requested = try number("limit") ?? PageRequest.defaultLimit
        limit = requested == 0 ? maxPageSize : min(requested, maxPageSize)
        offset = try number("offset") ?? 0
    }

    /// The indices of a list of `count` elements this page covers (empty past the end).
    func range(in count: Int) -> Range<Int> {
        let start = min(offset, count)
        return start..<min(count, start + limit)
    }
}
