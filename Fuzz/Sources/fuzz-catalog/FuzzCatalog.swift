import FuzzSupport
@testable import GifPack
@testable import GifPackFormat
@testable import GifPackJSON

/// A catalog list page as the API sends it: parsed with the page limits, read as a RapidAPI page
/// (a bare array) and as a v1 envelope (`{success, metadata{nextPage, totalExercises}, data[]}`),
/// every record normalised by both sources' rules, and the page assembled into a catalog (refusals,
/// duplicate ids, sorting). The page shape checks are the closures in RapidAPICatalogSource and
/// V1CatalogSource.fetchCatalog, restated here.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalog(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    guard let page = try? JSONParser.parse(bytes, limits: JSONLimits(maxDepth: JSONLimits.catalogPageDepth,
                                                                     maxBytes: 1 << 20)) else { return 0 }
    let template = RapidAPICatalogSource.imageTemplate(base: "http://127.0.0.1:9/api", resolution: .pixels(180))
    if let items = page.arrayValue {
        let normalised = items.map { RapidAPICatalogSource.normalise($0, template: template) }
        check(CatalogPager.assemble(normalised: normalised, pages: 1), normalised: normalised)
    }
    if let items = page["data"]?.arrayValue {
        _ = page["success"]
        let next = page["metadata"]?["nextPage"]
        _ = page["metadata"] != nil && (next == nil || next == .null)
        if case .integer(let count)? = page["metadata"]?["totalExercises"] { _ = Int(exactly: count) }
        let normalised = items.map(V1CatalogSource.normalise)
        check(CatalogPager.assemble(normalised: normalised, pages: 1), normalised: normalised)
    }
    return 0
}

private func check(_ catalog: Catalog, normalised: [Result<Exercise, CatalogRejectionReason>]) {
    var admittedIDs = Set<String>()
    let exercises: [Exercise]
    do {
        exercises = try catalog.exercises.array()
    } catch {
        Fuzz.require(false, "the catalog's own spool could not be read back: \(error)")
        return
    }
    for exercise in exercises {
        Fuzz.require(ExerciseID.isValid(exercise.id), "an exercise with an invalid id was admitted")
        Fuzz.require(admittedIDs.insert(exercise.id).inserted, "exercise id \(exercise.id) admitted twice")
        _ = exercise.imageURL
        _ = try? exercise.record.bytes()
    }
    // Every record is admitted, refused, or a later record of an id already admitted (duplicateIDs
    // names each such id once).
    let ids = normalised.compactMap { try? $0.get().id }
    var seen = Set<String>(), repeated = Set<String>()
    for id in ids where !seen.insert(id).inserted { repeated.insert(id) }
    Fuzz.require(catalog.exercises.count == seen.count, "\(seen.count) distinct ids became \(catalog.exercises.count) exercises")
    Fuzz.require(catalog.rejected.count == normalised.count - ids.count,
                 "\(normalised.count - ids.count) refused records became \(catalog.rejected.count) refusals")
    Fuzz.require(Set(catalog.duplicateIDs) == repeated && catalog.duplicateIDs.count == repeated.count,
                 "duplicates \(catalog.duplicateIDs), expected \(repeated.sorted())")
    for rejection in catalog.rejected { _ = "\(rejection)" }
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzCatalog) }
}
