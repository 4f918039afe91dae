/// The v1 list envelope: `{success, metadata{totalExercises, totalPages, currentPage,
/// previousPage, nextPage}, data}`, with `previousPage`/`nextPage` as full URLs or `null`.
///
/// ```swift
/// let page = V1Page(exercises: all, page: request, mediaBase: "http://127.0.0.1:8080",
///                   listURL: "http://127.0.0.1:8080/api/v1/exercises")
/// ```
struct V1Page: Encodable {
    struct Metadata: Encodable {
        let totalExercises: Int
        let totalPages: Int
        let currentPage: Int
        let previousPage: String?
        let nextPage: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(totalExercises, forKey: .totalExercises)
            try container.encode(totalPages, forKey: .totalPages)
            try container.encode(currentPage, forKey: .currentPage)
            try container.encode(previousPage, forKey: .previousPage)  // null, not absent
            try container.encode(nextPage, forKey: .nextPage)
        }

        private enum CodingKeys: String, CodingKey {
            case totalExercises, totalPages, currentPage, previousPage, nextPage
        }
    }

    let success = true
    let metadata: Metadata
    let data: [V1Exercise]

    /// The page of `exercises` that `page` selects, their `gifUrl`s pointing at `mediaBase`.
    /// `reportedTotal`, when given, is what `totalExercises` says instead of the true count (the
    /// links still follow the true count, as a server with a stale or broken count would).
    init(exercises: [V1Exercise], page: PageRequest, mediaBase: String, listURL: String, reportedTotal: Int? = nil) {
        let total = exercises.count
        let range = page.range(in: total)
        func link(offset: Int) -> String { "\(listURL)?offset=\(offset)&limit=\(page.limit)" }
        let said = reportedTotal ?? total
        metadata = Metadata(
            totalExercises: said,
            totalPages: said < 0 ? said : (said / page.limit + (said % page.limit == 0 ? 0 : 1)),
            currentPage: page.offset / page.limit + 1,
            previousPage: page.offset > 0 ? link(offset: max(0, page.offset - page.limit)) : nil,
            nextPage: page.offset + page.limit < total ? link(offset: page.offset + page.limit) : nil)
        data = exercises[range].map { exercise in
            var exercise = exercise
            exercise.gifUrl = mediaBase + V1Exercise.mediaPath(for: exercise.exerciseId)
            return exercise
        }
    }

    private enum CodingKeys: String, CodingKey { case success, metadata, data }
}
