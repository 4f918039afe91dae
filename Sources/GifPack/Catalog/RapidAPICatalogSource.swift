import Foundation

/// The RapidAPI shape: each page is a bare JSON array of exercises; GIFs come from
/// `GET /image?exerciseId=<id>&resolution=<px>` with the key headers.
struct RapidAPICatalogSource: CatalogSource {
    let pager: CatalogPager

    func fetchCatalog() async throws(CatalogError) -> Catalog {
        let source = pager.source
        let template = Self.imageTemplate(for: source, resolution: source.resolution)
        return try await pager.collect(
            expectedCount: pager.expectedCount,
            records: { json, url throws(CatalogError) in
                guard let items = json.arrayValue else {
                    throw .unexpectedShape(url: url, detail: "expected a JSON array of exercises")
                }
                return CatalogPager.PageContent(items: items, isLast: false, total: nil)
            },
            normalise: { record in
                Self.normalise(record, template: template)
            })
    }

    /// `<base>/image?exerciseId=<id>&resolution=<px>` (no `resolution` parameter for the source's
    /// own size), made once for a whole catalog.
    static func imageTemplate(base: String, resolution: Resolution) -> ImageURLTemplate {
        ImageURLTemplate(prefix: "\(base)/image?exerciseId=", suffix: resolution.pixels.map { "&resolution=\($0)" } ?? "")
    }

    /// The template of `source`'s image URLs at `resolution`.
    static func imageTemplate(for source: SourceSettings, resolution: Resolution) -> ImageURLTemplate {
        let base = source.baseURL.hasSuffix("/") ? String(source.baseURL.dropLast()) : source.baseURL
        return imageTemplate(base: base, resolution: resolution)
    }

    static func normalise(_ record: JSONValue, base: String, resolution: Resolution) -> Result<Exercise, CatalogRejectionReason> {
        normalise(record, template: imageTemplate(base: base, resolution: resolution))
    }

    /// One RapidAPI record as an ``Exercise``, or why it was refused.
    static func normalise(_ record: JSONValue, template: ImageURLTemplate) -> Result<Exercise, CatalogRejectionReason> {
        guard case .object = record else { return .failure(.init(displayID: nil, reason: .notAnObject)) }
        let rawID = record["id"]?.stringValue
        guard let id = rawID, ExerciseID.isValid(id) else { return .failure(.invalidID(rawID)) }
        guard let name = record["name"]?.stringValue else {
            return .failure(.init(displayID: id, reason: .missingName))
        }
        do {
            return .success(
                try Exercise(
                    id: id, name: name,
                    bodyParts: record["bodyPart"]?.stringList ?? [],
                    equipment: record["equipment"]?.stringList ?? [],
                    targets: record["target"]?.stringList ?? [],
                    imageTemplate: template,
                    raw: record))
        } catch {
            return .failure(.init(displayID: id, reason: .unencodableRecord))
        }
    }
}
