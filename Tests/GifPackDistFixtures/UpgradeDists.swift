import ExerciseDBFixture
import Foundation
import GifPackFormat
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// A fixture server, builds of it in `workspace/dist`, and a web root `workspace/site` that
/// receives each build the way a release publishes one: pack files first, `index.json` last.
///
/// GIFs are 64 px with 3 to 5 frames (a few KB each), so frames are large next to HTTP headers
/// and a pack of 100 exercises is about a megabyte.
///
/// ```swift
/// let dists = try await UpgradeDist.make()
/// try dists.publish()                       // v1 on the site
/// dists.server.replaceGIF(id: id, with: gif)
/// try await dists.build(); try dists.publish()   // v2
/// ```
struct UpgradeDist {
    let server: FixtureServer
    let workspace: TemporaryDirectory
    /// The manifest's `packs:` section (YAML); empty: the one default pack.
    var packs = ""
    /// `source.resolutions` (renditions, format 1.3); nil: `resolution: 180` alone.
    var resolutions: [Int]?

    var dist: String { workspace.file("dist") }
    var site: String { workspace.file("site") }

    /// Starts the fixture (the exercises at `noGIF` positions of ``ids`` answer 404, so they are
    /// packed without a GIF) and builds v1 into `dist`.
    /// With `resolutions`, every GIF is drawn at each resolution's size (180 px at 180, as the API serves them).
    static func make(
        count: Int = 100, noGIF: [Int] = [], resolutions: [Int]? = nil,
        packs: (_ ids: [String]) -> String = { _ in "" }
    ) async throws -> UpgradeDist {
        let server = try startFixture(count: count) { configuration in
            configuration.gifDimension = resolutions == nil ? 64 : 180
            configuration.framesRange = resolutions == nil ? 3...5 : 2...3
        }
        var dists = UpgradeDist(server: server, workspace: try TemporaryDirectory())
        dists.resolutions = resolutions
        dists.packs = packs(dists.ids)
        for position in noGIF { server.setDefaultFault(.status(404), forExercise: dists.ids[position]) }
        try FileManager.default.createDirectory(atPath: dists.site + "/packs", withIntermediateDirectories: true)
        try await dists.build()
        return dists
    }

    /// Builds the fixture's current content into `dist` (every GIF fetched again).
    func build() async throws {
        // .partial: written, with the no-GIF exercises asked for.
        var manifest = rapidAPIManifest(server: server, packs: packs, fetch: "  refresh_after: 0", pageSize: 50)
        if let resolutions {
            manifest = manifest.replacingOccurrences(of: "resolution: 180", with: "resolutions: \(resolutions)")
        }
        try await makeDist(manifest: manifest, workspace: workspace, allowingPartial: true)
    }

    /// Copies the current build to the site: new pack files, then the index.
    func publish() throws {
        let files = FileManager.default
        for name in try files.contentsOfDirectory(atPath: dist + "/packs") where !files.fileExists(atPath: "\(site)/packs/\(name)") {
            try files.copyItem(atPath: "\(dist)/packs/\(name)", toPath: "\(site)/packs/\(name)")
        }
        // index.json, then its compressed copy, as gifpack publish writes them. nginx's validators are the
        // mtime (whole seconds) and the size: a replaced file gets a later second than the one it replaces.
        for name in ["index.json", "index.json.zst"] where files.fileExists(atPath: "\(dist)/\(name)") {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(dist)/\(name)"))
            let target = "\(site)/\(name)"
            let previous = try? Data(contentsOf: URL(fileURLWithPath: target))
            let previousTime = (try? files.attributesOfItem(atPath: target))?[.modificationDate] as? Date
            guard previous != bytes else { continue }
            try bytes.write(to: URL(fileURLWithPath: target), options: .atomic)
            if let previousTime {
                try files.setAttributes([.modificationDate: max(Date(), previousTime.addingTimeInterval(1))], ofItemAtPath: target)
            }
        }
    }

    /// The published index.
    func index() throws -> PackIndex { try readIndex(site + "/index.json") }

    var indexBytes: Int64 { Int64((try? fileBytes(site + "/index.json"))?.count ?? 0) }

    /// What the fixture serves for `id` now.
    func served(_ id: String) -> [UInt8] { server.catalog.gifBytes(id: id, resolution: 180) ?? [] }

    /// Exercise ids, sorted.
    var ids: [String] { server.catalog.exercises.map(\.id).sorted() }

    /// A GIF no exercise has, different for each seed.
    static func newGIF(seed: UInt64) throws -> [UInt8] {
        try GIFSynthesizer.animatedGIF(width: 64, height: 64, frames: 4, colors: 4, seed: 90_000 + seed)
    }
}

/// An ``UpgradeDist`` whose v1 is published on its site and served by nginx, the set-up of the
/// client's suites against a real web server:
///
/// ```swift
/// let webSite = try await UpgradeDist.servedByNginx(count: 12)
/// defer { webSite.stop() }
/// let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
/// ```
struct ServedUpgradeDist {
    let dists: UpgradeDist
    let nginx: NginxServer
    /// The published index's URL.
    var url: String { nginx.baseURL + "/index.json" }

    /// Stops nginx, then the fixture server.
    func stop() {
        nginx.stop()
        dists.server.stop()
    }
}

extension UpgradeDist {
    /// ``make(count:noGIF:resolutions:packs:)``, published (by ``publish()``, or by `publishing`: a
    /// build of its own, then ``publish()``), and nginx started on the site with `nginx`'s options.
    static func servedByNginx(
        count: Int = 100, noGIF: [Int] = [], resolutions: [Int]? = nil,
        packs: (_ ids: [String]) -> String = { _ in "" },
        nginx: (inout NginxServer.Options) -> Void = { _ in },
        publishing: (UpgradeDist) async throws -> Void = { try $0.publish() }
    ) async throws -> ServedUpgradeDist {
        let dists = try await make(count: count, noGIF: noGIF, resolutions: resolutions, packs: packs)
        do {
            try await publishing(dists)
            var options = NginxServer.Options(root: dists.site)
            nginx(&options)
            return ServedUpgradeDist(dists: dists, nginx: try await NginxServer.start(options))
        } catch {
            dists.server.stop()
            throw error
        }
    }
}

/// Every regular file under a cache (through its link) with its bytes' SHA-256, the manifest's
/// generation-specific fields left as they are: equal lists mean byte-identical installs.
func cacheContents(_ cache: String) throws -> [String: String] {
    let root = URL(fileURLWithPath: cache).resolvingSymlinksInPath().path
    var contents: [String: String] = [:]
    for name in (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: "\(root)/\(name)", isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
        contents[name] = sha256Hex(try fileBytes("\(root)/\(name)"))
    }
    return contents
}
