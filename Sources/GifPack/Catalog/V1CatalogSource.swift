import Foundation

/// The open-source v1 shape: each page is an envelope `{success, metadata{…nextPage}, data[]}`;
/// each exercise carries its own `gifUrl`, which must be an http(s) URL.
struct V1CatalogSource: CatalogSource {
    let pager: CatalogPager

    func fetchCatalog() async throws(CatalogError) -> Catalog {
        try await pager.collect(
            expectedCount: pager.expectedCount,
            records: { json, url throws(CatalogError) in
                guard let items = json["data"]?.arrayValue else {
                    throw .unexpectedShape(url: url, detail: "expected an object with a \"data\" array")
                }
                if case .bool(false)? = json["success"] {
                    throw .unexpectedShape(url: url, detail: "the envelope says success: false")
                }
                let next = json["metadata"]?["nextPage"]
                let isLast = json["metadata"] != nil && (next == nil || next == .null)
                let total = try CatalogPager.count(json["metadata"]?["totalExercises"], field: "metadata.totalExercises", url: url)
                return CatalogPager.PageContent(items: items, isLast: isLast, total: total)
            }, normalise: Self.normalise)
    }

    /// One v1 record as an ``Exercise``, or why it was refused.
    static func normalise(_ record: JSONValue) -> Result<Exercise, CatalogRejectionReason> {
        guard case .object = record else { return .failure(.init(displayID: nil, reason: .notAnObject)) }
        let rawID = record["exerciseId"]?.stringValue
        guard let id = rawID, ExerciseID.isValid(id) else { return .failure(.invalidID(rawID)) }
        guard let name = record["name"]?.stringValue else {
            return .failure(.init(displayID: id, reason: .missingName))
        }
        guard let gifURL = record["gifUrl"]?.stringValue, let components = URLComponents(string: gifURL),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            components.host?.isEmpty == false
        else {
            return .failure(.init(displayID: id, reason: .missingOrInvalidGIFURL))
        }
        do {
            return .success(
                try Exercise(
                    id: id, name: name,
                    bodyParts: record["bodyParts"]?.stringList ?? [],
                    equipment: record["equipments"]?.stringList ?? [],
                    targets: record["targetMuscles"]?.stringList ?? [],
                    imageURL: gifURL, raw: record))
        } catch {
            return .failure(.init(displayID: id, reason: .unencodableRecord))
        }
    }
}
