/// One resolution's share of a build: the packs made at it and the exercises to fetch for them,
/// whose image URLs ask for it.
///
/// The first resolution's packs keep their manifest names (`all`: `packs[]` of the index, what a
/// 1.2 reader installs) and get posters; every other resolution's are `<pack>.<pixels>` (`all.360`,
/// `renditionPacks[]`), a name no manifest pack can have.
///
/// ```swift
/// let renditions = try RenditionPlan.all(for: manifest.source, plan: plan, catalog: catalog)
/// renditions.map(\.plan.entries.first?.spec.name)   // ["all", "all.360"]
/// ```
struct RenditionPlan: Sendable {
    let resolution: Resolution
    /// Whether this is the source's first resolution.
    let isFirst: Bool
    let plan: PackPlan

    /// The name of `pack`'s packs at a resolution other than the first.
    static func name(ofPack pack: String, at resolution: Resolution) -> String {
        resolution.pixels.map { "\(pack).\($0)" } ?? pack
    }

    /// Every resolution of `source` in its order, each with the packs that take it; a resolution no
    /// pack takes has no entries.
    static func all(for source: SourceSettings, plan: PackPlan, catalog: Catalog) throws -> [RenditionPlan] {
        try source.resolutions.enumerated().map { position, resolution in
            let template =
                position == 0 || source.kind != .rapidAPI
                ? nil : RapidAPICatalogSource.imageTemplate(for: source, resolution: resolution)
            return RenditionPlan(
                resolution: resolution, isFirst: position == 0,
                plan: try narrowed(plan, to: resolution, renamed: position > 0, template: template, catalog: catalog))
        }
    }

    private static func narrowed(
        _ plan: PackPlan, to resolution: Resolution, renamed: Bool, template: ImageURLTemplate?,
        catalog: Catalog
    ) throws -> PackPlan {
        let retemplated = { (list: ExerciseList) in template.map { list.atImageTemplate($0) } ?? list }
        let entries = plan.entries.filter { $0.spec.takes(resolution) }.map { entry in
            var entry = entry
            if renamed { entry.spec.name = name(ofPack: entry.spec.name, at: resolution) }
            entry.exercises = retemplated(entry.exercises)
            return entry
        }
        let wanted: ExerciseList
        if entries.count == plan.entries.count {
            wanted = retemplated(plan.wanted)
        } else if let whole = entries.first(where: { $0.exercises.count == catalog.exercises.count }) {
            wanted = whole.exercises
        } else if entries.count <= 1 {
            wanted = entries.first?.exercises ?? []
        } else {
            wanted = retemplated(try catalog.exercises.filtered { exercise in entries.contains { $0.spec.selector.matches(exercise) } })
        }
        return PackPlan(entries: entries, wanted: wanted)
    }
}
