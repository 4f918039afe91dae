import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack

@Suite("Catalog")
struct CatalogTests {
    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test func untrustedIdsAreRefusedAndDuplicatesReported() throws {
        let records = try json("""
        [{"id": "0001", "name": "a", "bodyPart": "chest"},
         {"id": "../../etc/passwd", "name": "evil"},
         {"id": "0002", "name": "b"},
         {"id": "0001", "name": "a again"},
         {"name": "no id"},
         {"id": "ok_id-3", "name": "c"},
         {"id": "\\u00e9\\u0000x", "name": "odd"},
         {"id": "0004"},
         42]
        """).arrayValue!
        let catalog = CatalogPager.assemble(records: records, pages: 1) {
            RapidAPICatalogSource.normalise($0, base: "https://api.example", resolution: 360)
        }
        #expect(catalog.exercises.map(\.id) == ["0001", "0002", "ok_id-3"])
        #expect(catalog.exercises.first?.name == "a", "the first record of a duplicate id is kept")
        #expect(catalog.exercises.first?.imageURL == "https://api.example/image?exerciseId=0001&resolution=360")
        #expect(catalog.duplicateIDs == ["0001"])
        #expect(catalog.rejected.map(\.reason) == ["invalid-id (must match ^[A-Za-z0-9_-]{1,64}$)", "missing-id",
                                                   "invalid-id (must match ^[A-Za-z0-9_-]{1,64}$)", "missing-name", "not-an-object"])
        #expect(catalog.rejected[2].id == "\\u{E9}\\u{0}x", "untrusted ids are shown escaped")
    }

    @Test func v1RecordsNeedAnHTTPGifURL() throws {
        let records = try json("""
        [{"exerciseId": "trmte8s", "name": "a", "gifUrl": "https://static.example/media/trmte8s.gif", "bodyParts": ["waist"]},
         {"exerciseId": "abc", "name": "b", "gifUrl": "file:///etc/passwd"},
         {"exerciseId": "def", "name": "c"}]
        """).arrayValue!
        let catalog = CatalogPager.assemble(records: records, pages: 1, normalise: V1CatalogSource.normalise)
        #expect(catalog.exercises.map(\.id) == ["trmte8s"])
        #expect(catalog.exercises.first?.bodyParts == ["waist"])
        #expect(catalog.rejected.map(\.reason) == ["missing-or-invalid-gifUrl", "missing-or-invalid-gifUrl"])
    }

    @Test func selectorsMatchCaseInsensitivelyOnEveryListedField() {
        let exercise = Exercise(id: "0001", name: "x", bodyParts: ["Chest"], equipment: ["dumbbell"], targets: ["pectorals"],
                                imageURL: "", raw: .null)
        #expect(Selector().matches(exercise))
        #expect(Selector(bodyParts: ["chest"]).matches(exercise))
        #expect(Selector(bodyParts: ["chest", "back"], equipment: ["DUMBBELL"]).matches(exercise))
        #expect(!Selector(bodyParts: ["chest"], equipment: ["barbell"]).matches(exercise))
        #expect(Selector(ids: ["0001"]).matches(exercise))
        #expect(!Selector(ids: ["0002"]).matches(exercise))
    }

    @Test func aDowngradedResolutionIsFlaggedInTheReport() async throws {
        let server = try startFixture(count: 4) { $0.planMaxResolution = 180 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server).replacingOccurrences(of: "resolution: 180", with: "resolution: 360")
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.resolutionMismatches.count == 4)
        #expect(report.resolutionMismatches.first?.requested == 360)
        #expect(report.resolutionMismatches.first?.width == server.configuration.gifDimension)
    }

    @Test func theCommandLineRefusesABadManifestWithStatusTwoAndTheKeyPath() throws {
        let workspace = try TemporaryDirectory()
        let path = try workspace.write("""
        source:
          kind: exercisedb-v1
          base_url: http://127.0.0.1:9/api/v1
        packs:
          - name: a
          - name: b
            selector:
              bodyPart: 7
              muscles: [x]
        """, to: "bad.yaml")
        let result = try run(productPath("gifpack"), ["build", "--manifest", path, "--out", workspace.file("dist")])
        #expect(result.status == 2)
        #expect(result.error.contains("packs[1].selector.muscles"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        let missingKey = try workspace.write("source:\n  kind: exercisedb-rapidapi\n  api_key_env: GIFPACK_UNSET_VARIABLE_X\n", to: "key.yaml")
        let keyResult = try run(productPath("gifpack"), ["build", "--manifest", missingKey])
        #expect(keyResult.status == 2)
        #expect(keyResult.error.contains("source.api_key_env") && keyResult.error.contains("GIFPACK_UNSET_VARIABLE_X"))
    }
}
