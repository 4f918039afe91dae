import Foundation
@testable import GifPackClient
import Testing
import GifPackFormat
import GifPackIndexReader
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// The reader's side: a format 1.4 index, with a WebP rendition in
/// `formatPacks[]`, held to the rules every reader shares (`PackDescriptionCheck.indexProblems`),
/// and read by a client that does not ask for WebP exactly as a 1.3 client reads it: over loopback
/// HTTP it installs and serves the GIF packs and never requests a byte of a WebP pack.
@Suite("Client: a 1.4 index's rules, and the view of a client that knows only GIF", .ownThread, .timeLimit(.minutes(3)))
struct WebPIndexClientTests {
    /// What a client's load of the index in `directory` says: nil when it accepts it.
    static func loadProblem(_ directory: String) -> PackRejection? {
        do {
            _ = try PackIndexSource.loadFile(directory + "/index.json")
            return nil
        } catch {
            guard case .rejected(let rejection) = error else { return PackRejection(.unreadable, pack: "?", detail: "\(error)") }
            return rejection
        }
    }

    @Test(.computes) func everyRuleOfFormatPacksIsCheckedByTheSharedFunction() throws {
        let workspace = try TemporaryDirectory()
        let dist = try FormatDist.write(to: workspace.file("dist"), count: 4, noGIF: [2], gifStandsIn: [1])
        let original = dist.index
        #expect(
            PackDescriptionCheck.indexProblems(in: original, limits: .standard).isEmpty,
            "\(PackDescriptionCheck.indexProblems(in: original, limits: .standard))")
        #expect(Self.loadProblem(dist.directory) == nil)
        #expect(original.formatVersion == .withFormats && original.formatPacks?.first?.gifs.map(\.imageFormat).sorted { $0.rawValue < $1.rawValue } == [.gif, .webp, .webp])

        func changed(_ change: (inout PackIndex) -> Void) -> PackIndex {
            var index = original
            change(&index)
            return index
        }
        let webpAt = try #require(original.formatPacks?[0].gifs.firstIndex { $0.format == .webp })
        let gifAt = try #require(original.formatPacks?[0].gifs.firstIndex { $0.format == nil })
        let cases: [(String, PackRejection.Reason, PackIndex)] = [
            ("a format pack without its resolution in its name", .unsafeName, changed { $0.formatPacks![0].name = "all.webp" }),
            ("a format pack named for another resolution", .unsafeName, changed { $0.formatPacks![0].name = "all.360.webp" }),
            ("a format pack named for another format", .unsafeName, changed { $0.formatPacks![0].name = "all.180.gif" }),
            (
                "a format pack of a resolution the source lacks", .invalidNumber,
                changed {
                    $0.formatPacks![0].resolution = 360
                    $0.formatPacks![0].name = "all.360.webp"
                }
            ),
            ("a format pack without a resolution", .invalidNumber, changed { $0.formatPacks![0].resolution = nil }),
            ("a format pack without a format", .unsafeName, changed { $0.formatPacks![0].format = nil }),
            (
                "a format pack of format gif", .unsafeName,
                changed {
                    $0.formatPacks![0].format = .gif
                    $0.formatPacks![0].name = "all.180.gif"
                }
            ),
            (
                "a format pack with a posters pack", .unlistedEntry,
                changed {
                    $0.formatPacks![0].posters = PosterPackDescription(
                        name: "all.180.webp-posters", version: 1, file: "packs/p.tar.zst", bytes: 1, sha256: dist.gifPack.sha256, entryCount: 1,
                        uncompressedBytes: 1, contentDigest: dist.gifPack.sha256, sizes: [80],
                        catalog: EntryLocation(path: "catalog.json", size: 1, frameOffset: 0, frameLength: 1), posters: [])
                }
            ),
            (
                "a WebP entry at a GIF's path", .entryMismatch,
                changed {
                    let hash = $0.formatPacks![0].gifs[webpAt].sha256
                    $0.formatPacks![0].gifs[webpAt].location.path = "gifs/\(hash).gif"
                }
            ),
            (
                "a GIF entry at a WebP's path", .entryMismatch,
                changed {
                    let hash = $0.formatPacks![0].gifs[gifAt].sha256
                    $0.formatPacks![0].gifs[gifAt].location.path = "images/\(hash).webp"
                }
            ),
            ("an entry of a format no reader knows", .entryMismatch, changed { $0.formatPacks![0].gifs[webpAt].format = ImageFormat(rawValue: "avif") }),
            ("an entry that says gif", .entryMismatch, changed { $0.formatPacks![0].gifs[gifAt].format = .gif }),
            ("a packs[] pack with a format", .unsafeName, changed { $0.packs[0].format = .webp }),
            ("a packs[] GIF entry said to be a WebP", .entryMismatch, changed { $0.packs[0].gifs[0].format = .webp }),
            (
                "a format pack named like a packs[] pack", .duplicate,
                changed {
                    var copy = $0.packs[0]
                    copy.resolution = 180
                    copy.format = .webp
                    copy.name = "all"
                    $0.formatPacks!.append(copy)
                }
            )
        ]
        for (label, reason, index) in cases {
            let problems = PackDescriptionCheck.indexProblems(in: index, limits: .standard)
            #expect(problems.contains { $0.reason == reason }, "\(label): \(problems)")
            // The client's load refuses it by the same rules, with the index written out and read back.
            let directory = workspace.file("case-\(label.replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "[]", with: ""))")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try index.encoded().write(to: URL(fileURLWithPath: directory + "/index.json"))
            let refused = Self.loadProblem(directory)
            #expect(refused != nil && problems.contains { $0.reason == refused?.reason }, "\(label): the load says \(String(describing: refused))")
        }

        // A format pack of a format this reader does not know is left out, not refused.
        var unknown = original
        var avif = original.formatPacks![0]
        avif.format = ImageFormat(rawValue: "avif")
        avif.name = "all.180.avif"
        unknown.formatPacks!.insert(avif, at: 0)
        try dist.rewrite(unknown)
        #expect(Self.loadProblem(dist.directory) == nil)
        #expect(try PackIndexSource.loadFile(dist.directory + "/index.json").formatPacks?.map(\.name) == ["all.180.webp"])
    }

    @Test func aClientThatKnowsOnlyGIFInstallsTheGIFPacksAndNeverRequestsAWebPPack() async throws {
        let workspace = try TemporaryDirectory()
        let dist = try FormatDist.write(to: workspace.file("dist"), count: 5, noGIF: [3], gifStandsIn: [1])
        let server = try ClientStaticFileServer(root: dist.directory)
        defer { server.stop() }
        let url = server.baseURL + "/index.json"
        let webpFile = "/" + dist.webpPack.file

        // The installer, as a 1.3 client: the GIF pack only, its GIFs installed.
        let installer = PackInstaller(cacheDirectory: workspace.file("installed"))
        let report = try await installer.install(from: PackIndexSource(url))
        #expect(report.packs.map(\.name) == ["all"])
        for id in dist.ids {
            let path = "\(installer.cacheDirectory)/\(id).gif"
            if let gif = dist.gifs[id] ?? nil {
                #expect(try fileBytes(path) == gif.bytes, "\(id)")
            } else {
                #expect(!FileManager.default.fileExists(atPath: path))
            }
        }
        #expect(!DirectoryListing.names(URL(fileURLWithPath: installer.cacheDirectory).resolvingSymlinksInPath().path).contains { $0.hasSuffix(".webp") })

        // The lazy cache and the loader by default: GIF bytes by range from the GIF pack.
        let lazy = LazyGIFCache(directory: workspace.file("lazy"), indexURL: url)
        let loader = try GIFLoader(indexURL: try #require(URL(string: url)), cacheFolder: URL(fileURLWithPath: workspace.file("loader"), isDirectory: true))
        for id in dist.ids {
            let gif = dist.gifs[id] ?? nil
            #expect(try await lazy.gif(forExercise: id) == (gif.map { .gif(bytes: $0.bytes, fromCache: false) } ?? .noGIF), "\(id)")
            let loaded = try await loader.gif(for: id)
            #expect(loaded.map { [UInt8]($0.data) } == gif?.bytes, "\(id)")
        }
        _ = try await loader.refresh()

        let requests = server.requests
        #expect(!requests.contains { $0.path.contains(".webp") }, "\(requests.map(\.path))")
        #expect(Set(requests.map(\.path).filter { $0.hasPrefix("/packs/") }) == ["/\(dist.gifPack.file)"])
        #expect(requests.contains { $0.path == "/index.json" } && !requests.contains { $0.path == webpFile })
    }
}
